// Quantization arithmetic as PyTorch defines it (fbgemm's Quantize):
//   q = clamp(round_half_even(x * (1.0f / float(scale))) + zero_point, qmin, qmax)
//   x = (float(q) - zero_point) * float(scale)    (per channel: * double(scale))
// composed from ordinary kernels, so every backend that knows ABI 1.7 runs
// it; and the int8 GEMM, through the backend's optional slot or, without it,
// the floating gemm on the same integers (exact, see matmul_i8).
// Fake quantization and its backward: the straight-through estimator, as
// PyTorch's cachemask kernels: the gradient passes where round-and-clamp
// left the value inside [quant_min, quant_max], and is zero elsewhere.
#include <cmath>
#include <limits>

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
TensorRef quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, nnp_dtype dtype);
TensorRef quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                               nnp_dtype dtype);
TensorRef dequantize_per_tensor(const Tensor& q, double scale, int64_t zero_point);
TensorRef dequantize_per_channel(const Tensor& q, const Tensor& scales, const Tensor& zero_points, int64_t axis);
TensorRef matmul_i8(const Tensor& a, const Tensor& b);
FakeQuantized fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max);
FakeQuantized fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                        int64_t quant_min, int64_t quant_max);
}  // namespace nnp::core::compute

namespace nnp::core {
namespace {

struct QRange {
  int64_t min, max;
};

QRange quantized_range(const char* op, nnp_dtype dtype) {
  if (dtype == NNP_U8) return {0, 255};
  if (dtype == NNP_I8) return {-128, 127};
  fail(NNP_DTYPE_MISMATCH, op, ": quantized values are u8 (quint8) or i8 (qint8), not ",
       dtype_name(dtype) ? dtype_name(dtype) : "an unknown dtype");
}

void check_scale(const char* op, double scale) {
  // 1/scale must be a finite float, as PyTorch's kernels compute it.
  if (!(scale > 0) || !std::isfinite(1.0f / static_cast<float>(scale)) || !std::isfinite(scale))
    fail(NNP_INVALID_ARGUMENT, op, ": scale ", scale, " must be positive and finite, with 1/scale a finite float");
}

void check_zero_point(const char* op, int64_t zero_point, QRange range, nnp_dtype dtype) {
  if (zero_point < range.min || zero_point > range.max)
    fail(NNP_INVALID_ARGUMENT, op, ": zero_point ", zero_point, " is outside ",
         dtype == NNP_I32 ? "[quant_min, quant_max] = [" : std::string(dtype_name(dtype)) + "'s range [", range.min,
         ", ", range.max, "]");
}

TensorRef scalar_f32(const Tensor& like, double value) { return full(Dims{}, value, NNP_F32, like.device); }

TensorRef as_f32(const Tensor& x) { return x.dtype == NNP_F32 ? TensorRef::share(&x) : to(x, x.device, NNP_F32); }

// v (a 1-D tensor of x.shape[axis] values) viewed to broadcast along axis.
TensorRef along_axis(const TensorRef& v, const Tensor& x, int64_t axis) {
  Dims shape;
  shape.ndim = x.shape.ndim;
  for (int32_t i = 0; i < shape.ndim; ++i) shape.d[i] = i == axis ? v->numel : 1;
  return reshape(*v, shape.d, shape.ndim);
}

int64_t check_axis(const char* op, const Tensor& x, int64_t axis) {
  const int64_t n = x.shape.ndim;
  if (axis < -n || axis >= n || n == 0)
    fail(NNP_INVALID_ARGUMENT, op, ": axis ", axis, " is out of range for a tensor of shape ", format_dims(x.shape));
  return axis < 0 ? axis + n : axis;
}

// The per-channel scales and zero points: 1-D, one per entry of x's axis,
// scales positive and finite, zero points in range. Read on the host: they
// are small, and a bad value must be refused before anything is computed.
void check_channel_params(const char* op, const Tensor& x, int64_t axis, const Tensor& scales,
                          const Tensor& zero_points, const QRange* range, nnp_dtype dtype) {
  const int64_t channels = x.shape.d[axis];
  if (scales.shape.ndim != 1 || scales.numel != channels || zero_points.shape.ndim != 1 ||
      zero_points.numel != channels)
    fail(NNP_SHAPE_MISMATCH, op, ": scales ", format_dims(scales.shape), " and zero_points ",
         format_dims(zero_points.shape), " must both be [", channels, "], one per entry of axis ", axis,
         " of the input ", format_dims(x.shape));
  check_floating(op, scales);
  if (!is_integral(zero_points.dtype))
    fail(NNP_DTYPE_MISMATCH, op, ": zero_points must be integers, got ", dtype_name(zero_points.dtype));
  std::vector<double> s(static_cast<size_t>(channels));
  std::vector<int64_t> z(static_cast<size_t>(channels));
  TensorRef s64 = contiguous(*to(scales, scales.device, NNP_F64));
  TensorRef z64 = contiguous(*to(zero_points, zero_points.device, NNP_I64));
  copy_to_host(*s64, s.data(), s.size() * sizeof(double));
  copy_to_host(*z64, z.data(), z.size() * sizeof(int64_t));
  for (int64_t c = 0; c < channels; ++c) {
    check_scale(op, s[static_cast<size_t>(c)]);
    if (range) check_zero_point(op, z[static_cast<size_t>(c)], *range, dtype);
  }
}

TensorRef quantize_values(const Tensor& x, const TensorRef& inv_scale, const TensorRef& zero_point, QRange range,
                          nnp_dtype dtype) {
  TensorRef t = binary(NNP_BINARY_MUL, *as_f32(x), *inv_scale);
  t = unary(NNP_UNARY_ROUND, *t);
  t = binary(NNP_BINARY_ADD, *t, *zero_point);
  t = binary(NNP_BINARY_MAXIMUM, *t, *scalar_f32(x, static_cast<double>(range.min)));
  t = binary(NNP_BINARY_MINIMUM, *t, *scalar_f32(x, static_cast<double>(range.max)));
  return to(*t, x.device, dtype);
}

void check_quantize_input(const char* op, const Tensor& x) {
  check_floating(op, x);
  check_computes_unary(x, NNP_UNARY_ROUND, op);
}

}  // namespace

TensorRef compute::quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, nnp_dtype dtype) {
  const QRange range = quantized_range("quantize_per_tensor", dtype);
  check_quantize_input("quantize_per_tensor", x);
  check_scale("quantize_per_tensor", scale);
  check_zero_point("quantize_per_tensor", zero_point, range, dtype);
  const float inv = 1.0f / static_cast<float>(scale);
  return quantize_values(x, scalar_f32(x, inv), scalar_f32(x, static_cast<double>(zero_point)), range, dtype);
}

TensorRef compute::quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                               nnp_dtype dtype) {
  const QRange range = quantized_range("quantize_per_channel", dtype);
  check_quantize_input("quantize_per_channel", x);
  check_same_device("quantize_per_channel", x, scales);
  check_same_device("quantize_per_channel", x, zero_points);
  axis = check_axis("quantize_per_channel", x, axis);
  check_channel_params("quantize_per_channel", x, axis, scales, zero_points, &range, dtype);
  // 1.0f / float(scale), each in float as PyTorch computes it.
  TensorRef inv = binary(NNP_BINARY_DIV, *scalar_f32(x, 1.0), *as_f32(scales));
  return quantize_values(x, along_axis(inv, x, axis), along_axis(as_f32(zero_points), x, axis), range, dtype);
}

TensorRef compute::dequantize_per_tensor(const Tensor& q, double scale, int64_t zero_point) {
  check_scale("dequantize_per_tensor", scale);
  if (!is_integral(q.dtype))
    fail(NNP_DTYPE_MISMATCH, "dequantize_per_tensor: needs the integer values (u8, i8, i32), got ",
         dtype_name(q.dtype));
  TensorRef t = binary(NNP_BINARY_SUB, *as_f32(q), *scalar_f32(q, static_cast<double>(zero_point)));
  return binary(NNP_BINARY_MUL, *t, *scalar_f32(q, static_cast<float>(scale)));
}

TensorRef compute::dequantize_per_channel(const Tensor& q, const Tensor& scales, const Tensor& zero_points, int64_t axis) {
  if (!is_integral(q.dtype))
    fail(NNP_DTYPE_MISMATCH, "dequantize_per_channel: needs the integer values (u8, i8, i32), got ",
         dtype_name(q.dtype));
  check_same_device("dequantize_per_channel", q, scales);
  check_same_device("dequantize_per_channel", q, zero_points);
  axis = check_axis("dequantize_per_channel", q, axis);
  check_channel_params("dequantize_per_channel", q, axis, scales, zero_points, nullptr, q.dtype);
  // PyTorch multiplies by the scales as they are stored (double), then rounds
  // to float: the product is formed in f64 here too (for f32 scales that is
  // the f32 product, exactly rounded).
  TensorRef t =
      binary(NNP_BINARY_SUB, *to(q, q.device, NNP_F64), *along_axis(to(zero_points, q.device, NNP_F64), q, axis));
  t = binary(NNP_BINARY_MUL, *t, *along_axis(to(scales, q.device, NNP_F64), q, axis));
  return to(*t, q.device, NNP_F32);
}

namespace {

void check_fake_range(const char* op, int64_t quant_min, int64_t quant_max) {
  if (quant_min > quant_max || quant_min < std::numeric_limits<int32_t>::min() ||
      quant_max > std::numeric_limits<int32_t>::max())
    fail(NNP_INVALID_ARGUMENT, op, ": quant_min ", quant_min, " and quant_max ", quant_max,
         " must be 32-bit integers with quant_min <= quant_max");
}

// out = (clamp(round(x * inv_scale) + zero_point) - zero_point) * scale, and
// the mask of the values the clamp left alone (they get the gradient).
FakeQuantized fake_quantize_values(const Tensor& x, const TensorRef& inv_scale, const TensorRef& scale,
                                   const TensorRef& zero_point, int64_t quant_min, int64_t quant_max) {
  TensorRef t = binary(NNP_BINARY_MUL, *as_f32(x), *inv_scale);
  t = binary(NNP_BINARY_ADD, *unary(NNP_UNARY_ROUND, *t), *zero_point);
  TensorRef clamped = binary(NNP_BINARY_MAXIMUM, *t, *scalar_f32(x, static_cast<double>(quant_min)));
  clamped = binary(NNP_BINARY_MINIMUM, *clamped, *scalar_f32(x, static_cast<double>(quant_max)));
  FakeQuantized result;
  result.mask = binary(NNP_BINARY_EQ, *clamped, *t);
  result.out = binary(NNP_BINARY_MUL, *binary(NNP_BINARY_SUB, *clamped, *zero_point), *scale);
  if (x.dtype != NNP_F32) result.out = to(*result.out, x.device, x.dtype);
  return result;
}

}  // namespace

FakeQuantized compute::fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max) {
  check_quantize_input("fake_quantize_per_tensor_affine", x);
  check_scale("fake_quantize_per_tensor_affine", scale);
  check_fake_range("fake_quantize_per_tensor_affine", quant_min, quant_max);
  check_zero_point("fake_quantize_per_tensor_affine", zero_point, QRange{quant_min, quant_max}, NNP_I32);
  const float inv = 1.0f / static_cast<float>(scale);
  return fake_quantize_values(x, scalar_f32(x, inv), scalar_f32(x, static_cast<float>(scale)),
                              scalar_f32(x, static_cast<double>(zero_point)), quant_min, quant_max);
}

FakeQuantized compute::fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                        int64_t quant_min, int64_t quant_max) {
  check_quantize_input("fake_quantize_per_channel_affine", x);
  check_same_device("fake_quantize_per_channel_affine", x, scales);
  check_same_device("fake_quantize_per_channel_affine", x, zero_points);
  check_fake_range("fake_quantize_per_channel_affine", quant_min, quant_max);
  axis = check_axis("fake_quantize_per_channel_affine", x, axis);
  const QRange range{quant_min, quant_max};
  check_channel_params("fake_quantize_per_channel_affine", x, axis, scales, zero_points, &range, NNP_I32);
  TensorRef scale = as_f32(scales);
  TensorRef inv = binary(NNP_BINARY_DIV, *scalar_f32(x, 1.0), *scale);
  return fake_quantize_values(x, along_axis(inv, x, axis), along_axis(scale, x, axis),
                              along_axis(as_f32(zero_points), x, axis), quant_min, quant_max);
}

TensorRef compute::matmul_i8(const Tensor& a, const Tensor& b) {
  check_same_device("matmul_i8", a, b);
  if (a.dtype != NNP_I8 || b.dtype != NNP_I8)
    fail(NNP_DTYPE_MISMATCH, "matmul_i8: needs two i8 tensors, got ", dtype_name(a.dtype), " and ",
         dtype_name(b.dtype));
  if (a.shape.ndim != 2 || b.shape.ndim != 2 || a.shape.d[1] != b.shape.d[1])
    fail(NNP_SHAPE_MISMATCH, "matmul_i8: needs a [M,K] and b [N,K] (it computes a @ b^T), got ", format_dims(a.shape),
         " and ", format_dims(b.shape));
  const int64_t m = a.shape.d[0], n = b.shape.d[0], k = a.shape.d[1];
  constexpr int64_t kMaxK = 65536;  // 128 * 128 * 65536 = 2^30: no int32 sum overflows
  if (k > kMaxK)
    fail(NNP_INVALID_ARGUMENT, "matmul_i8: inner dimension ", k, " exceeds ", kMaxK,
         ", beyond which int32 sums could overflow; split the reduction");
  Dims out_shape;
  out_shape.ndim = 2;
  out_shape.d[0] = m;
  out_shape.d[1] = n;
  if (m == 0 || n == 0 || k == 0) return core::full(out_shape, 0.0, NNP_I32, a.device);
  if (auto gemm_i8 = a.backend().gemm_i8()) {
    TensorRef ac = contiguous(a), bc = contiguous(b);
    TensorRef out = make_tensor_like(out_shape, NNP_I32, a);
    nnp_view va = kernel_view(*ac), vb = kernel_view(*bc), vo = kernel_view(*out);
    run_kernel(a, "matmul_i8", gemm_i8(&kernel_ctx(a), &va, &vb, &vo));
    return out;
  }
  // The fallback: the same products in a floating gemm. f32 holds every
  // partial sum exactly while it stays below 2^24 (128 * 128 * 1024 = 2^24),
  // f64 beyond that.
  const nnp_dtype exact = k <= 1024 ? NNP_F32 : NNP_F64;
  TensorRef af = to(a, a.device, exact), bf = to(b, b.device, exact);
  TensorRef product = matmul(*af, *transpose(*bf, 0, 1));
  return to(*product, a.device, NNP_I32);
}

// The ops' descriptions: none has an ONNX form yet, so each is dispatched
// on the public face, where the tracer refuses it during an export.
namespace {

struct QuantizePerTensorOp {
  const Tensor* in[1];
  double scale;
  int64_t zero_point;
  nnp_dtype dtype;
  dispatch::OpId id() const { return dispatch::OpId::QUANTIZE_PER_TENSOR; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::quantize_per_tensor(*in[0], scale, zero_point, dtype); }
};

struct QuantizePerChannelOp {
  const Tensor* in[3];  // x, scales, zero points
  int64_t axis;
  nnp_dtype dtype;
  dispatch::OpId id() const { return dispatch::OpId::QUANTIZE_PER_CHANNEL; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const { return compute::quantize_per_channel(*in[0], *in[1], *in[2], axis, dtype); }
};

struct DequantizePerTensorOp {
  const Tensor* in[1];
  double scale;
  int64_t zero_point;
  dispatch::OpId id() const { return dispatch::OpId::DEQUANTIZE_PER_TENSOR; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::dequantize_per_tensor(*in[0], scale, zero_point); }
};

struct DequantizePerChannelOp {
  const Tensor* in[3];  // q, scales, zero points
  int64_t axis;
  dispatch::OpId id() const { return dispatch::OpId::DEQUANTIZE_PER_CHANNEL; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const { return compute::dequantize_per_channel(*in[0], *in[1], *in[2], axis); }
};

struct MatmulI8Op {
  const Tensor* in[2];
  dispatch::OpId id() const { return dispatch::OpId::MATMUL_I8; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  TensorRef compute() const { return compute::matmul_i8(*in[0], *in[1]); }
};

}  // namespace

using dispatch::Face;

TensorRef quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, nnp_dtype dtype) {
  return dispatch::dispatch(QuantizePerTensorOp{{&x}, scale, zero_point, dtype}, Face::PUBLIC);
}
TensorRef quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                               nnp_dtype dtype) {
  return dispatch::dispatch(QuantizePerChannelOp{{&x, &scales, &zero_points}, axis, dtype}, Face::PUBLIC);
}
TensorRef dequantize_per_tensor(const Tensor& q, double scale, int64_t zero_point) {
  return dispatch::dispatch(DequantizePerTensorOp{{&q}, scale, zero_point}, Face::PUBLIC);
}
TensorRef dequantize_per_channel(const Tensor& q, const Tensor& scales, const Tensor& zero_points, int64_t axis) {
  return dispatch::dispatch(DequantizePerChannelOp{{&q, &scales, &zero_points}, axis}, Face::PUBLIC);
}
TensorRef matmul_i8(const Tensor& a, const Tensor& b) { return dispatch::dispatch(MatmulI8Op{{&a, &b}}, Face::PUBLIC); }

}  // namespace nnp::core

namespace nnp::core::autograd {

using namespace math;

namespace {

void straight_through(dispatch::OpId id, const Tensor& x, FakeQuantized& result) {
  if (!requires_grad(x)) return;  // the scales and zero points take no gradient
  TensorRef mask = result.mask;
  record(dispatch::schema(id).backward, {&x}, {result.out.get()},
         [mask](Grads& g) { return Grads{where(mask, g[0], zeros_like(g[0]))}; });
}

struct FakeQuantizePerTensorOp {
  const Tensor* in[1];
  double scale;
  int64_t zero_point, quant_min, quant_max;
  dispatch::OpId id() const { return dispatch::OpId::FAKE_QUANTIZE_PER_TENSOR; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  FakeQuantized compute() const {
    return compute::fake_quantize_per_tensor(*in[0], scale, zero_point, quant_min, quant_max);
  }
  void differentiate(FakeQuantized& out) const { straight_through(id(), *in[0], out); }
};

struct FakeQuantizePerChannelOp {
  const Tensor* in[3];  // x, scales, zero points
  int64_t axis, quant_min, quant_max;
  dispatch::OpId id() const { return dispatch::OpId::FAKE_QUANTIZE_PER_CHANNEL; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  FakeQuantized compute() const {
    return compute::fake_quantize_per_channel(*in[0], *in[1], *in[2], axis, quant_min, quant_max);
  }
  void differentiate(FakeQuantized& out) const { straight_through(id(), *in[0], out); }
};

}  // namespace

TensorRef fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                   int64_t quant_max) {
  return dispatch::dispatch(FakeQuantizePerTensorOp{{&x}, scale, zero_point, quant_min, quant_max},
                            dispatch::Face::PUBLIC)
      .out;
}

TensorRef fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                    int64_t quant_min, int64_t quant_max) {
  return dispatch::dispatch(FakeQuantizePerChannelOp{{&x, &scales, &zero_points}, axis, quant_min, quant_max},
                            dispatch::Face::PUBLIC)
      .out;
}

}  // namespace nnp::core::autograd

namespace nnp::core {

FakeQuantized fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max) {
  return dispatch::dispatch(autograd::FakeQuantizePerTensorOp{{&x}, scale, zero_point, quant_min, quant_max},
                            dispatch::Face::INTERNAL);
}

FakeQuantized fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                        int64_t quant_min, int64_t quant_max) {
  return dispatch::dispatch(
      autograd::FakeQuantizePerChannelOp{{&x, &scales, &zero_points}, axis, quant_min, quant_max},
      dispatch::Face::INTERNAL);
}

}  // namespace nnp::core
