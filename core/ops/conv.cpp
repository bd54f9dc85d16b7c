// The fast path of 2-D convolution: one backend kernel (im2col, GEMM and
// bias together) instead of the general ops. Where a gradient is recorded it
// is taken only if the backend also has conv2d_backward, which the recorded
// node runs.
#include "../autograd/grad_math.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

// The convolution's output shape, or false where the fast path does not
// apply (the general path then refuses bad sizes with its own message).
bool conv2d_shape(const Tensor& x, const Tensor& w, const Tensor* bias, const nnp_conv2d_params& p, Dims& out_shape) {
  if (x.dtype != NNP_F32 || w.dtype != NNP_F32 || (bias && bias->dtype != NNP_F32)) return false;
  auto same_device = [&](const Tensor& t) {
    return t.device.backend == x.device.backend && t.device.index == x.device.index;
  };
  if (!same_device(w) || (bias && !same_device(*bias))) return false;
  if (x.shape.ndim != 4 || w.shape.ndim != 4 || (bias && (bias->shape.ndim != 1 || bias->shape[0] != w.shape[0])))
    return false;
  const int64_t n = x.shape[0], c = x.shape[1], o = w.shape[0];
  if (p.groups < 1 || c % p.groups != 0 || o % p.groups != 0 || w.shape[1] != c / p.groups) return false;
  out_shape.ndim = 4;
  out_shape.d[0] = n;
  out_shape.d[1] = o;
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] < 1 || p.dilation[i] < 1 || p.padding[i] < 0) return false;
    // Sizes from a stranger's spec can overflow here.
    int64_t span = 0, padded = 0, room = 0;
    if (__builtin_mul_overflow(p.dilation[i], w.shape[2 + i] - 1, &span) ||
        __builtin_mul_overflow(p.padding[i], int64_t{2}, &padded) ||
        __builtin_add_overflow(x.shape[2 + i], padded, &padded) || __builtin_sub_overflow(padded, span, &room) ||
        __builtin_sub_overflow(room, int64_t{1}, &room) || room < 0)
      return false;
    out_shape.d[2 + i] = room / p.stride[i] + 1;
  }
  return x.numel != 0 && w.numel != 0;
}

struct Conv2dOp {
  const Tensor* in[3];  // x, w, bias (may be null)
  const nnp_conv2d_params& p;
  const Dims& out_shape;
  dispatch::OpId id() const { return dispatch::OpId::CONV2D; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x), wc = contiguous(*in[1]), bc = in[2] ? contiguous(*in[2]) : TensorRef();
    TensorRef out = make_tensor_like(out_shape, NNP_F32, x);
    nnp_view vx = kernel_view(*xc), vw = kernel_view(*wc), vo = kernel_view(*out), vb{};
    if (bc) vb = kernel_view(*bc);
    // A backend built before 1.18 is handed the 1.9 struct and never an
    // activation: the core applies it after, in place.
    const BackendRecord& backend = x.backend();
    nnp_conv2d_params given = p;
    const bool core_activates = p.activation != NNP_ACTIVATION_NONE && !backend.knows_1_18();
    if (!backend.knows_1_18()) {
      given.struct_size = NNP_CONV2D_PARAMS_SIZE_1_9;
      given.activation = NNP_ACTIVATION_NONE;
    }
    run_kernel(x, "conv2d", backend.kernels().conv2d(&kernel_ctx(x), &vx, &vw, bc ? &vb : nullptr, &given, &vo));
    if (core_activates) run_kernel(x, "relu", backend.kernels().unary(&kernel_ctx(x), NNP_UNARY_RELU, &vo, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_conv2d(g, *in[0], *in[1], in[2], p, *out); }
  void differentiate(TensorRef& out) const {
    // Which gradients to compute is known now: only inputs that require one.
    const bool want_x = autograd::requires_grad(*in[0]), want_w = autograd::requires_grad(*in[1]),
               want_b = in[2] && autograd::requires_grad(*in[2]);
    // The inputs as given (compute's contiguous copies are not kept past
    // forward); backward lays them out again only where they were strided.
    autograd::math::SavedTensor sx = autograd::math::share(*in[0]);
    autograd::math::SavedTensor sw = autograd::math::share(*in[1]);
    const nnp_conv2d_params params = p;
    autograd::record(
        dispatch::schema(id()).backward, {in[0], in[1], in[2]}, {out.get()},
        [sx, sw, params, want_x, want_w, want_b](autograd::Grads& g) {
          const TensorRef x = contiguous(*sx.values()), w = contiguous(*sw.values());
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
          run_kernel(*x, "conv2d_backward",
                     x->backend().conv2d_backward()(&kernel_ctx(*x), &vx, &vw, &vg, &params, gx ? &vgx : nullptr,
                                                    gw ? &vgw : nullptr, gb ? &vgb : nullptr));
          return autograd::Grads{gx, gw, gb};
        });
  }
};

}  // namespace

TensorRef conv2d_kernel(const Tensor& x, const Tensor& w, const Tensor* bias, const nnp_conv2d_params& p) {
  const BackendRecord& backend = x.backend();
  if (!backend.conv2d()) return {};
  if (p.activation != NNP_ACTIVATION_NONE && p.activation != NNP_ACTIVATION_RELU)
    fail(NNP_INVALID_ARGUMENT, "conv2d: activation ", p.activation,
         " is not NNP_ACTIVATION_NONE (0) or NNP_ACTIVATION_RELU (1)");
  const bool records = autograd::should_record({&x, &w, bias});
  if (records && (!backend.conv2d_backward() || p.activation != NNP_ACTIVATION_NONE)) return {};
  Dims out_shape;
  if (!conv2d_shape(x, w, bias, p, out_shape)) return {};
  return dispatch::dispatch(Conv2dOp{{&x, &w, bias}, p, out_shape}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
