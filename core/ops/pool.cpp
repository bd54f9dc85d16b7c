// 2-D max pooling through the backend's optional max_pool2d kernel: one pass
// over the input instead of the general path's window unfold, reduction
// and (for indices) gather, taken only where nothing needs the ops' history.
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

struct MaxPool2dOp {
  const Tensor* in[1];
  const nnp_pool2d_params& p;
  const Dims& out_shape;
  bool with_indices;
  dispatch::OpId id() const { return dispatch::OpId::MAX_POOL2D; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  MaxPool2dResult compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x);
    MaxPool2dResult result{make_tensor_like(out_shape, NNP_F32, x), {}};
    if (with_indices) result.indices = make_tensor_like(out_shape, NNP_I64, x);
    nnp_view vx = kernel_view(*xc), vo = kernel_view(*result.values), vi{};
    if (with_indices) vi = kernel_view(*result.indices);
    run_kernel(x, "max_pool2d", x.backend().max_pool2d()(&kernel_ctx(x), &vx, &p, &vo, with_indices ? &vi : nullptr));
    return result;
  }
  void lower(nnp_onnx_graph& g, const MaxPool2dResult& out) const {
    onnx::record_max_pool2d(g, *in[0], p, *out.values, out.indices.get());
  }
};

}  // namespace

MaxPool2dResult max_pool2d_kernel(const Tensor& x, const nnp_pool2d_params& p, int64_t oh, int64_t ow,
                                  bool with_indices) {
  if (!x.backend().max_pool2d() || autograd::should_record({&x})) return {};
  if (x.dtype != NNP_F32 || x.shape.ndim != 4 || x.numel == 0 || oh < 1 || ow < 1) return {};
  const int64_t out_size[2] = {oh, ow};
  for (int i = 0; i < 2; ++i) {
    if (p.kernel[i] < 1 || p.stride[i] < 1 || p.dilation[i] < 1 || p.padding[i] < 0) return {};
    // The last window's last tap, (out - 1) * stride + (kernel - 1) *
    // dilation, must be representable for the kernel's arithmetic; sizes
    // from a stranger's spec that are not take the general path.
    int64_t start = 0, span = 0, end = 0;
    if (__builtin_mul_overflow(out_size[i] - 1, p.stride[i], &start) ||
        __builtin_mul_overflow(p.kernel[i] - 1, p.dilation[i], &span) || __builtin_add_overflow(start, span, &end))
      return {};
  }
  Dims out_shape;
  out_shape.ndim = 4;
  out_shape.d[0] = x.shape[0];
  out_shape.d[1] = x.shape[1];
  out_shape.d[2] = oh;
  out_shape.d[3] = ow;
  return dispatch::dispatch(MaxPool2dOp{{&x}, p, out_shape, with_indices}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
