// matmul with PyTorch's rules: 1-D operands are promoted and the added
// dimension removed again; batch dimensions broadcast.
#include "dtype.hpp"
#include "error.hpp"
#include "op_checks.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core {

TensorRef compute::matmul(const Tensor& a, const Tensor& b) {
  check_same_device("matmul", a, b);
  check_same_dtype("matmul", a, b);
  check_floating("matmul", a);
  if (a.shape.ndim == 0 || b.shape.ndim == 0)
    fail(NNP_SHAPE_MISMATCH, "matmul: both arguments need at least 1 dimension, got shapes ", format_dims(a.shape),
         " and ", format_dims(b.shape));
  TensorRef a2 = a.shape.ndim == 1 ? unsqueeze(a, 0) : TensorRef::share(&a);
  TensorRef b2 = b.shape.ndim == 1 ? unsqueeze(b, 1) : TensorRef::share(&b);
  const Dims& sa = a2->shape;
  const Dims& sb = b2->shape;
  const int64_t m = sa.d[sa.ndim - 2], k = sa.d[sa.ndim - 1], kb = sb.d[sb.ndim - 2], n = sb.d[sb.ndim - 1];
  if (k != kb)
    fail(NNP_SHAPE_MISMATCH, "matmul: shapes ", format_dims(a.shape), " and ", format_dims(b.shape),
         " cannot be multiplied (inner dimensions ", k, " and ", kb, ")");

  Dims batch_a, batch_b;
  batch_a.ndim = sa.ndim - 2;
  batch_b.ndim = sb.ndim - 2;
  for (int32_t i = 0; i < batch_a.ndim; ++i) batch_a.d[i] = sa.d[i];
  for (int32_t i = 0; i < batch_b.ndim; ++i) batch_b.d[i] = sb.d[i];
  Dims batch = broadcast_shapes("matmul", batch_a, batch_b);
  if (batch.ndim + 2 > NNP_MAX_DIMS) fail(NNP_INVALID_ARGUMENT, "matmul: too many batch dimensions");

  Dims out_shape = batch, a_shape = batch, b_shape = batch;
  out_shape.ndim = a_shape.ndim = b_shape.ndim = batch.ndim + 2;
  a_shape.d[batch.ndim] = m;
  a_shape.d[batch.ndim + 1] = k;
  b_shape.d[batch.ndim] = k;
  b_shape.d[batch.ndim + 1] = n;
  out_shape.d[batch.ndim] = m;
  out_shape.d[batch.ndim + 1] = n;

  TensorRef out;
  if (k == 0) {  // empty sums are zeros; kernels never see empty operands
    out = core::full(out_shape, 0.0, a.dtype, a.device);
  } else {
    out = make_tensor_like(out_shape, a.dtype, a);
  }
  if (out->numel > 0 && k > 0) {
    nnp_view va = broadcast_view(*a2, a_shape), vb = broadcast_view(*b2, b_shape), vo = kernel_view(*out);
    run_kernel(a, "matmul", a.backend().kernels().gemm(&kernel_ctx(a), &va, &vb, &vo));
  }
  if (a.shape.ndim == 1) out = squeeze(*out, out->shape.ndim - 2, false);
  if (b.shape.ndim == 1) out = squeeze(*out, out->shape.ndim - 1, false);
  return out;
}

}  // namespace nnp::core
