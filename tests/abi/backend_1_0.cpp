// A backend as a vendor wrote it for the 1.0 SDK, rebuilt unchanged against
// today's headers: host memory, the twelve kernel slots of 1.0, and kernels
// that know the eight dtypes and fifteen unary ops 1.0 defined. It declares
// nothing (nnp_backend.dtypes and unary_ops stay 0, as in any source older
// than 1.16), so the core must treat it as a 1.0 backend: never hand it i8
// or round, and the conformance kit must find nothing to fail.
//
// Its arithmetic is the reference backend's; each slot first refuses a dtype
// or op it never knew, as the vendor's switch statements would (the core
// used to send them: 225 failed cases of the kit).
#include <nnp/plugin.h>

#include <cstdlib>
#include <cstring>

#include "../../backends/reference/reference_kernels.hpp"

namespace {

const nnp_api* g_api = nullptr;
const nnp_kernels* g_real = nullptr;

// NNP_F32 to NNP_BOOL: what 1.0's headers enumerated.
bool known(const nnp_view* v) { return v == nullptr || (v->dtype >= 0 && v->dtype <= 7); }
nnp_status unknown(const char* slot) {
  g_api->set_error(NNP_UNIMPLEMENTED, slot);
  return NNP_UNIMPLEMENTED;
}
#define NNP_1_0_GUARD(slot, ...)                                                                  \
  do {                                                                                            \
    const nnp_view* views[] = {__VA_ARGS__};                                                      \
    for (const nnp_view* v : views)                                                               \
      if (!known(v)) return unknown("backend_1_0: " slot ": a dtype the 1.0 headers do not have"); \
  } while (0)

nnp_status copy(const nnp_kernel_ctx* c, const nnp_view* src, const nnp_view* dst) {
  NNP_1_0_GUARD("copy", src, dst);
  return g_real->copy(c, src, dst);
}
nnp_status fill(const nnp_kernel_ctx* c, const nnp_view* dst, double value) {
  NNP_1_0_GUARD("fill", dst);
  return g_real->fill(c, dst, value);
}
nnp_status unary(const nnp_kernel_ctx* c, nnp_unary_op op, const nnp_view* x, const nnp_view* out) {
  NNP_1_0_GUARD("unary", x, out);
  if (op < 0 || op > 14) return unknown("backend_1_0: unary: an op the 1.0 headers do not have");  // neg to erf
  return g_real->unary(c, op, x, out);
}
nnp_status binary(const nnp_kernel_ctx* c, nnp_binary_op op, const nnp_view* a, const nnp_view* b,
                  const nnp_view* out) {
  NNP_1_0_GUARD("binary", a, b, out);
  return g_real->binary(c, op, a, b, out);
}
nnp_status where(const nnp_kernel_ctx* c, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                 const nnp_view* out) {
  NNP_1_0_GUARD("where", cond, a, b, out);
  return g_real->where(c, cond, a, b, out);
}
nnp_status reduce(const nnp_kernel_ctx* c, nnp_reduce_op op, const nnp_view* x, int32_t n, double correction,
                  const nnp_view* out) {
  NNP_1_0_GUARD("reduce", x, out);
  return g_real->reduce(c, op, x, n, correction, out);
}
nnp_status gemm(const nnp_kernel_ctx* c, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  NNP_1_0_GUARD("gemm", a, b, out);
  return g_real->gemm(c, a, b, out);
}
nnp_status softmax(const nnp_kernel_ctx* c, const nnp_view* x, int32_t dim, int32_t log, const nnp_view* out) {
  NNP_1_0_GUARD("softmax", x, out);
  return g_real->softmax(c, x, dim, log, out);
}
nnp_status index_select(const nnp_kernel_ctx* c, const nnp_view* x, int32_t dim, const nnp_view* index,
                        const nnp_view* out) {
  NNP_1_0_GUARD("index_select", x, index, out);
  return g_real->index_select(c, x, dim, index, out);
}
nnp_status gather(const nnp_kernel_ctx* c, const nnp_view* x, int32_t dim, const nnp_view* index,
                  const nnp_view* out) {
  NNP_1_0_GUARD("gather", x, index, out);
  return g_real->gather(c, x, dim, index, out);
}
nnp_status scatter_add(const nnp_kernel_ctx* c, const nnp_view* out, int32_t dim, const nnp_view* index,
                       const nnp_view* src) {
  NNP_1_0_GUARD("scatter_add", out, index, src);
  return g_real->scatter_add(c, out, dim, index, src);
}
nnp_status random(const nnp_kernel_ctx* c, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                  const nnp_view* out) {
  NNP_1_0_GUARD("random", out);
  return g_real->random(c, kind, seed, offset, a, b, out);
}

int32_t device_count(void*) { return 1; }
nnp_status device_info(void*, int32_t, nnp_device_info* out) {
  out->total_memory = 0;
  out->description = "a 1.0-era host backend";
  return NNP_OK;
}
nnp_status alloc(void*, int32_t, size_t bytes, void** out) {
  *out = std::malloc(bytes ? bytes : 1);
  if (*out) return NNP_OK;
  g_api->set_error(NNP_OUT_OF_MEMORY, "backend_1_0: out of host memory");
  return NNP_OUT_OF_MEMORY;
}
void release(void*, int32_t, void* ptr, size_t) { std::free(ptr); }
nnp_status copy_bytes(void*, int32_t, void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
  return NNP_OK;
}
nnp_status synchronize(void*, int32_t) { return NNP_OK; }

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  nnp::reference::g_api = api;
  g_real = nnp::reference::kernel_table();
  static nnp_kernels kernels;
  std::memset(&kernels, 0, sizeof kernels);
  kernels.struct_size = sizeof kernels;
  kernels.copy = copy;
  kernels.fill = fill;
  kernels.unary = unary;
  kernels.binary = binary;
  kernels.where = where;
  kernels.reduce = reduce;
  kernels.gemm = gemm;
  kernels.softmax = softmax;
  kernels.index_select = index_select;
  kernels.gather = gather;
  kernels.scatter_add = scatter_add;
  kernels.random = random;
  static nnp_backend backend;
  std::memset(&backend, 0, sizeof backend);
  backend.struct_size = sizeof backend;
  backend.name = "era10";
  backend.score = 1;
  backend.flags = NNP_BACKEND_HOST_MEMORY;
  backend.device_count = device_count;
  backend.device_info = device_info;
  backend.alloc = alloc;
  backend.free = release;
  backend.copy_from_host = copy_bytes;
  backend.copy_to_host = copy_bytes;
  backend.copy_on_device = copy_bytes;
  backend.synchronize = synchronize;
  backend.kernels = &kernels;
  return api->register_backend(host, &backend);
}

}  // namespace

NNP_PLUGIN("vendor.era10", "1.0.0", "a backend written for the 1.0 SDK, rebuilt against today's", init)
