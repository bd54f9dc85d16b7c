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

}  // namespace nnp::core
