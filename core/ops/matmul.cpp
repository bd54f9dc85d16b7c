// matmul with PyTorch's rules (1-D operands promoted and the added
// dimension removed again; batch dimensions broadcast), its backward, and
// its description: the public face folds a batch of rows into one GEMM.
#include "../autograd/functions.hpp"
#include "../autograd/grad_math.hpp"
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

// The ops' own work (their compute), called by their descriptions below.
namespace nnp::core::compute {
TensorRef matmul(const Tensor& a, const Tensor& b);
}  // namespace nnp::core::compute

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

namespace nnp::core::autograd {

using namespace math;

namespace {

TensorRef transposed(const TensorRef& t) { return core::transpose(*t, -1, -2); }

// lhs @ rhs, laid out like `like` when `like` is a transposed contiguous
// matrix (a Linear layer's weight.t()): computing (rhs^T @ lhs^T)^T then hands
// the transpose's backward a contiguous gradient, which AccumulateGrad keeps
// without a copy (PyTorch's mm_mat2_backward does the same).
TensorRef product_like(const Tensor& like, const TensorRef& lhs, const TensorRef& rhs) {
  const int n = like.shape.ndim;
  const bool transposed_layout = n >= 2 && like.shape[n - 1] > 1 && like.shape[n - 2] > 1 && like.strides[n - 2] == 1 &&
                                 like.strides[n - 1] == like.shape[n - 2] && lhs->shape.ndim == n &&
                                 rhs->shape.ndim == n;
  if (!transposed_layout) return core::matmul(*lhs, *rhs);
  return transposed(core::matmul(*transposed(rhs), *transposed(lhs)));
}

// The public matmul's own work: the folds below compose public ops, which
// record their own history; the plain product records MmBackward through
// the dispatcher.
TensorRef composed_matmul(const Tensor& a, const Tensor& b) {
  // [..., n, k] @ [k, m] (a Linear on a sequence) is one [(...) * n, k]
  // product, as PyTorch folds it: one GEMM forward, and a weight gradient
  // that is one GEMM rather than a product per batch summed afterwards.
  if (a.shape.ndim > 2 && b.shape.ndim == 2 && a.shape[a.shape.ndim - 1] == b.shape[0]) {
    const int64_t k = a.shape[a.shape.ndim - 1];
    int64_t rows = 1;
    for (int32_t i = 0; i + 1 < a.shape.ndim; ++i) rows *= a.shape[i];
    const int64_t flat[2] = {rows, k};
    TensorRef product = matmul(*reshape(a, flat, 2), b);
    Dims out_shape = a.shape;
    out_shape.d[out_shape.ndim - 1] = b.shape[1];
    return reshape(*product, out_shape.d, out_shape.ndim);
  }
  if (!should_record({&a, &b})) return compute::matmul(a, b);
  if (a.shape.ndim == 1 && b.shape.ndim >= 1) {
    TensorRef a2 = unsqueeze(a, 0);
    TensorRef out = matmul(*a2, b);
    return squeeze(*out, b.shape.ndim == 1 ? -1 : -2, false);
  }
  if (b.shape.ndim == 1 && a.shape.ndim >= 1) {
    TensorRef b2 = unsqueeze(b, 1);
    TensorRef out = matmul(a, *b2);
    return squeeze(*out, -1, false);
  }
  return compute::matmul(a, b);
}

void matmul_backward(const Tensor& a, const Tensor& b, TensorRef& out) {
  if (out->autograd && out->autograd->grad_fn) return;  // a fold composed it, and its parts recorded
  SavedTensor ta = share(a), tb = share(b);
  record(dispatch::schema(dispatch::OpId::MATMUL).backward, {&a, &b}, {out.get()}, [ta, tb](Grads& g) {
    TensorRef ga = requires_grad(*ta) ? sum_to(product_like(*ta, g[0], transposed(tb)), ta->shape) : TensorRef();
    TensorRef gb = requires_grad(*tb) ? sum_to(product_like(*tb, transposed(ta), g[0]), tb->shape) : TensorRef();
    return Grads{ga, gb};
  });
}

struct MatmulOp {
  const Tensor* in[2];
  bool compose;  // the public face folds batches and promotes vectors with recorded ops
  dispatch::OpId id() const { return dispatch::OpId::MATMUL; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  TensorRef compute() const { return compose ? composed_matmul(*in[0], *in[1]) : compute::matmul(*in[0], *in[1]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_matmul(g, *in[0], *in[1], *out); }
  void differentiate(TensorRef& out) const { matmul_backward(*in[0], *in[1], out); }
};

}  // namespace

TensorRef matmul(const Tensor& a, const Tensor& b) {
  return dispatch::dispatch(MatmulOp{{&a, &b}, true}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core::autograd

namespace nnp::core {

TensorRef matmul(const Tensor& a, const Tensor& b) {
  return dispatch::dispatch(autograd::MatmulOp{{&a, &b}, false}, dispatch::Face::INTERNAL);
}

}  // namespace nnp::core
