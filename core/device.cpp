#include "device.hpp"

#include <cstdlib>
#include <cstring>

#include "error.hpp"
#include "plugin_registry.hpp"

namespace nnp::core {
namespace {

std::string loaded_backend_names(const PluginRegistry& registry) {
  std::string names;
  for (int32_t i = 0; i < registry.backend_count(); ++i) {
    if (!names.empty()) names += ", ";
    names += registry.backend(i).name();
  }
  return names.empty() ? "none" : names;
}

std::string folders_searched(const PluginRegistry& registry) {
  std::string list;
  for (const std::string& folder : registry.search_folders()) list += (list.empty() ? "" : ", ") + folder;
  return list;
}

[[noreturn]] void fail_missing_backend(const std::string& requested, const std::string& backend) {
  PluginRegistry& registry = PluginRegistry::instance();
  if (registry.find_backend("cpu") == nullptr)
    fail(NNP_NOT_FOUND, "device '", requested,
         "': no CPU backend is loaded (backends loaded: ", loaded_backend_names(registry),
         "; folders searched: ", folders_searched(registry),
         "). Build or install the backends, or point NNP_PLUGIN_PATH at their folder; `nnplug plugins` "
         "shows what was refused and why");
  fail(NNP_NOT_FOUND, "device '", requested, "': no backend named '", backend,
       "' is loaded (loaded: ", loaded_backend_names(registry), "); `nnplug plugins` shows refused plugins");
}

}  // namespace

nnp_device parse_device(const char* name) {
  if (name == nullptr) fail(NNP_INVALID_ARGUMENT, "device name is NULL");
  PluginRegistry& registry = PluginRegistry::instance();
  registry.discover();
  std::string text = name;
  if (text == "auto") {
    const BackendRecord* best = nullptr;
    for (int32_t i = 0; i < registry.backend_count(); ++i) {
      const BackendRecord& candidate = registry.backend(i);
      if (candidate.device_count() > 0 && (!best || candidate.table().score > best->table().score)) best = &candidate;
    }
    if (best == nullptr) fail_missing_backend(text, "cpu");
    return nnp_device{best->id(), 0};
  }
  std::string backend_name = text;
  int64_t index = 0;
  if (size_t colon = text.find(':'); colon != std::string::npos) {
    backend_name = text.substr(0, colon);
    std::string digits = text.substr(colon + 1);
    char* end = nullptr;
    index = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || index < 0 || digits[0] == '-' || digits[0] == '+')
      fail(NNP_INVALID_ARGUMENT, "device '", text,
           "': expected 'backend' or 'backend:index' with index >= 0, or 'auto'");
  }
  if (backend_name.empty())
    fail(NNP_INVALID_ARGUMENT, "device '", text, "': the backend name is empty (examples: cpu, cuda:0, auto)");
  const BackendRecord* backend = registry.find_backend(backend_name);
  if (backend == nullptr) fail_missing_backend(text, backend_name);
  int32_t count = backend->device_count();
  if (index >= count) {
    if (count == 0) {
      std::string reason = backend->unavailable_reason();
      fail(NNP_NOT_FOUND, "device '", text, "': backend '", backend_name, "' has no usable device",
           reason.empty() ? "" : " (", reason, reason.empty() ? "" : ")");
    }
    fail(NNP_NOT_FOUND, "device '", text, "': backend '", backend_name, "' has ", count, " device(s), indices 0 to ",
         count - 1);
  }
  return nnp_device{backend->id(), static_cast<int32_t>(index)};
}

std::string device_name(nnp_device device) {
  const BackendRecord& backend = PluginRegistry::instance().backend(device.backend);
  return backend.name() + ":" + std::to_string(device.index);
}

void check_device(const char* what, nnp_device device) {
  PluginRegistry& registry = PluginRegistry::instance();
  if (device.backend < 0 || device.backend >= registry.backend_count())
    fail(NNP_INVALID_ARGUMENT, what, ": device {backend ", device.backend, ", index ", device.index,
         "} is not a loaded backend; obtain devices with device_parse");
  const BackendRecord& backend = registry.backend(device.backend);
  if (device.index < 0 || device.index >= backend.device_count())
    fail(NNP_NOT_FOUND, what, ": device ", backend.name(), ":", device.index, " does not exist (backend '",
         backend.name(), "' has ", backend.device_count(), " device(s))");
}

}  // namespace nnp::core
