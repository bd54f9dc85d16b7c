// nnplug conformance: runs the backend conformance kit.
#include <filesystem>
#include <iostream>
#include <nnp/nnp.hpp>

#include "conformance_kit.hpp"
#include "options.hpp"

namespace nnplug {

int run_conformance(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string backend = "cpu";
  bool verbose = false;
  options.add_options()("backend,b", po::value(&backend)->default_value("cpu"),
                        "backend name (cpu, cuda, ...) or path to a backend plugin .so")(
      "verbose,v", po::bool_switch(&verbose), "print every case, not only the per-op summary and failures");
  po::variables_map vm;
  if (auto stop = parse_options("conformance",
                                "Runs every kernel of a backend on random inputs (dtypes, shapes, strides, "
                                "broadcasts) against the reference backend and prints a table.",
                                options, args, vm))
    return *stop;

  std::string device = backend;
  if (backend.find('/') != std::string::npos || backend.find(".so") != std::string::npos) {
    std::string path = std::filesystem::absolute(backend).string();
    const nnp_api& api = nnp::api();
    nnp::check(api.load_plugin(path.c_str()));
    // The plugin's backend is the one registered from this path.
    device.clear();
    for (const nnp_backend_info& info : nnp::backends())
      if (std::filesystem::equivalent(info.plugin_path, path)) device = info.name;
    if (device.empty()) {
      std::cerr << "nnplug conformance: " << path << " registered no backend\n";
      return 1;
    }
  }
  nnp::conformance::Report report = nnp::conformance::run(device);
  nnp::conformance::print(report, std::cout, verbose);
  return report.failed == 0 ? 0 : 1;
}

}  // namespace nnplug
