// Layer normalization through the backend's optional layer_norm kernel
// (ABI 1.18): one pass per row instead of the mean, variance, rsqrt and
// products the composed path makes, taken only where nothing needs the ops'
// history (inference: no_grad, eval, graph mode's plans).
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

struct LayerNormOp {
  const Tensor* in[3];  // x, weight (or null), bias (or null)
  int32_t normalized_ndim;
  double eps;
  dispatch::OpId id() const { return dispatch::OpId::LAYER_NORM; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x), wc, bc;
    TensorRef out = make_tensor_like(x.shape, NNP_F32, x);
    // The kernel sees [rows, N]: the normalized dimensions as one.
    int64_t n = 1;
    for (int32_t i = x.shape.ndim - normalized_ndim; i < x.shape.ndim; ++i) n *= x.shape.d[i];
    auto as_rows = [&](nnp_view v) {
      v.ndim = 2;
      v.shape[0] = x.numel / n;
      v.shape[1] = n;
      v.strides[0] = n;
      v.strides[1] = 1;
      return v;
    };
    auto as_row = [&](const Tensor& t) {
      nnp_view v = kernel_view(t);
      v.ndim = 1;
      v.shape[0] = n;
      v.strides[0] = 1;
      return v;
    };
    nnp_view vx = as_rows(kernel_view(*xc)), vo = as_rows(kernel_view(*out)), vw{}, vb{};
    if (in[1]) vw = as_row(*(wc = contiguous(*in[1])));
    if (in[2]) vb = as_row(*(bc = contiguous(*in[2])));
    run_kernel(x, "layer_norm",
               x.backend().layer_norm()(&kernel_ctx(x), &vx, in[1] ? &vw : nullptr, in[2] ? &vb : nullptr, eps, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_layer_norm(g, *in[0], in[1], in[2], normalized_ndim, eps, *out);
  }
};

// A residual sum and its normalization over the last dimension
// (nnp_kernels.add_layer_norm, 1.23): a and b as they lie (rows with a
// contiguous last dimension), the sum never written out.
struct AddLayerNormOp {
  const Tensor* in[4];  // a, b, weight (or null), bias (or null)
  double eps;
  dispatch::OpId id() const { return dispatch::OpId::ADD_LAYER_NORM; }
  dispatch::Inputs inputs() const { return {in, 4}; }
  TensorRef compute() const {
    const Tensor& a = *in[0];
    TensorRef wc = in[2] ? contiguous(*in[2]) : TensorRef(), bc = in[3] ? contiguous(*in[3]) : TensorRef();
    TensorRef out = make_tensor_like(a.shape, NNP_F32, a);
    const nnp_view va = kernel_view(a), vb = kernel_view(*in[1]), vo = kernel_view(*out);
    nnp_view vw{}, vbias{};
    if (wc) vw = kernel_view(*wc);
    if (bc) vbias = kernel_view(*bc);
    run_kernel(
        a, "add_layer_norm",
        a.backend().add_layer_norm()(&kernel_ctx(a), &va, &vb, wc ? &vw : nullptr, bc ? &vbias : nullptr, eps, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_add_layer_norm(g, *in[0], *in[1], in[2], in[3], eps, *out);
  }
};

// weight or bias: shaped as x's last normalized_ndim dimensions.
bool fits(const Tensor* t, const Tensor& x, int32_t normalized_ndim) {
  if (!t) return true;
  if (t->dtype != NNP_F32 || t->shape.ndim != normalized_ndim || t->device.backend != x.device.backend ||
      t->device.index != x.device.index)
    return false;
  for (int32_t i = 0; i < normalized_ndim; ++i)
    if (t->shape.d[i] != x.shape.d[x.shape.ndim - normalized_ndim + i]) return false;
  return true;
}

}  // namespace

TensorRef layer_norm_kernel(const Tensor& x, const Tensor* weight, const Tensor* bias, int32_t normalized_ndim,
                            double eps) {
  if (!x.backend().layer_norm() || x.dtype != NNP_F32 || x.numel == 0) return {};
  if (normalized_ndim < 1 || normalized_ndim > x.shape.ndim || !(eps >= 0)) return {};
  if (!fits(weight, x, normalized_ndim) || !fits(bias, x, normalized_ndim)) return {};
  if (autograd::should_record({&x, weight, bias})) return {};
  // ONNX has LayerNormalization from opset 17; an older export writes the composition.
  if (onnx::tracing() && onnx::traced_opset() != 0 && onnx::traced_opset() < 17) return {};
  return dispatch::dispatch(LayerNormOp{{&x, weight, bias}, normalized_ndim, eps}, dispatch::Face::PUBLIC);
}

TensorRef add_layer_norm_kernel(const Tensor& a, const Tensor& b, const Tensor* weight, const Tensor* bias,
                                double eps) {
  if (!a.backend().add_layer_norm() || a.dtype != NNP_F32 || b.dtype != NNP_F32 || a.numel == 0) return {};
  if (a.device.backend != b.device.backend || a.device.index != b.device.index || !(eps >= 0)) return {};
  const int32_t rank = a.shape.ndim;
  if (rank < 1 || b.shape.ndim != rank) return {};
  for (int32_t d = 0; d < rank; ++d)
    if (a.shape.d[d] != b.shape.d[d]) return {};  // a broadcast sum is the ops'
  if (a.strides.d[rank - 1] != 1 || b.strides.d[rank - 1] != 1) return {};
  if (!fits(weight, a, 1) || !fits(bias, a, 1)) return {};
  if (autograd::should_record({&a, &b, weight, bias})) return {};
  if (onnx::tracing() && onnx::traced_opset() != 0 && onnx::traced_opset() < 17) return {};
  return dispatch::dispatch(AddLayerNormOp{{&a, &b, weight, bias}, eps}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
