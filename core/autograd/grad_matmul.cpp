// Backward of matmul. 1-D operands are promoted with (differentiable)
// unsqueeze/squeeze, so the node itself only sees batched matrices.
#include "../dispatch/dispatcher.hpp"
#include "../op_compute.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"

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
