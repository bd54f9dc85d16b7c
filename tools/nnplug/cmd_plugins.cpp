// nnplug plugins: what the loader found, what it loaded and what it refused.
#include <iostream>
#include <nnp/nnp.hpp>
#include <string>

#include "options.hpp"

namespace nnplug {

int run_plugins(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::vector<std::string> extra;
  options.add_options()("load", po::value(&extra)->composing(), "also load this plugin file (repeatable)");
  po::variables_map vm;
  if (auto stop = parse_options("plugins",
                                "Lists every plugin file found in the search folders (NNP_PLUGIN_PATH, then the "
                                "folder beside libnnp), loaded or refused with the reason.",
                                options, args, vm))
    return *stop;

  const nnp_api& api = nnp::api();
  for (const std::string& path : extra) api.load_plugin(path.c_str());  // refusals are listed below

  size_t needed = 0;
  nnp::check(api.plugin_search_path(nullptr, 0, &needed));
  std::string search(needed, '\0');
  nnp::check(api.plugin_search_path(&search[0], search.size(), &needed));
  search.resize(needed - 1);
  std::cout << "search path: " << search << "\n";

  int32_t count = api.plugin_count();
  int refused = 0;
  for (int32_t i = 0; i < count; ++i) {
    nnp_plugin_info info{};
    info.struct_size = sizeof(info);
    nnp::check(api.plugin_info(i, &info));
    if (info.loaded) {
      std::cout << "loaded   " << info.name << " " << info.version << "  " << info.path << "\n";
    } else {
      ++refused;
      std::cout << "refused  " << info.path << "\n         " << api.status_name(info.status) << ": " << info.reason
                << "\n";
    }
  }
  std::cout << "backends:";
  for (const nnp_backend_info& info : nnp::backends()) std::cout << " " << info.name;
  std::cout << "\n" << count - refused << " loaded, " << refused << " refused\n";
  return 0;
}

}  // namespace nnplug
