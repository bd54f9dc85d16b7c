// The reference backend plugin: one device in plain host memory.
#include <nnp/host_backend.h>

#include <cstdlib>

#include "reference_kernels.hpp"

namespace nnp::reference {
namespace {

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

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static const nnp_backend backend = [] {
    nnp_backend b;
    nnp_host_backend_init(&b, "reference", 10, kernel_table());
    b.dtypes = NNP_DTYPES_1_17;  // declared (ABI 1.16): every dtype through u64 (1.17), every unary op through round
    b.unary_ops = NNP_UNARY_OPS_1_7;
    b.device_info = device_info;
    b.alloc = alloc;
    b.free = release;
    return b;
  }();
  return api->register_backend(host, &backend);
}

}  // namespace
}  // namespace nnp::reference

NNP_PLUGIN("nnplug.reference", NNP_PLUGIN_VERSION, "the reference backend: plain loops, the numerical oracle",
           nnp::reference::init)
