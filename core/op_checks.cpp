#include "op_checks.hpp"

#include "device.hpp"
#include "dtype.hpp"
#include "error.hpp"

namespace nnp::core {

void fail_different_devices(const char* op, const Tensor& a, const Tensor& b) {
  fail(NNP_DEVICE_MISMATCH, op, ": tensors are on different devices, ", device_name(a.device), " and ",
       device_name(b.device), " (shapes ", format_dims(a.shape), " and ", format_dims(b.shape),
       "); move one with to(device)");
}

void fail_different_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  fail(NNP_DTYPE_MISMATCH, op, ": dtypes ", dtype_name(a.dtype), " and ", dtype_name(b.dtype), " differ (shapes ",
       format_dims(a.shape), " and ", format_dims(b.shape), "); convert one with to(dtype)");
}

void check_computes_unary(const Tensor& t, nnp_unary_op unary, const char* op) {
  const BackendRecord& backend = t.backend();
  if (backend.computes_unary(unary)) return;
  if (!backend.knows_1_7())
    fail(NNP_UNIMPLEMENTED, op, ": backend '", backend.name(),
         "' predates ABI 1.7, which added this op; move the tensor to cpu, or rebuild the backend against ABI 1.7");
  fail(NNP_UNIMPLEMENTED, op, ": backend '", backend.name(),
       "' does not declare this op among its unary_ops (nnp_backend, ABI 1.16); move the tensor to cpu");
}

void check_floating(const char* op, const Tensor& t) {
  if (!is_floating(t.dtype))
    fail(NNP_DTYPE_MISMATCH, op, ": needs a floating-point tensor but got ", dtype_name(t.dtype), " of shape ",
         format_dims(t.shape), "; convert it with to(dtype)");
}

Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b) {
  Dims out;
  out.ndim = a.ndim > b.ndim ? a.ndim : b.ndim;
  for (int32_t i = 0; i < out.ndim; ++i) {
    int32_t ia = a.ndim - out.ndim + i, ib = b.ndim - out.ndim + i;
    int64_t sa = ia >= 0 ? a.d[ia] : 1, sb = ib >= 0 ? b.d[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(NNP_SHAPE_MISMATCH, op, ": shapes ", format_dims(a), " and ", format_dims(b),
           " cannot be broadcast (dimension ", i - out.ndim, ": ", sa, " vs ", sb, ")");
    out.d[i] = sa == 1 ? sb : sa;
  }
  return out;
}

nnp_view broadcast_view(const Tensor& t, const Dims& out_shape) {
  nnp_view v{};
  v.data = t.data();
  v.dtype = t.dtype;
  v.ndim = out_shape.ndim;
  int32_t lead = out_shape.ndim - t.shape.ndim;
  for (int32_t i = 0; i < out_shape.ndim; ++i) {
    v.shape[i] = out_shape.d[i];
    int32_t src = i - lead;
    v.strides[i] = (src < 0 || t.shape.d[src] == 1) ? 0 : t.strides.d[src];
  }
  return v;
}

void coalesce(nnp_view* const* views, int count) {
  const int32_t ndim = views[0]->ndim;
  if (ndim <= 1) return;
  // Walk from the innermost dimension outwards; a dimension folds into the
  // kept one inside it when every view steps over it contiguously. Size-1
  // dimensions are dropped.
  int64_t shape[NNP_MAX_DIMS];
  int64_t strides[4][NNP_MAX_DIMS];
  int32_t out = ndim - 1;
  shape[out] = views[0]->shape[ndim - 1];
  for (int k = 0; k < count; ++k) strides[k][out] = views[k]->strides[ndim - 1];
  for (int32_t i = ndim - 2; i >= 0; --i) {
    const int64_t size = views[0]->shape[i];
    if (size == 1) continue;
    if (shape[out] == 1) {  // the kept dimension is trivial: take this one's place
      shape[out] = size;
      for (int k = 0; k < count; ++k) strides[k][out] = views[k]->strides[i];
      continue;
    }
    bool contiguous = true;
    for (int k = 0; k < count; ++k)
      if (views[k]->strides[i] != strides[k][out] * shape[out]) contiguous = false;
    if (contiguous) {
      shape[out] *= size;
      continue;
    }
    --out;
    shape[out] = size;
    for (int k = 0; k < count; ++k) strides[k][out] = views[k]->strides[i];
  }
  const int32_t kept = ndim - out;
  for (int k = 0; k < count; ++k) {
    nnp_view& v = *views[k];
    v.ndim = kept;
    for (int32_t i = 0; i < NNP_MAX_DIMS; ++i) {
      v.shape[i] = i < kept ? shape[out + i] : 0;
      v.strides[i] = i < kept ? strides[k][out + i] : 0;
    }
  }
}

}  // namespace nnp::core
