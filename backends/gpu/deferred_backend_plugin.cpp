// The plugin the core discovers for a GPU backend (cuda, rocm): a table of
// forwarding functions and nothing else, so discovery, `nnplug plugins` and
// every CPU-only program pay nothing for a GPU plugin in the folder. The real
// backend is the device library (backends/gpu built with its runtime: cudart
// and cuBLAS, or HIP), a plugin of its own kept in ../devices/ beside the
// plugin folder, where discovery does not look. It is opened the first time
// the core asks how many devices there are, and its own init registers its
// table here instead of with the core. A device library that cannot be
// opened leaves the backend with 0 devices and says why.
//
// Compiled once per backend with:
//   NNP_DEFERRED_NAME     the backend's name ("cuda")
//   NNP_DEFERRED_SCORE    its score for "auto", the same as the device library's
//   NNP_DEFERRED_LIBRARY  the device library's file name
//   NNP_DEFERRED_PLUGIN   the device library's plugin name ("nnplug.cuda")
#include <nnp/plugin.h>

#include <cstring>
#include <mutex>
#include <string>

#include "../library_beside.hpp"
#include "gpu_kernel_slots.hpp"

namespace nnp::deferred {
namespace {

const nnp_api* g_api = nullptr;

// The device library once opened (library_beside.hpp): its backend table,
// with its kernel table, or why there is none.
struct DeviceLibrary : beside::OpenedLibrary {
  std::once_flag once;
  nnp_api proxy{};  // the core's table, but register_backend keeps the table here
} g_library;

const nnp_kernels& forwarding_table();  // below: what this plugin registers

// Every kernel slot this plugin forwards must be there, and every one it
// leaves NULL must be NULL there too: the core reads NULL as "not offered".
std::string mismatch(const nnp_backend& b, const nnp_kernels& k) {
#define NNP_CHECK_SLOT(slot)                                       \
  if ((k.slot == nullptr) != (forwarding_table().slot == nullptr)) \
    return std::string("kernel slot '" #slot "' is ") + (k.slot ? "offered" : "missing");
  NNP_KERNELS_REQUIRED_SLOTS(NNP_CHECK_SLOT)
  NNP_KERNELS_OPTIONAL_SLOTS(NNP_CHECK_SLOT)
#undef NNP_CHECK_SLOT
  if (!b.unavailable_reason || !b.stream || !b.event_record || !b.event_elapsed_us || !b.event_release)
    return "an optional backend slot this plugin forwards is missing";
  if (std::strcmp(b.name, NNP_DEFERRED_NAME) != 0) return std::string("it registers backend '") + b.name + "'";
  return "";
}

void open_library() {
  beside::open_library(reinterpret_cast<const void*>(&open_library), NNP_DEFERRED_LIBRARY, "the device library",
                       NNP_DEFERRED_PLUGIN, g_api, g_library.proxy, g_library);
  if (g_library.loaded) {
    if (std::string why = mismatch(g_library.backend, g_library.kernels); !why.empty()) {
      g_library.loaded = false;
      g_library.reason = "the device library " + g_library.path + " does not match its plugin: " + why +
                         " (reinstall nnplug)";
    }
  }
  if (!g_library.loaded) g_library.reason = NNP_DEFERRED_NAME ": " + g_library.reason;
}

// The device library, opened on first call; NULL (error set) when it
// cannot be: the core asks nothing of a backend with 0 devices, so this is
// a defence, not a path.
const DeviceLibrary* library() {
  std::call_once(g_library.once, open_library);
  if (g_library.loaded) return &g_library;
  g_api->set_error(NNP_DEVICE_ERROR, g_library.reason.c_str());
  return nullptr;
}

// ---- the backend table: each slot forwards with the library's state ----

int32_t device_count(void*) {
  const DeviceLibrary* lib = library();
  return lib ? lib->backend.device_count(lib->backend.state) : 0;
}

const char* unavailable_reason(void*) {
  const DeviceLibrary* lib = library();
  return lib ? lib->backend.unavailable_reason(lib->backend.state) : g_library.reason.c_str();
}

void* stream(void*, int32_t device) {
  const DeviceLibrary* lib = library();
  return lib ? lib->backend.stream(lib->backend.state, device) : nullptr;
}

void release(void*, int32_t device, void* ptr, size_t bytes) {
  if (const DeviceLibrary* lib = library()) lib->backend.free(lib->backend.state, device, ptr, bytes);
}

void event_release(void*, int32_t device, void* event) {
  if (const DeviceLibrary* lib = library()) lib->backend.event_release(lib->backend.state, device, event);
}

// A backend slot (void* state, Args...) -> nnp_status.
template <typename Fn, Fn nnp_backend::*Slot>
struct ForwardBackend;
template <typename... Args, nnp_status (*nnp_backend::*Slot)(void*, Args...)>
struct ForwardBackend<nnp_status (*)(void*, Args...), Slot> {
  static nnp_status call(void*, Args... args) {
    const DeviceLibrary* lib = library();
    return lib ? (lib->backend.*Slot)(lib->backend.state, args...) : NNP_DEVICE_ERROR;
  }
};

// A kernel slot (const nnp_kernel_ctx*, Args...) -> nnp_status: the context
// the core made names this plugin's state; the library's kernels want theirs.
template <typename Fn, Fn nnp_kernels::*Slot>
struct ForwardKernel;
template <typename... Args, nnp_status (*nnp_kernels::*Slot)(const nnp_kernel_ctx*, Args...)>
struct ForwardKernel<nnp_status (*)(const nnp_kernel_ctx*, Args...), Slot> {
  static nnp_status call(const nnp_kernel_ctx* ctx, Args... args) {
    const DeviceLibrary* lib = library();
    if (lib == nullptr) return NNP_DEVICE_ERROR;
    nnp_kernel_ctx own{sizeof(nnp_kernel_ctx), lib->backend.state, ctx->device, ctx->stream};
    return (lib->kernels.*Slot)(&own, args...);
  }
};

#define NNP_FORWARD_BACKEND(slot) ForwardBackend<decltype(nnp_backend::slot), &nnp_backend::slot>::call
#define NNP_FORWARD_KERNEL(slot) k.slot = ForwardKernel<decltype(nnp_kernels::slot), &nnp_kernels::slot>::call;

nnp_kernels forwarding_kernels() {
  nnp_kernels k{};
  k.struct_size = sizeof(nnp_kernels);
  NNP_GPU_KERNEL_SLOTS(NNP_FORWARD_KERNEL)
  return k;
}

const nnp_kernels& forwarding_table() {
  static const nnp_kernels table = forwarding_kernels();
  return table;
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static nnp_backend table{};
  table.struct_size = sizeof(nnp_backend);
  table.name = NNP_DEFERRED_NAME;
  table.score = NNP_DEFERRED_SCORE;
  table.autocast_dtype = NNP_F16;  // tensor cores' half type, PyTorch's CUDA default
  table.device_count = device_count;
  table.unavailable_reason = unavailable_reason;
  table.device_info = NNP_FORWARD_BACKEND(device_info);
  table.alloc = NNP_FORWARD_BACKEND(alloc);
  table.free = release;
  table.copy_from_host = NNP_FORWARD_BACKEND(copy_from_host);
  table.copy_to_host = NNP_FORWARD_BACKEND(copy_to_host);
  table.copy_on_device = NNP_FORWARD_BACKEND(copy_on_device);
  table.synchronize = NNP_FORWARD_BACKEND(synchronize);
  table.stream = stream;
  table.kernels = &forwarding_table();
  table.event_record = NNP_FORWARD_BACKEND(event_record);
  table.event_elapsed_us = NNP_FORWARD_BACKEND(event_elapsed_us);
  table.event_release = event_release;
  table.dtypes = NNP_DTYPES_1_7;  // the device library's (gpu_backend.cu declares the same)
  table.unary_ops = NNP_UNARY_OPS_1_7;
  return api->register_backend(host, &table);
}

}  // namespace
}  // namespace nnp::deferred

NNP_PLUGIN(NNP_DEFERRED_PLUGIN, NNP_PLUGIN_VERSION,
           "the " NNP_DEFERRED_NAME " backend; its device library (" NNP_DEFERRED_LIBRARY
           ") is opened on first device use",
           nnp::deferred::init)
