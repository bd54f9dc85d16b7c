// What the test backends built on the reference kernels share: their memory
// (malloc) and a device description naming what each one is.
#pragma once

#include <nnp/plugin.h>

#include <cstdlib>

namespace nnp::test_backend {

// The text device_info gives; set before registering.
inline const char* g_description = "";

inline nnp_status device_info(void*, int32_t, nnp_device_info* out) {
  out->description = g_description;
  out->total_memory = 0;
  out->score = 1;
  return NNP_OK;
}
inline nnp_status alloc(void*, int32_t, size_t bytes, void** out) {
  *out = bytes ? std::malloc(bytes) : nullptr;
  return bytes && !*out ? NNP_OUT_OF_MEMORY : NNP_OK;
}
inline void release(void*, int32_t, void* ptr, size_t) { std::free(ptr); }

// device_info, alloc and free of a backend whose table is otherwise filled.
inline void use_host_heap(nnp_backend& backend, const char* description) {
  g_description = description;
  backend.device_info = device_info;
  backend.alloc = alloc;
  backend.free = release;
}

}  // namespace nnp::test_backend
