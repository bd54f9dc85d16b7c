// Opening a plugin's heavy part on first use. A plugin that would map a big
// runtime at load (cudart and cuBLAS, HIP, oneDNN) keeps that part in a
// library of its own in lib/nnplug/devices, beside the plugin folder, where
// discovery does not look, and opens it the first time it is needed. The
// library is a plugin too (it exports nnp_plugin_entry and nothing else);
// its init is handed a copy of the core's table whose register_backend keeps
// the library's backend table for the opener instead of registering it.
#pragma once

#include <dlfcn.h>
#include <nnp/plugin.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace nnp::beside {

// A library opened by open_library: its backend and kernel tables, or why
// there are none.
struct OpenedLibrary {
  const nnp_api* api = nullptr;  // the core's, for errors
  bool loaded = false;
  std::string path;
  std::string reason;       // set when !loaded
  std::string description;  // the library's own one line
  nnp_backend backend{};
  nnp_kernels kernels{};
};

// The folder "devices" beside the plugin folder of the library that holds
// `anchor` (any function of the calling plugin): lib/nnplug/plugins ->
// lib/nnplug/devices, from the path the loader mapped it at.
inline std::string devices_folder(const void* anchor) {
  Dl_info info{};
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return "../devices";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "../devices";
  path.resize(slash);  // the plugin folder
  slash = path.rfind('/');
  return slash == std::string::npos ? "../devices" : path.substr(0, slash) + "/devices";
}

namespace detail {

// The library's init calls this instead of the core's register_backend;
// `host` is the OpenedLibrary the opener passed to init.
inline nnp_status keep_backend(nnp_plugin_host* host, const nnp_backend* backend) {
  auto* library = reinterpret_cast<OpenedLibrary*>(host);
  if (backend == nullptr || backend->struct_size < sizeof(nnp_backend) || backend->kernels == nullptr ||
      backend->kernels->struct_size < sizeof(nnp_kernels)) {
    library->api->set_error(NNP_ABI_MISMATCH, "its backend table is older than the plugin that opened it");
    return NNP_ABI_MISMATCH;
  }
  std::memcpy(&library->backend, backend, sizeof(nnp_backend));
  std::memcpy(&library->kernels, backend->kernels, sizeof(nnp_kernels));
  return NNP_OK;
}

}  // namespace detail

// Opens `file` in devices_folder(anchor) (`what` names it in messages: "the
// device library"), checks that it is the plugin
// `plugin_name` of this very version (NNP_PLUGIN_VERSION), and runs its init
// with `proxy`, a table the caller keeps until exit (filled here from `api`).
// Never closed: a runtime may keep threads and handlers until exit. On
// failure, out.reason names the file and what went wrong.
inline void open_library(const void* anchor, const char* file, const char* what, const char* plugin_name,
                         const nnp_api* api, nnp_api& proxy, OpenedLibrary& out) {
  out.api = api;
  out.path = devices_folder(anchor) + "/" + file;
  auto refuse = [&](const std::string& why) { out.reason = std::string(what) + " " + out.path + " " + why; };
  void* handle = dlopen(out.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return refuse(std::string("could not be opened: ") + (error ? error : "unknown error"));
  }
  auto entry = reinterpret_cast<nnp_plugin_entry_fn>(dlsym(handle, "nnp_plugin_entry"));
  const nnp_plugin_descriptor* descriptor = entry ? entry() : nullptr;
  if (descriptor == nullptr || descriptor->struct_size < sizeof(nnp_plugin_descriptor) ||
      descriptor->abi_major != NNP_ABI_MAJOR || std::strcmp(descriptor->name, plugin_name) != 0 ||
      std::strcmp(descriptor->version, NNP_PLUGIN_VERSION) != 0)
    return refuse(std::string("is not ") + plugin_name + " " NNP_PLUGIN_VERSION " (reinstall nnplug)");
  if (descriptor->description) out.description = descriptor->description;
  std::memcpy(&proxy, api, std::min(api->struct_size, sizeof(nnp_api)));
  proxy.struct_size = sizeof(nnp_api);
  proxy.register_backend = detail::keep_backend;
  if (descriptor->init(&proxy, reinterpret_cast<nnp_plugin_host*>(&out)) != NNP_OK || out.backend.struct_size == 0)
    return refuse(std::string("failed to start: ") + api->last_error());
  out.loaded = true;
}

}  // namespace nnp::beside
