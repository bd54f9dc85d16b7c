// cat, index_select, gather and scatter_add.
#include "dtype.hpp"
#include "error.hpp"
#include "op_checks.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core {
namespace {

// Index tensors are i64 on the kernel side; i32 indices are widened.
TensorRef as_index(const char* op, const Tensor& x, const Tensor& index) {
  check_same_device(op, x, index);
  if (index.dtype == NNP_I64) return TensorRef::share(&index);
  if (index.dtype == NNP_I32) return to(index, index.device, NNP_I64);
  fail(NNP_DTYPE_MISMATCH, op, ": index must be i64 (or i32), got ", dtype_name(index.dtype), " of shape ",
       format_dims(index.shape));
}

}  // namespace

TensorRef compute::cat(const Tensor* const* tensors, int32_t count, int64_t dim) {
  if (count <= 0 || tensors == nullptr) fail(NNP_INVALID_ARGUMENT, "cat: needs at least one tensor");
  for (int32_t i = 0; i < count; ++i)
    if (tensors[i] == nullptr) fail(NNP_INVALID_ARGUMENT, "cat: tensor ", i, " is NULL");
  const Tensor& first = *tensors[0];
  if (first.shape.ndim == 0) fail(NNP_INVALID_ARGUMENT, "cat: zero-dimensional tensor 0 cannot be concatenated");
  int32_t d = wrap_dim("cat", dim, first.shape.ndim);
  Dims shape = first.shape;
  shape.d[d] = 0;
  for (int32_t i = 0; i < count; ++i) {
    const Tensor& t = *tensors[i];
    check_same_device("cat", first, t);
    check_same_dtype("cat", first, t);
    bool same_rank = t.shape.ndim == first.shape.ndim;
    for (int32_t j = 0; same_rank && j < first.shape.ndim; ++j)
      if (j != d && t.shape.d[j] != first.shape.d[j]) same_rank = false;
    if (!same_rank)
      fail(NNP_SHAPE_MISMATCH, "cat: tensor ", i, " has shape ", format_dims(t.shape), " but tensor 0 has shape ",
           format_dims(first.shape), "; sizes must match except in dimension ", d);
    shape.d[d] += t.shape.d[d];
  }
  TensorRef out = make_tensor_like(shape, first.dtype, first);
  int64_t offset = 0;
  for (int32_t i = 0; i < count; ++i) {
    int64_t size = tensors[i]->shape.d[d];
    if (size == 0 || tensors[i]->numel == 0) {
      offset += size;
      continue;
    }
    TensorRef part = slice(*out, d, offset, offset + size, 1);
    copy_into(*part, *tensors[i]);
    offset += size;
  }
  return out;
}

TensorRef compute::index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  TensorRef idx = as_index("index_select", x, index);
  if (idx->shape.ndim > 1)
    fail(NNP_SHAPE_MISMATCH, "index_select: index must be 1-D, got shape ", format_dims(idx->shape));
  if (x.shape.ndim == 0) fail(NNP_INVALID_ARGUMENT, "index_select: x must have at least one dimension");
  int32_t d = wrap_dim("index_select", dim, x.shape.ndim);
  Dims shape = x.shape;
  shape.d[d] = idx->numel;
  TensorRef out = make_tensor_like(shape, x.dtype, x);
  if (out->numel == 0) return out;
  if (x.shape.d[d] == 0)
    fail(NNP_INVALID_ARGUMENT, "index_select: cannot select from dimension ", d, " of size 0 (shape ",
         format_dims(x.shape), ")");
  TensorRef flat = idx->shape.ndim == 0 ? unsqueeze(*idx, 0) : idx;
  nnp_view vx = kernel_view(x), vi = kernel_view(*flat), vo = kernel_view(*out);
  run_kernel(x, "index_select", x.backend().kernels().index_select(&kernel_ctx(x), &vx, d, &vi, &vo));
  return out;
}

TensorRef compute::gather(const Tensor& x, int64_t dim, const Tensor& index) {
  TensorRef idx = as_index("gather", x, index);
  int32_t d = wrap_dim("gather", dim, x.shape.ndim);
  if (idx->shape.ndim != x.shape.ndim)
    fail(NNP_SHAPE_MISMATCH, "gather: index shape ", format_dims(idx->shape), " and input shape ", format_dims(x.shape),
         " must have the same number of dimensions");
  for (int32_t i = 0; i < x.shape.ndim; ++i)
    if (i != d && idx->shape.d[i] > x.shape.d[i])
      fail(NNP_SHAPE_MISMATCH, "gather: index shape ", format_dims(idx->shape), " exceeds input shape ",
           format_dims(x.shape), " at dimension ", i);
  TensorRef out = make_tensor_like(idx->shape, x.dtype, x);
  if (out->numel == 0) return out;
  nnp_view vx = kernel_view(x), vi = kernel_view(*idx), vo = kernel_view(*out);
  run_kernel(x, "gather", x.backend().kernels().gather(&kernel_ctx(x), &vx, d, &vi, &vo));
  return out;
}

TensorRef compute::scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  TensorRef idx = as_index("scatter_add", x, index);
  check_same_device("scatter_add", x, src);
  check_same_dtype("scatter_add", x, src);
  if (x.dtype == NNP_BOOL) fail(NNP_DTYPE_MISMATCH, "scatter_add: not defined for bool tensors");
  int32_t d = wrap_dim("scatter_add", dim, x.shape.ndim);
  if (idx->shape.ndim != x.shape.ndim || src.shape.ndim != x.shape.ndim)
    fail(NNP_SHAPE_MISMATCH, "scatter_add: input ", format_dims(x.shape), ", index ", format_dims(idx->shape),
         " and src ", format_dims(src.shape), " must have the same number of dimensions");
  for (int32_t i = 0; i < x.shape.ndim; ++i)
    if (idx->shape.d[i] > src.shape.d[i] || (i != d && idx->shape.d[i] > x.shape.d[i]))
      fail(NNP_SHAPE_MISMATCH, "scatter_add: index shape ", format_dims(idx->shape), " exceeds src shape ",
           format_dims(src.shape), " or input shape ", format_dims(x.shape), " at dimension ", i);
  TensorRef out = clone(x);
  if (idx->numel == 0) return out;
  // src is read over the index's extent only.
  TensorRef src_part = make_view(src, idx->shape, src.strides, src.offset);
  nnp_view vo = kernel_view(*out), vi = kernel_view(*idx), vs = kernel_view(*src_part);
  run_kernel(x, "scatter_add", x.backend().kernels().scatter_add(&kernel_ctx(x), &vo, d, &vi, &vs));
  return out;
}

}  // namespace nnp::core
