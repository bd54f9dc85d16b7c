// nnplug plugins: what the loader found, what it loaded and what it refused,
// the layer types each plugin provides with their attributes, and which
// file provides each device and communication backend.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "options.hpp"
#include "terminal_text.hpp"

namespace nnplug {
namespace {

// Layer types by the name of the plugin that registered them.
std::map<std::string, std::vector<nnp_layer_type>> layer_types_by_plugin() {
  const nnp_api& api = nnp::api();
  std::map<std::string, std::vector<nnp_layer_type>> by_plugin;
  for (int32_t i = 0; i < api.layer_type_count(); ++i) {
    nnp_layer_type type{};
    type.struct_size = sizeof(type);
    nnp::check(api.layer_type_info(i, &type));
    const char* plugin = nullptr;
    nnp::check(api.layer_type_plugin(i, &plugin));
    by_plugin[plugin].push_back(type);
  }
  return by_plugin;
}

void print_layer_types(const std::vector<nnp_layer_type>& types) {
  for (const nnp_layer_type& type : types) {
    std::cout << "         " << printable(type.name) << "  " << printable(type.doc) << "\n";
    for (int32_t a = 0; a < type.attr_count; ++a) {
      const nnp_attr_def& def = type.attrs[a];
      std::cout << "             " << printable(def.name) << ": " << nnp::nn::attr_type_name(def.type);
      if (def.required)
        std::cout << " (required)";
      else if (def.default_value)
        std::cout << " = " << printable(def.default_value);
      else
        std::cout << " (optional)";
      if (def.doc && *def.doc) std::cout << "  " << printable(def.doc);
      std::cout << "\n";
    }
  }
}

}  // namespace

int run_plugins(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::vector<std::string> extra;
  options.add_options()("load", po::value(&extra)->composing(), "also load this plugin file (repeatable)")(
      "core", "also list the core's built-in layer types");
  po::variables_map vm;
  if (auto stop = parse_options("plugins",
                                "Lists every plugin file found in the search folders (NNP_PLUGIN_PATH, then the "
                                "folder beside libnnp), loaded or refused with the reason, and the layer types "
                                "each plugin provides with their attributes.",
                                options, args, vm))
    return *stop;

  const nnp_api& api = nnp::api();
  // A path typed on the command line means the working directory's file;
  // the API takes absolute paths only. Refusals are listed below.
  for (const std::string& path : extra) api.load_plugin(std::filesystem::absolute(path).string().c_str());

  std::string search = nnp::plugin_search_path();
  std::cout << "search path: " << search << "\n";

  std::map<std::string, std::vector<nnp_layer_type>> layers = layer_types_by_plugin();
  int32_t count = api.plugin_count();
  int refused = 0;
  for (int32_t i = 0; i < count; ++i) {
    nnp_plugin_info info{};
    info.struct_size = sizeof(info);
    nnp::check(api.plugin_info(i, &info));
    if (info.loaded) {
      // Everything a plugin says is printed escaped: no control byte reaches
      // the terminal, no newline forges a line.
      std::cout << "loaded   " << printable(info.name) << " " << printable(info.version) << "  "
                << printable(info.path, 4096) << "\n";
      if (*info.description) std::cout << "         " << printable(info.description) << "\n";
      print_layer_types(layers[info.name]);
    } else {
      ++refused;
      std::cout << "refused  " << printable(info.path, 4096) << "\n         " << api.status_name(info.status) << ": "
                << printable(info.reason, 1000) << "\n";
    }
  }
  // Which file provides each backend: a name is only as good as its source.
  // Listed without starting any device runtime (`nnplug devices` does).
  std::cout << "backends:\n";
  for (const nnp_backend_info& info : nnp::backend_summaries()) {
    std::string name = printable(info.name);
    name.resize(std::max<size_t>(name.size() + 1, 10), ' ');
    std::cout << "  " << name << printable(info.plugin_path, 4096) << "\n";
    if (info.struct_size >= NNP_BACKEND_INFO_SIZE_1_24 && info.missing_kernels != 0)
      std::cout << "            lacks " << nnp::kernel_slots_text(info.missing_kernels)
                << ": those ops run on cpu, operands copied\n";
    if (info.flags & NNP_BACKEND_COMPILES_GRAPHS)
      std::cout << "            compiles graphs: graph mode gives it the nodes it claims\n";
  }
  // Communication backends (collectives) and the device backends they serve.
  std::cout << "communication backends:\n";
  for (int32_t i = 0; i < api.comm_count(); ++i) {
    nnp_comm_info info{};
    info.struct_size = sizeof(info);
    nnp::check(api.comm_summary(i, &info));
    std::string name = printable(info.name);
    name.resize(std::max<size_t>(name.size() + 1, 10), ' ');
    std::cout << "  " << name << printable(info.plugin_path, 4096) << "  (moves " << printable(info.backends)
              << " tensors)\n";
  }
  if (vm.count("core")) {
    std::cout << "core layer types:\n";
    print_layer_types(layers["core"]);
  } else {
    std::cout << "core: " << layers["core"].size() << " built-in layer types (--core lists them)\n";
  }
  std::cout << count - refused << " loaded, " << refused << " refused\n";
  return 0;
}

}  // namespace nnplug
