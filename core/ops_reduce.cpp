// Reductions over any set of dimensions: the reduced dimensions are permuted
// to the end so a kernel only ever reduces trailing dimensions.
#include "dtype.hpp"
#include "error.hpp"
#include "op_checks.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core {
namespace {

const char* reduce_name(nnp_reduce_op op) {
  static const char* const names[NNP_REDUCE_COUNT] = {"sum", "mean", "max", "min", "argmax", "argmin", "var"};
  return op >= 0 && op < NNP_REDUCE_COUNT ? names[op] : nullptr;
}

}  // namespace

TensorRef compute::reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction) {
  const char* name = reduce_name(op);
  if (name == nullptr) fail(NNP_INVALID_ARGUMENT, "reduce: unknown op ", op);
  if (ndims < 0 || (ndims > 0 && dims == nullptr)) fail(NNP_INVALID_ARGUMENT, name, ": invalid dims list");
  const bool is_arg = op == NNP_REDUCE_ARGMAX || op == NNP_REDUCE_ARGMIN;
  if (is_arg && ndims > 1)
    fail(NNP_INVALID_ARGUMENT, name, ": takes one dimension or none (the flattened tensor), got ", ndims);

  // dtype rules follow PyTorch: integer sums widen to i64, mean and var need
  // floating point, bool has no order for arg reductions.
  if ((op == NNP_REDUCE_SUM) && !is_floating(x.dtype) && x.dtype != NNP_I64) {
    TensorRef widened = to(x, x.device, NNP_I64);
    return reduce(op, *widened, dims, ndims, keepdim, correction);
  }
  if (op == NNP_REDUCE_MEAN || op == NNP_REDUCE_VAR) check_floating(name, x);
  if (is_arg && x.dtype == NNP_BOOL) fail(NNP_DTYPE_MISMATCH, name, ": not defined for bool tensors");

  bool reduced[NNP_MAX_DIMS] = {};
  const int32_t ndim = x.shape.ndim;
  if (ndims == 0) {
    for (int32_t i = 0; i < ndim; ++i) reduced[i] = true;
  } else {
    for (int32_t i = 0; i < ndims; ++i) {
      int32_t d = wrap_dim(name, dims[i], ndim);
      if (ndim == 0) continue;
      if (reduced[d]) fail(NNP_INVALID_ARGUMENT, name, ": dimension ", d, " appears more than once in the list");
      reduced[d] = true;
    }
  }

  // Kept dimensions first, reduced ones last, each in their original order.
  nnp_view vx{};
  vx.data = x.data();
  vx.dtype = x.dtype;
  Dims out_shape, keep_shape;
  int64_t count = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    keep_shape.d[keep_shape.ndim++] = reduced[i] ? 1 : x.shape.d[i];
    if (reduced[i]) continue;
    vx.shape[vx.ndim] = x.shape.d[i];
    vx.strides[vx.ndim++] = x.strides.d[i];
    out_shape.d[out_shape.ndim++] = x.shape.d[i];
  }
  int32_t nreduce = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    if (!reduced[i]) continue;
    vx.shape[vx.ndim] = x.shape.d[i];
    vx.strides[vx.ndim++] = x.strides.d[i];
    count *= x.shape.d[i];
    ++nreduce;
  }
  if (count == 0 && op != NNP_REDUCE_SUM && op != NNP_REDUCE_MEAN && op != NNP_REDUCE_VAR)
    fail(NNP_INVALID_ARGUMENT, name, ": cannot reduce over zero elements (shape ", format_dims(x.shape),
         "); there is no identity for this reduction");

  TensorRef out = make_tensor_like(out_shape, is_arg ? NNP_I64 : x.dtype, x);
  if (out->numel > 0) {
    nnp_view vo = kernel_view(*out);
    run_kernel(x, name, x.backend().kernels().reduce(&kernel_ctx(x), op, &vx, nreduce, correction, &vo));
  }
  if (!keepdim) return out;
  return make_view(*out, keep_shape, contiguous_strides(keep_shape), out->offset);
}

}  // namespace nnp::core
