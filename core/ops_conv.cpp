// The fast path of 2-D convolution: one backend kernel (im2col, GEMM and
// bias together) instead of the general ops. Where a gradient is recorded it
// is taken only if the backend also has conv2d_backward, which the recorded
// node runs.
#include "autograd/grad_math.hpp"
#include "autograd/record.hpp"
#include "onnx/trace.hpp"
#include "op_checks.hpp"
#include "ops.hpp"
#include "profiler/profiler.hpp"

namespace nnp::core {

TensorRef conv2d_kernel(const Tensor& x, const Tensor& w, const Tensor* bias, const nnp_conv2d_params& p) {
  const nnp_kernels& kernels = x.backend().kernels();
  const bool record = autograd::should_record({&x, &w, bias});
  if (kernels.conv2d == nullptr || onnx::tracing()) return {};
  if (record && (kernels.struct_size < NNP_KERNELS_SIZE_1_12 || kernels.conv2d_backward == nullptr)) return {};
  if (x.dtype != NNP_F32 || w.dtype != NNP_F32 || (bias && bias->dtype != NNP_F32)) return {};
  auto same_device = [&](const Tensor& t) {
    return t.device.backend == x.device.backend && t.device.index == x.device.index;
  };
  if (!same_device(w) || (bias && !same_device(*bias))) return {};
  if (x.shape.ndim != 4 || w.shape.ndim != 4 || (bias && (bias->shape.ndim != 1 || bias->shape[0] != w.shape[0])))
    return {};
  const int64_t n = x.shape[0], c = x.shape[1], o = w.shape[0];
  if (p.groups < 1 || c % p.groups != 0 || o % p.groups != 0 || w.shape[1] != c / p.groups) return {};
  Dims out_shape;
  out_shape.ndim = 4;
  out_shape.d[0] = n;
  out_shape.d[1] = o;
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] < 1 || p.dilation[i] < 1 || p.padding[i] < 0) return {};
    // Sizes from a stranger's spec can overflow here: the general path
    // then refuses them with its own message.
    int64_t span = 0, padded = 0, room = 0;
    if (__builtin_mul_overflow(p.dilation[i], w.shape[2 + i] - 1, &span) ||
        __builtin_mul_overflow(p.padding[i], int64_t{2}, &padded) ||
        __builtin_add_overflow(x.shape[2 + i], padded, &padded) || __builtin_sub_overflow(padded, span, &room) ||
        __builtin_sub_overflow(room, int64_t{1}, &room) || room < 0)
      return {};
    out_shape.d[2 + i] = room / p.stride[i] + 1;
  }
  if (x.numel == 0 || w.numel == 0) return {};
  profiler::OpScope profile("conv2d", {&x, &w});
  TensorRef xc = contiguous(x), wc = contiguous(w), bc = bias ? contiguous(*bias) : TensorRef();
  TensorRef out = make_tensor_like(out_shape, NNP_F32, x);
  nnp_view vx = kernel_view(*xc), vw = kernel_view(*wc), vo = kernel_view(*out), vb{};
  if (bc) vb = kernel_view(*bc);
  run_kernel(x, "conv2d", kernels.conv2d(&kernel_ctx(x), &vx, &vw, bc ? &vb : nullptr, &p, &vo));
  if (record) {
    // Which gradients to compute is known now: only inputs that require one.
    const bool want_x = autograd::requires_grad(x), want_w = autograd::requires_grad(w),
               want_b = bias && autograd::requires_grad(*bias);
    autograd::math::SavedTensor sx = autograd::math::share(*xc), sw = autograd::math::share(*wc);
    autograd::record(
        "ConvolutionBackward0", {&x, &w, bias}, {out.get()}, [sx, sw, p, want_x, want_w, want_b](autograd::Grads& g) {
          const TensorRef& x = sx;
          const TensorRef& w = sw;
          TensorRef grad_out = contiguous(*g[0]);
          TensorRef gx = want_x ? make_tensor_like(x->shape, NNP_F32, *x) : TensorRef();
          TensorRef gw = want_w ? make_tensor_like(w->shape, NNP_F32, *x) : TensorRef();
          Dims bias_shape;
          bias_shape.ndim = 1;
          bias_shape.d[0] = w->shape[0];
          TensorRef gb = want_b ? make_tensor_like(bias_shape, NNP_F32, *x) : TensorRef();
          nnp_view vx = kernel_view(*x), vw = kernel_view(*w), vg = kernel_view(*grad_out), vgx{}, vgw{}, vgb{};
          if (gx) vgx = kernel_view(*gx);
          if (gw) vgw = kernel_view(*gw);
          if (gb) vgb = kernel_view(*gb);
          const nnp_kernels& k = x->backend().kernels();
          run_kernel(*x, "conv2d_backward",
                     k.conv2d_backward(&kernel_ctx(*x), &vx, &vw, &vg, &p, gx ? &vgx : nullptr, gw ? &vgw : nullptr,
                                       gb ? &vgb : nullptr));
          return autograd::Grads{gx, gw, gb};
        });
  }
  return out;
}

}  // namespace nnp::core
