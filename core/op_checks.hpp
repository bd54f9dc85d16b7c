// Argument checks and view preparation shared by the op files.
#pragma once

#include <nnp/plugin.h>

#include "error.hpp"
#include "tensor.hpp"

namespace nnp::core {

// Inline checks, out-of-line failures: every op runs them.
[[noreturn]] void fail_different_devices(const char* op, const Tensor& a, const Tensor& b);
[[noreturn]] void fail_different_dtypes(const char* op, const Tensor& a, const Tensor& b);
inline bool same_device(const Tensor& a, const Tensor& b) {
  return a.device.backend == b.device.backend && a.device.index == b.device.index;
}
inline void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (!same_device(a, b)) fail_different_devices(op, a, b);
}
inline void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype) fail_different_dtypes(op, a, b);
}
// Throws NNP_DTYPE_MISMATCH unless t is floating point.
void check_floating(const char* op, const Tensor& t);
// The backend's unary kernel computes `unary` (declared, nnp_backend 1.16),
// else NNP_UNIMPLEMENTED naming the op and the backend.
void check_computes_unary(const Tensor& t, nnp_unary_op unary, const char* op);

// The NumPy broadcast of two shapes, or a message naming both.
Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b);
// t seen with out_shape (right-aligned; broadcast dimensions get stride 0).
nnp_view broadcast_view(const Tensor& t, const Dims& out_shape);

// Merges dimensions that are contiguous across every view, so kernels walk
// fewer, longer rows. All views must share ndim and shape.
void coalesce(nnp_view* const* views, int count);

// Calls a backend kernel and turns its failure into an Error.
inline void run_kernel(const Tensor& owner, const char* op, nnp_status status) {
  if (status != NNP_OK) check_plugin_status(status, owner.backend().name().c_str(), op);
}

// A weight packed by its backend once (conv2d_pack, gemm_pack: ABI 1.21):
// pack(NULL, &bytes) asks the size, pack(&view, &bytes) writes a new u8
// tensor of that size on w's device. Null where the backend has no packed
// form (bytes 0). Called in a plan's making, not as an op of its own.
template <typename Pack>
TensorRef packed_by_backend(const Tensor& w, const char* op, Pack pack) {
  int64_t bytes = 0;
  run_kernel(w, op, pack(nullptr, &bytes));
  if (bytes <= 0) return {};
  Dims shape;
  shape.ndim = 1;
  shape.d[0] = bytes;
  TensorRef packed = make_tensor_like(shape, NNP_U8, w);
  const nnp_view view = kernel_view(*packed);
  run_kernel(w, op, pack(&view, &bytes));
  return packed;
}

}  // namespace nnp::core
