// The reference backend plugin: one device in plain host memory.
#include <nnp/plugin.h>

#include <cstdlib>
#include <cstring>

#include "reference_kernels.hpp"

namespace nnp::reference {
namespace {

int32_t device_count(void*) { return 1; }

nnp_status device_info(void*, int32_t, nnp_device_info* out) {
  out->description = "reference loops on the host (the numerical oracle)";
  out->total_memory = 0;
  out->score = 10;
  return NNP_OK;
}

nnp_status alloc(void*, int32_t, size_t bytes, void** out) {
  *out = bytes ? std::malloc(bytes) : nullptr;
  if (bytes && *out == nullptr) {
    g_api->set_error(NNP_OUT_OF_MEMORY, "reference: host allocation failed");
    return NNP_OUT_OF_MEMORY;
  }
  return NNP_OK;
}

void release(void*, int32_t, void* ptr, size_t) { std::free(ptr); }

nnp_status copy_bytes(void*, int32_t, void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return NNP_OK;
}

nnp_status synchronize(void*, int32_t) { return NNP_OK; }

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static const nnp_backend backend = [] {
    nnp_backend b{};
    b.struct_size = sizeof(nnp_backend);
    b.name = "reference";
    b.score = 10;
    b.flags = NNP_BACKEND_HOST_MEMORY;
    b.device_count = device_count;
    b.device_info = device_info;
    b.alloc = alloc;
    b.free = release;
    b.copy_from_host = copy_bytes;
    b.copy_to_host = copy_bytes;
    b.copy_on_device = copy_bytes;
    b.synchronize = synchronize;
    b.kernels = kernel_table();
    return b;
  }();
  return api->register_backend(host, &backend);
}

}  // namespace
}  // namespace nnp::reference

NNP_PLUGIN("nnplug.reference", NNP_PLUGIN_VERSION,
           "the reference backend: plain loops, the numerical oracle",
           nnp::reference::init)
