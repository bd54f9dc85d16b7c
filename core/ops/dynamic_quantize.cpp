// ONNX's DynamicQuantizeLinear as one kernel (ABI 1.29's optional
// dynamic_quantize_linear): graph mode runs each DynamicQuantizeLinear node
// with it, so the input's range stays on the device (no host read for a
// captured plan to check) and the uint8 values come from two passes over
// the input instead of six. Null where it does not apply; the node then runs
// its composition.
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

// y is the result; the scale and zero point are made with it, and written
// in ONNX as the node's other two outputs.
struct DynamicQuantizeLinearOp {
  const Tensor* in[1];
  TensorRef& scale;
  TensorRef& zero;
  dispatch::OpId id() const { return dispatch::OpId::DYNAMIC_QUANTIZE_LINEAR; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x);
    TensorRef y = make_tensor_like(x.shape, NNP_U8, x);
    Dims one;  // 0-d, as ONNX's scalars
    one.ndim = 0;
    scale = make_tensor_like(one, NNP_F32, x);
    zero = make_tensor_like(one, NNP_U8, x);
    nnp_view vx = kernel_view(*xc), vy = kernel_view(*y), vs = kernel_view(*scale), vz = kernel_view(*zero);
    run_kernel(x, "dynamic_quantize_linear", x.backend().dynamic_quantize_linear()(&kernel_ctx(x), &vx, &vy, &vs, &vz));
    return y;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_dynamic_quantize_linear(g, *in[0], *out, *scale, *zero);
  }
};

}  // namespace

bool dynamic_quantize_linear_kernel(const Tensor& x, TensorRef& y, TensorRef& scale, TensorRef& zero) {
  if (!x.backend().dynamic_quantize_linear() || x.dtype != NNP_F32 || x.numel == 0 || autograd::should_record({&x}))
    return false;
  y = dispatch::dispatch(DynamicQuantizeLinearOp{{&x}, scale, zero}, dispatch::Face::PUBLIC);
  return y && scale && zero;
}

}  // namespace nnp::core
