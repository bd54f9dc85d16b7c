// Convolutions whose weight the backend packed once (ABI 1.21's optional
// conv2d_pack and conv2d_packed, and 1.22's static int8 ones): graph mode
// packs the weight of each inference convolution when it makes a plan, and
// runs the convolution, its ReLU (or requantization) and a max pooling
// after it as one kernel that reads the packed form. Taken only where nothing needs the ops' history; the caller runs
// the layers as written otherwise.
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

bool plain_f32(const Tensor& t) { return t.dtype == NNP_F32 && t.numel > 0; }

struct Conv2dPackedOp {
  const Tensor* in[3];  // x, the packed weight, bias (may be null)
  const Tensor& w;      // what was packed: the ONNX form names it
  const nnp_conv2d_params& p;
  const int64_t (&pool)[2];
  Dims out_shape;
  dispatch::OpId id() const { return dispatch::OpId::CONV2D_PACKED; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x), bc = in[2] ? contiguous(*in[2]) : TensorRef();
    TensorRef out = make_tensor_like(out_shape, NNP_F32, x);
    nnp_view vx = kernel_view(*xc), vp = kernel_view(*in[1]), vo = kernel_view(*out), vb{};
    if (bc) vb = kernel_view(*bc);
    run_kernel(x, "conv2d_packed",
               x.backend().conv2d_packed()(&kernel_ctx(x), &vx, &vp, bc ? &vb : nullptr, &p, pool, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_conv2d_pooled(g, *in[0], w, in[2], p, pool, *out);
  }
};

// A contiguous view as [rows, columns, 1, 1]: a Linear layer's rows as the
// pixels of a 1 x 1 convolution.
void as_pixels(nnp_view& v, int64_t rows, int64_t columns) {
  v.ndim = 4;
  v.shape[0] = rows;
  v.shape[1] = columns;
  v.shape[2] = v.shape[3] = 1;
  v.strides[0] = columns;
  v.strides[1] = 1;
  v.strides[2] = v.strides[3] = 1;
}

// The same for a static int8 convolution (ABI 1.22), or a static int8
// Linear as a 1 x 1 one (rows > 0: x [..., K] read as [rows, K, 1, 1]),
// written in ONNX as the layer it runs for (the layer's own node) and the
// pooling.
struct QuantizedConv2dPackedOp {
  const Tensor* in[4];  // x, the packed weight, scale, bias (may be null)
  nnp_module& layer;
  const nnp_quantized_conv2d_params& q;
  const nnp_conv2d_params& p;
  const int64_t (&pool)[2];
  Dims out_shape;
  int64_t rows;  // 0 for a convolution
  dispatch::OpId id() const { return dispatch::OpId::QUANTIZED_CONV2D_PACKED; }
  dispatch::Inputs inputs() const { return {in, 4}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x), sc = contiguous(*in[2]), bc = in[3] ? contiguous(*in[3]) : TensorRef();
    TensorRef out = make_tensor_like(out_shape, NNP_F32, x);
    nnp_view vx = kernel_view(*xc), vp = kernel_view(*in[1]), vs = kernel_view(*sc), vo = kernel_view(*out), vb{};
    if (rows > 0) {
      as_pixels(vx, rows, x.shape[x.shape.ndim - 1]);
      as_pixels(vo, rows, out_shape[out_shape.ndim - 1]);
    }
    if (bc) vb = kernel_view(*bc);
    run_kernel(
        x, "quantized_conv2d_packed",
        x.backend().quantized_conv2d_packed()(&kernel_ctx(x), &vx, &vp, &vs, bc ? &vb : nullptr, &q, &p, pool, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_quantized_layer_pooled(g, *in[0], layer, pool, *out);
  }
};

// ONNX's ConvInteger from its packed weight (ABI 1.29), written in ONNX as
// the ConvInteger node it runs for.
struct Conv2dIntegerPackedOp {
  const Tensor* in[3];  // x, the packed weight, x's zero point (may be null)
  const Tensor& w;
  const Tensor* w_zero;
  const nnp_conv2d_params& p;
  Dims out_shape;
  dispatch::OpId id() const { return dispatch::OpId::CONV2D_INTEGER_PACKED; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const {
    const Tensor& x = *in[0];
    TensorRef xc = contiguous(x), zc = in[2] ? contiguous(*in[2]) : TensorRef();
    TensorRef out = make_tensor_like(out_shape, NNP_I32, x);
    nnp_view vx = kernel_view(*xc), vp = kernel_view(*in[1]), vo = kernel_view(*out), vz{};
    if (zc) vz = kernel_view(*zc);
    run_kernel(x, "conv2d_integer_packed",
               x.backend().conv2d_integer_packed()(&kernel_ctx(x), &vx, zc ? &vz : nullptr, &vp, &p, &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_conv_integer(g, *in[0], in[2], w, w_zero, p, *out);
  }
};

bool integer_bytes(const Tensor& t) { return t.dtype == NNP_U8 || t.dtype == NNP_I8; }

// The pooled convolution's output shape, or false where the kernel does
// not apply (sizes the layers themselves refuse with their own messages).
bool packed_shape(const Tensor& x, const Tensor& w, const nnp_conv2d_params& p, const int64_t (&pool)[2], Dims& out) {
  if (x.shape.ndim != 4 || w.shape.ndim != 4 || p.groups < 1 || x.shape[1] != w.shape[1] * p.groups) return false;
  out.ndim = 4;
  out.d[0] = x.shape[0];
  out.d[1] = w.shape[0];
  for (int i = 0; i < 2; ++i) {
    int64_t span = 0, padded = 0, room = 0;
    if (p.stride[i] < 1 || p.dilation[i] < 1 || p.padding[i] < 0 ||
        __builtin_mul_overflow(p.dilation[i], w.shape[2 + i] - 1, &span) ||
        __builtin_mul_overflow(p.padding[i], int64_t{2}, &padded) ||
        __builtin_add_overflow(x.shape[2 + i], padded, &padded) || __builtin_sub_overflow(padded, span, &room) ||
        __builtin_sub_overflow(room, int64_t{1}, &room) || room < 0)
      return false;
    int64_t size = room / p.stride[i] + 1;
    if (pool[0] > 0) size /= pool[i];
    if (size < 1) return false;
    out.d[2 + i] = size;
  }
  return x.shape[0] > 0;
}

bool valid_pool(const int64_t (&pool)[2]) {
  return (pool[0] == 0 && pool[1] == 0) || (pool[0] >= 1 && pool[1] >= 1 && pool[0] <= 64 && pool[1] <= 64);
}

}  // namespace

TensorRef conv2d_pack_weight(const Tensor& w, const nnp_conv2d_params& p, const int64_t (&pool)[2]) {
  if (!w.backend().conv2d_pack() || !plain_f32(w) || w.shape.ndim != 4 || p.groups != 1 || !valid_pool(pool) ||
      (p.activation != NNP_ACTIVATION_NONE && p.activation != NNP_ACTIVATION_RELU))
    return {};
  const TensorRef wc = contiguous(w);
  const nnp_view vw = kernel_view(*wc);
  return packed_by_backend(w, "conv2d_pack", [&](const nnp_view* packed, int64_t* bytes) {
    return w.backend().conv2d_pack()(&kernel_ctx(w), &vw, &p, pool, packed, bytes);
  });
}

TensorRef conv2d_packed_kernel(const Tensor& x, const Tensor& w, const Tensor& packed, const Tensor* bias,
                               const nnp_conv2d_params& p, const int64_t (&pool)[2]) {
  if (!x.backend().conv2d_packed() || !plain_f32(x) || packed.dtype != NNP_U8 || !same_device(x, packed) ||
      !valid_pool(pool) || autograd::should_record({&x, &w, bias}))
    return {};
  if (bias && (!plain_f32(*bias) || !same_device(x, *bias) || bias->shape.ndim != 1 || bias->shape[0] != w.shape[0]))
    return {};
  Dims out_shape;
  if (!packed_shape(x, w, p, pool, out_shape)) return {};
  return dispatch::dispatch(Conv2dPackedOp{{&x, &packed, bias}, w, p, pool, out_shape}, dispatch::Face::PUBLIC);
}

TensorRef quantized_conv2d_pack_weight(const Tensor& w, const nnp_conv2d_params& p, const int64_t (&pool)[2]) {
  if (!w.backend().quantized_conv2d_pack() || w.dtype != NNP_I8 || w.numel == 0 || w.shape.ndim != 4 || p.groups != 1 ||
      p.activation != NNP_ACTIVATION_NONE || !valid_pool(pool))
    return {};
  const TensorRef wc = contiguous(w);
  const nnp_view vw = kernel_view(*wc);
  return packed_by_backend(w, "quantized_conv2d_pack", [&](const nnp_view* packed, int64_t* bytes) {
    return w.backend().quantized_conv2d_pack()(&kernel_ctx(w), &vw, &p, pool, packed, bytes);
  });
}

TensorRef quantized_conv2d_packed_kernel(const Tensor& x, nnp_module& layer, const Tensor& w, const Tensor& packed,
                                         const Tensor& scale, const Tensor* bias, const nnp_quantized_conv2d_params& q,
                                         const nnp_conv2d_params& p, const int64_t (&pool)[2]) {
  if (!x.backend().quantized_conv2d_packed() || !plain_f32(x) || packed.dtype != NNP_U8 || !same_device(x, packed) ||
      !valid_pool(pool) || autograd::should_record({&x}))
    return {};
  for (const Tensor* v : {&scale, bias})
    if (v && (!plain_f32(*v) || !same_device(x, *v) || v->shape.ndim != 1 || v->shape[0] != w.shape[0])) return {};
  Dims out_shape;
  int64_t rows = 0;
  if (w.shape.ndim == 2) {  // a Linear: [..., K] -> [..., O]
    if (x.shape.ndim < 1 || x.shape[x.shape.ndim - 1] != w.shape[1] || x.numel == 0) return {};
    rows = x.numel / w.shape[1];
    out_shape = x.shape;
    out_shape.d[out_shape.ndim - 1] = w.shape[0];
  } else if (!packed_shape(x, w, p, pool, out_shape)) {
    return {};
  }
  return dispatch::dispatch(QuantizedConv2dPackedOp{{&x, &packed, &scale, bias}, layer, q, p, pool, out_shape, rows},
                            dispatch::Face::PUBLIC);
}

TensorRef conv2d_integer_pack_weight(const Tensor& w, const Tensor* w_zero, const nnp_conv2d_params& p) {
  const bool depthwise = p.groups > 1 && w.shape.ndim == 4 && w.shape[1] == 1 && w.shape[0] == p.groups;
  if (!w.backend().conv2d_integer_pack() || !integer_bytes(w) || w.numel == 0 || w.shape.ndim != 4 ||
      (p.groups != 1 && !depthwise) || p.activation != NNP_ACTIVATION_NONE)
    return {};
  if (w_zero && (w_zero->dtype != w.dtype || w_zero->shape.ndim > 1 || !same_device(w, *w_zero) ||
                 (w_zero->numel != 1 && w_zero->numel != w.shape[0])))
    return {};
  const TensorRef wc = contiguous(w), zc = w_zero ? contiguous(*w_zero) : TensorRef();
  const nnp_view vw = kernel_view(*wc);
  nnp_view vz{};
  if (zc) vz = kernel_view(*zc);
  return packed_by_backend(w, "conv2d_integer_pack", [&](const nnp_view* packed, int64_t* bytes) {
    return w.backend().conv2d_integer_pack()(&kernel_ctx(w), &vw, zc ? &vz : nullptr, &p, packed, bytes);
  });
}

TensorRef conv2d_integer_packed_kernel(const Tensor& x, const Tensor* x_zero, const Tensor& w, const Tensor* w_zero,
                                       const Tensor& packed, const nnp_conv2d_params& p) {
  if (!x.backend().conv2d_integer_packed() || !integer_bytes(x) || packed.dtype != NNP_U8 || !same_device(x, packed))
    return {};
  if (x_zero && (x_zero->dtype != x.dtype || x_zero->numel != 1 || !same_device(x, *x_zero))) return {};
  const int64_t no_pool[2] = {0, 0};
  Dims out_shape;
  if (!packed_shape(x, w, p, no_pool, out_shape)) return {};
  return dispatch::dispatch(Conv2dIntegerPackedOp{{&x, &packed, x_zero}, w, w_zero, p, out_shape},
                            dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
