// ONNX's quantization operators on nnplug's uint8 and int8:
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// products MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv. The
// products are exact, as ONNX's int32 accumulation is: on the cpu in f32
// where no partial sum can pass 2^24 (split in two where one could:
// exact_product), elsewhere in f64; then rounded (ties to even, as ONNX)
// to their type.
#include <cmath>
#include <functional>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

// A per-tensor or per-axis scale or zero point, shaped to broadcast against
// x along axis (ONNX's axis attribute, 1 by default).
Tensor along(const Tensor& t, const Tensor& x, int64_t axis_attr, const char* op) {
  if (t.ndim() == 0 || t.numel() == 1) return t.reshape({});
  const int32_t axis = wrap(axis_attr, x.ndim(), op);
  if (t.ndim() != 1 || t.size(0) != x.size(axis))
    invalid(std::string(op) + ": a 1-D scale or zero point needs one value per element of the axis");
  nnp::Shape shape(static_cast<size_t>(x.ndim()), 1);
  shape[static_cast<size_t>(axis)] = t.size(0);
  return t.reshape(shape);
}

// x rounded (ties to even) and saturated into dtype's range.
Tensor saturate(const Tensor& x, Dtype dtype) {
  const double low = dtype == Dtype::u8 ? 0 : dtype == Dtype::i8 ? -128 : -2147483648.0;
  const double high = dtype == Dtype::u8 ? 255 : dtype == Dtype::i8 ? 127 : 2147483647.0;
  return x.round().clamp(low, high).to(dtype);
}

Tensor quantize(const Tensor& x, const Tensor& scale, const Tensor* zero_point, Dtype dtype) {
  // Divided in x's own precision, as ONNX's reference divides (a tie in f32 may not be one in f64).
  Tensor y = (x / scale.to(x.dtype())).round().to(Dtype::f64);
  if (zero_point) y = y + zero_point->to(Dtype::f64);
  return saturate(y, dtype);
}

Tensors quantize_linear(const Tensors& in, const Node& a) {
  const char* op = "QuantizeLinear";
  const Tensor& x = need(in, 0, op);
  const int64_t axis = attr_int(a, "axis", 1);
  const Tensor scale = along(need(in, 1, op), x, axis, op);
  const Dtype dtype = given(in, 2) ? in[2].dtype() : Dtype::u8;
  if (dtype != Dtype::u8 && dtype != Dtype::i8) refuse("QuantizeLinear: only uint8 and int8 zero points are supported");
  const Tensor zero_point = given(in, 2) ? along(in[2], x, axis, op) : Tensor();
  return {quantize(x, scale, given(in, 2) ? &zero_point : nullptr, dtype)};
}

Tensors dequantize_linear(const Tensors& in, const Node& a) {
  const char* op = "DequantizeLinear";
  const Tensor& x = need(in, 0, op);
  const int64_t axis = attr_int(a, "axis", 1);
  const Tensor scale = along(need(in, 1, op), x, axis, op);
  Tensor centred = x.to(Dtype::f64);
  if (given(in, 2)) centred = centred - along(in[2], x, axis, op).to(Dtype::f64);
  return {(centred * scale.to(Dtype::f64)).to(scale.dtype())};
}

// DynamicQuantizeLinear: uint8 over the range of x and 0, its scale and
// zero point, in f32 as ONNX Runtime computes them: scale = (max - min) /
// 255, zero = round(clamp(-min / scale)), y = clamp(round(x / scale) +
// zero). The range comes from two reductions on x's device (no copy of x
// to the host), and y in one f32 pass (every value on the way is exact in
// f32: at most 255 in magnitude).
Tensors dynamic_quantize_linear(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "DynamicQuantizeLinear");
  const Tensor x32 = x.to(Dtype::f32);
  const float smallest = x.numel() ? x32.amin().item<float>() : 0.0f;
  const float largest = x.numel() ? x32.amax().item<float>() : 0.0f;
  if (std::isnan(smallest) || std::isnan(largest))
    invalid("DynamicQuantizeLinear: the input holds NaN, which has no uint8 range");
  const float low = std::min(0.0f, smallest), high = std::max(0.0f, largest);
  const float scale = (high - low) / 255.0f;
  const float zero = scale == 0 ? 0.0f : std::nearbyint(std::min(255.0f, std::max(0.0f, -low / scale)));
  const Tensor scale_t = nnp::full({}, scale, Dtype::f32, x.device());
  const Tensor zero_t = nnp::full({}, zero, Dtype::u8, x.device());
  const Tensor y = scale == 0 || !std::isfinite(scale) ? nnp::full(x.shape(), zero, Dtype::u8, x.device())
                                                       : ((x32 / scale_t).round() + static_cast<double>(zero))
                                                             .maximum(nnp::full({}, 0.0, Dtype::f32, x.device()))
                                                             .minimum(nnp::full({}, 255.0, Dtype::f32, x.device()))
                                                             .to(Dtype::u8);
  return {y, scale_t, zero_t};
}

// An integer operand less its zero point (per-tensor, or per-row for
// MatMulInteger's a and per-column for b, per-channel for a conv weight),
// in f64, or f32 (exact too: at most 255 in magnitude).
Tensor centred(const Tensor& t, const Tensors& in, size_t zero_index, int32_t axis, Dtype dtype = Dtype::f64) {
  Tensor v = t.to(dtype);
  if (!given(in, zero_index)) return v;
  const Tensor& zero = in[zero_index];
  if (zero.numel() == 1) return v - zero.reshape({}).to(dtype);
  nnp::Shape shape(static_cast<size_t>(t.ndim()), 1);
  shape[static_cast<size_t>(axis < 0 ? axis + t.ndim() : axis)] = zero.numel();
  return v - zero.reshape(shape).to(dtype);
}

// The int32 result of an integer product `product(a)` (a matrix product or
// convolution with a fixed integer operand b, linear in a, k terms to each
// sum), computed exactly in f32, or undefined where that cannot be shown.
// An f32 sum of integers is exact while no partial sum passes 2^24: one
// f32 product where k * max|a| * max|b| stays below it, else a split a =
// 16 h + l (|h| <= 16, |l| <= 8) into two f32 products, combined in f64.
// Only the cpu backend's products are known to add their terms one by one
// (no Winograd or reduced-precision transforms for these calls).
Tensor exact_product(const Tensor& a, double max_a, const Tensor& b, int64_t k,
                     const std::function<Tensor(const Tensor&)>& product) {
  constexpr double kExact = 16777216.0;  // 2^24
  if (a.device().backend() != "cpu" || a.numel() == 0 || b.numel() == 0) return Tensor();
  const double max_b = b.abs().amax().item<double>();
  const double terms = static_cast<double>(std::max<int64_t>(k, 1));
  if (terms * max_a * max_b < kExact) return product(a).round().to(Dtype::i32);
  if (max_a > 255 || terms * 16.0 * max_b >= kExact) return Tensor();  // (the split's bounds need |a| <= 255)
  const Tensor high = (a / 16.0).round(), low = a - high * 16.0;
  return (product(high).to(Dtype::f64) * 16.0 + product(low).to(Dtype::f64)).round().to(Dtype::i32);
}

Tensor centred_f32(const Tensor& t, const Tensors& in, size_t zero_index, int32_t axis) {
  return centred(t, in, zero_index, axis, Dtype::f32);
}

// The largest magnitude an 8-bit operand less its zero point can have, from
// its dtype's range and the zero point alone (no pass over the operand).
double centred_bound(const Tensor& t, const Tensors& in, size_t zero_index) {
  const double low = t.dtype() == Dtype::i8 ? -128 : 0, high = t.dtype() == Dtype::i8 ? 127 : 255;
  if (t.dtype() != Dtype::u8 && t.dtype() != Dtype::i8) return 1e30;  // not 8-bit: no bound shown
  if (!given(in, zero_index)) return std::max(-low, high);
  const Tensor zero = in[zero_index].to(Dtype::f64);
  if (zero.numel() == 1) return std::max(high - zero.item<double>(), zero.item<double>() - low);
  return std::max(high - zero.amin().item<double>(), zero.amax().item<double>() - low);
}

Tensors matmul_integer(const Tensors& in, const Node&) {
  const Tensor &a = need(in, 0, "MatMulInteger"), &b = need(in, 1, "MatMulInteger");
  const Tensor b32 = centred_f32(b, in, 3, -1);
  const int64_t k = b.ndim() > 0 ? b.size(b.ndim() > 1 ? -2 : 0) : 1;
  if (Tensor out = exact_product(centred_f32(a, in, 2, -2), centred_bound(a, in, 2), b32, k,
                                 [&](const Tensor& t) { return t.matmul(b32); });
      out.defined())
    return {out};
  return {centred(a, in, 2, -2).matmul(centred(b, in, 3, -1)).round().to(Dtype::i32)};
}

Tensors conv_integer(const Tensors& in, const Node& node) {
  const Tensor &x = need(in, 0, "ConvInteger"), &w = need(in, 1, "ConvInteger");
  const Tensor w32 = centred_f32(w, in, 3, 0);
  const int64_t k = w.ndim() > 0 && w.size(0) > 0 ? w.numel() / w.size(0) : 1;
  if (Tensor out = exact_product(centred_f32(x, in, 2, 1), centred_bound(x, in, 2), w32, k,
                                 [&](const Tensor& t) {
                                   return run_conv({t, w32}, node)[0];
                                 });
      out.defined())
    return {out};
  const Tensors args{centred(x, in, 2, 1), centred(w, in, 3, 0)};
  return {run_conv(args, node)[0].round().to(Dtype::i32)};
}

// QLinearMatMul: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Tensors qlinear_matmul(const Tensors& in, const Node&) {
  const char* op = "QLinearMatMul";
  const Tensor &a = need(in, 0, op), &b = need(in, 3, op);
  const Tensor product = centred(a, {a, Tensor(), in.at(2)}, 2, -2).matmul(centred(b, {b, Tensor(), in.at(5)}, 2, -1));
  const Tensor scale = need(in, 1, op).to(Dtype::f64) * need(in, 4, op).to(Dtype::f64) / need(in, 6, op).to(Dtype::f64);
  const Tensor zero = need(in, 7, op);
  return {saturate((product * scale).round() + zero.to(Dtype::f64), zero.dtype())};
}

// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32).
Tensors qlinear_conv(const Tensors& in, const Node& node) {
  const char* op = "QLinearConv";
  const Tensor &x = need(in, 0, op), &w = need(in, 3, op);
  Tensors args{centred(x, {x, Tensor(), in.at(2)}, 2, 1), centred(w, {w, Tensor(), in.at(5)}, 2, 0)};
  if (given(in, 8)) args.push_back(in[8].to(Dtype::f64));
  const Tensor acc = run_conv(args, node)[0];
  Tensor w_scale = need(in, 4, op).to(Dtype::f64);
  if (w_scale.numel() > 1) {
    nnp::Shape shape(static_cast<size_t>(acc.ndim()), 1);
    shape[1] = w_scale.numel();
    w_scale = w_scale.reshape(shape);
  }
  const Tensor scale =
      need(in, 1, op).to(Dtype::f64).reshape({}) * w_scale / need(in, 6, op).to(Dtype::f64).reshape({});
  const Tensor zero = need(in, 7, op);
  return {saturate((acc * scale).round() + zero.to(Dtype::f64).reshape({}), zero.dtype())};
}

}  // namespace

void add_quantized_ops(OpTable& t) {
  t.insert({{"ConvInteger", conv_integer},
            {"DequantizeLinear", dequantize_linear},
            {"DynamicQuantizeLinear", dynamic_quantize_linear},
            {"MatMulInteger", matmul_integer},
            {"QLinearConv", qlinear_conv},
            {"QLinearMatMul", qlinear_matmul},
            {"QuantizeLinear", quantize_linear}});
}

}  // namespace nnp::library::onnx
