// nnplug devices: every backend, its devices, or why it has none; and
// whether each communication backend can work here.
#include <iomanip>
#include <iostream>
#include <nnp/nnp.hpp>

#include "options.hpp"
#include "terminal_text.hpp"

namespace nnplug {

int run_devices(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  po::variables_map vm;
  if (auto stop = parse_options("devices", "Lists the devices of every loaded backend; 'auto' picks the highest score.",
                                options, args, vm))
    return *stop;

  const nnp_api& api = nnp::api();
  if (nnp::devices().empty()) {
    nnp::Device probe("cpu");  // throws the loader's explanation
  }
  std::cout << std::left << std::setw(14) << "device" << std::setw(8) << "score"
            << "description\n";
  std::vector<nnp_backend_info> all = nnp::backends();
  for (int32_t b = 0; b < static_cast<int32_t>(all.size()); ++b) {
    const nnp_backend_info& info = all[static_cast<size_t>(b)];
    if (info.device_count == 0) {
      std::cout << std::setw(14) << printable(info.name) << std::setw(8) << info.score << "(no devices"
                << (*info.unavailable_reason ? ": " + printable(info.unavailable_reason) : std::string()) << ")\n";
      continue;
    }
    for (int32_t i = 0; i < info.device_count; ++i) {
      nnp::Device device(nnp_device{b, i});
      nnp_device_info dinfo{};
      dinfo.struct_size = sizeof(dinfo);
      nnp::check(api.device_info(device.raw(), &dinfo));
      // A description may carry a path and a reason (the cpu backend's,
      // when its oneDNN library is missing) and the cpu backend's tier and
      // kernel forms: 1000 characters, still bounded.
      std::cout << std::setw(14) << printable(device.name()) << std::setw(8) << dinfo.score
                << printable(dinfo.description ? dinfo.description : "", 1000);
      if (dinfo.total_memory) std::cout << ", " << dinfo.total_memory / (1024 * 1024) << " MiB";
      std::cout << "\n";
    }
  }
  std::cout << "auto -> " << nnp::Device("auto").name() << "\n";
  // Whether each communication backend can form groups here (which may
  // open its runtime, as counting a GPU backend's devices does).
  for (int32_t i = 0; i < api.comm_count(); ++i) {
    nnp_comm_info info{};
    info.struct_size = sizeof(info);
    nnp::check(api.comm_info(i, &info));
    std::cout << "communication backend " << printable(info.name) << " (" << printable(info.backends) << "): "
              << (info.unavailable_reason ? "unavailable here: " + printable(info.unavailable_reason)
                                          : std::string("available"))
              << "\n";
  }
  return 0;
}

}  // namespace nnplug
