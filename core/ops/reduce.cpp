// Reductions over any set of dimensions (the reduced dimensions permuted to
// the end, so a kernel only ever reduces trailing dimensions), softmax and
// log_softmax along one dimension: compute, backward, descriptions.
#include "../autograd/functions.hpp"
#include "../capture/tape.hpp"
#include "../autograd/grad_math.hpp"
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

// The ops' own work (their compute), called by their descriptions below.
namespace nnp::core::compute {
TensorRef reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction);
TensorRef softmax(const Tensor& x, int64_t dim, bool log);
}  // namespace nnp::core::compute

namespace nnp::core {

TensorRef compute::reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction) {
  const char* name = dispatch::op_name(dispatch::reduce_id(op));
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
  if (capture::any_recording()) capture::note_view(x.storage);
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

namespace nnp::core {

TensorRef compute::softmax(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_floating(name, x);
  int32_t d = wrap_dim(name, dim, x.shape.ndim);
  if (x.shape.ndim == 0) {  // a scalar is its own single-element row
    TensorRef row = unsqueeze(x, 0);
    TensorRef result = softmax(*row, 0, log);
    return squeeze(*result, 0, false);
  }
  TensorRef out = make_tensor_like(x.shape, x.dtype, x);
  if (out->numel == 0) return out;
  nnp_view vx = kernel_view(x), vo = kernel_view(*out);
  run_kernel(x, name, x.backend().kernels().softmax(&kernel_ctx(x), &vx, d, log ? 1 : 0, &vo));
  return out;
}

}  // namespace nnp::core

namespace nnp::core::autograd {

using namespace math;

namespace {

// The shape of a keepdim=true result (reduced dimensions as 1).
Dims kept_shape(const Dims& shape, const int32_t* dims, int32_t ndims) {
  Dims out = shape;
  if (ndims == 0) {
    for (int32_t i = 0; i < out.ndim; ++i) out.d[i] = 1;
    return out;
  }
  for (int32_t i = 0; i < ndims; ++i) out.d[wrap_dim("reduce", dims[i], shape.ndim)] = shape.ndim ? 1 : out.d[0];
  return out;
}

// g reshaped to the keepdim shape then broadcast back to the input's shape.
TensorRef spread(const TensorRef& g, const Dims& keep, const Dims& input) {
  TensorRef kept = core::reshape(*g, keep.d, keep.ndim);
  return core::expand(*kept, input.d, input.ndim);
}

void reduce_backward(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, double correction,
                     TensorRef& out) {
  const Dims input = x.shape;
  const Dims keep = kept_shape(x.shape, dims, ndims);
  const double count = static_cast<double>(x.numel) / static_cast<double>(keep.numel() ? keep.numel() : 1);
  SavedTensor tx = share(x), result = saved_output(*out);
  FunctionNode::Backward backward;
  switch (op) {
    case NNP_REDUCE_SUM: backward = [keep, input](Grads& g) { return Grads{spread(g[0], keep, input)}; }; break;
    case NNP_REDUCE_MEAN:
      backward = [keep, input, count](Grads& g) { return Grads{div(spread(g[0], keep, input), scalar(g[0], count))}; };
      break;
    case NNP_REDUCE_MAX:
    case NNP_REDUCE_MIN:  // shared evenly among the elements equal to the extremum
      backward = [tx, result, keep, input](Grads& g) {
        TensorRef extremum = spread(result, keep, input);
        TensorRef hit = core::to(*cmp(NNP_BINARY_EQ, tx, extremum), tx->device, tx->dtype);
        int32_t all[NNP_MAX_DIMS], n = 0;
        for (int32_t i = 0; i < input.ndim; ++i)
          if (keep.d[i] == 1 && input.d[i] != 1) all[n++] = i;
        TensorRef ties = n ? core::reduce(NNP_REDUCE_SUM, *hit, all, n, true, 0) : hit;
        return Grads{div(mul(spread(g[0], keep, input), hit), ties)};
      };
      break;
    case NNP_REDUCE_VAR:  // 2 (x - mean) / (N - correction)
      backward = [tx, keep, input, count, correction](Grads& g) {
        int32_t all[NNP_MAX_DIMS], n = 0;
        for (int32_t i = 0; i < input.ndim; ++i)
          if (keep.d[i] == 1 && input.d[i] != 1) all[n++] = i;
        TensorRef mean = n ? core::reduce(NNP_REDUCE_MEAN, *tx, all, n, true, 0) : tx;
        TensorRef centered = sub(tx, mean);
        return Grads{mul(spread(g[0], keep, input), mul(centered, scalar(tx, 2.0 / (count - correction))))};
      };
      break;
    default: return;
  }
  record(dispatch::schema(dispatch::reduce_id(op)).backward, {&x}, {out.get()}, std::move(backward));
}

void softmax_backward(const Tensor& x, int64_t dim, bool log, TensorRef& out) {
  const int32_t d = x.shape.ndim ? wrap_dim("softmax", dim, x.shape.ndim) : 0;
  SavedTensor result = saved_output(*out);
  if (log) {  // g - exp(out) * sum(g)
    record(dispatch::schema(dispatch::OpId::LOG_SOFTMAX).backward, {&x}, {out.get()}, [result, d](Grads& g) {
      TensorRef total = core::reduce(NNP_REDUCE_SUM, *g[0], &d, result->shape.ndim ? 1 : 0, true, 0);
      return Grads{sub(g[0], mul(un(NNP_UNARY_EXP, result), total))};
    });
  } else {  // out * (g - sum(g * out))
    record(dispatch::schema(dispatch::OpId::SOFTMAX).backward, {&x}, {out.get()}, [result, d](Grads& g) {
      TensorRef total = core::reduce(NNP_REDUCE_SUM, *mul(g[0], result), &d, result->shape.ndim ? 1 : 0, true, 0);
      return Grads{mul(result, sub(g[0], total))};
    });
  }
}

struct ReduceOp {
  nnp_reduce_op op;
  const Tensor* in[1];
  const int32_t* dims;
  int32_t ndims;
  bool keepdim;
  double correction;
  dispatch::OpId id() const { return dispatch::reduce_id(op); }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::reduce(op, *in[0], dims, ndims, keepdim, correction); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_reduce(g, op, *in[0], dims, ndims, keepdim, correction, *out);
  }
  void differentiate(TensorRef& out) const { reduce_backward(op, *in[0], dims, ndims, correction, out); }
};

struct SoftmaxOp {
  const Tensor* in[1];
  int64_t dim;
  bool log;
  dispatch::OpId id() const { return log ? dispatch::OpId::LOG_SOFTMAX : dispatch::OpId::SOFTMAX; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::softmax(*in[0], dim, log); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_softmax(g, *in[0], dim, log, *out); }
  void differentiate(TensorRef& out) const { softmax_backward(*in[0], dim, log, out); }
};

}  // namespace

TensorRef reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction) {
  return dispatch::dispatch(ReduceOp{op, {&x}, dims, ndims, keepdim, correction}, dispatch::Face::PUBLIC);
}
TensorRef softmax(const Tensor& x, int64_t dim, bool log) {
  return dispatch::dispatch(SoftmaxOp{{&x}, dim, log}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core::autograd

namespace nnp::core {

TensorRef reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction) {
  return dispatch::dispatch(autograd::ReduceOp{op, {&x}, dims, ndims, keepdim, correction}, dispatch::Face::INTERNAL);
}
TensorRef softmax(const Tensor& x, int64_t dim, bool log) {
  return dispatch::dispatch(autograd::SoftmaxOp{{&x}, dim, log}, dispatch::Face::INTERNAL);
}

}  // namespace nnp::core
