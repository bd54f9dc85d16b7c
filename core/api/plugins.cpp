// Adapters: plugins, backends and devices.
#include <string>

#include "../device.hpp"
#include "../plugin_registry.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

// Discovery runs once, on the first call that needs what it finds.
PluginRegistry& discovered() {
  PluginRegistry& registry = PluginRegistry::instance();
  registry.discover();
  return registry;
}

}  // namespace

nnp_status load_plugin(const char* path) {
  return guard([&] { PluginRegistry::instance().load(path_arg(path, "load_plugin")); });
}
int32_t plugin_count() {
  int32_t count = 0;
  guard([&] { count = discovered().plugin_count(); });
  return count;
}
nnp_status plugin_info(int32_t i, nnp_plugin_info* info) {
  return guard([&] { write_info(&info_arg(info, "plugin_info"), discovered().plugin(i).info()); });
}
int32_t backend_count() {
  int32_t count = 0;
  guard([&] { count = discovered().backend_count(); });
  return count;
}
nnp_status backend_info(int32_t i, nnp_backend_info* info) {
  return guard([&] { write_info(&info_arg(info, "backend_info"), discovered().backend(i).info()); });
}
nnp_status backend_summary(int32_t i, nnp_backend_info* info) {
  return guard([&] { write_info(&info_arg(info, "backend_summary"), discovered().backend(i).summary()); });
}
nnp_status plugin_search_path(char* buf, size_t size, size_t* needed) {
  return guard([&] { detail::write_string(PluginRegistry::instance().search_path(), buf, size, needed); });
}
nnp_status device_parse(const char* name, nnp_device* out) {
  return guard([&] {
    nnp_device& device = out_arg(out, "device_parse");
    device = parse_device(name);
  });
}
nnp_status device_name(nnp_device device, char* buf, size_t size, size_t* needed) {
  return guard([&] {
    check_device("device_name", device);
    detail::write_string(core::device_name(device), buf, size, needed);
  });
}
nnp_status device_info(nnp_device device, nnp_device_info* info) {
  return guard([&] {
    info_arg(info, "device_info");
    check_device("device_info", device);
    write_info(info, backend_of(device).device_info(device.index));
  });
}
nnp_status synchronize(nnp_device device) {
  return guard([&] {
    check_device("synchronize", device);
    backend_of(device).synchronize(device.index);
  });
}
nnp_status device_stream(nnp_device device, void** out) {
  return guard([&] {
    void*& stream = out_arg(out, "device_stream");
    check_device("device_stream", device);
    stream = backend_of(device).context(device.index).stream;
  });
}
nnp_status register_backend(nnp_plugin_host* host, const nnp_backend* backend) {
  return PluginRegistry::register_backend(host, backend);
}

}  // namespace nnp::core::api
