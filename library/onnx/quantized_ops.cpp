// ONNX's quantization operators on nnplug's uint8 and int8:
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// products MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv. The
// products are computed in f64, where every int32 accumulation of 8-bit
// values is exact, and rounded (ties to even, as ONNX) to their type.
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

// DynamicQuantizeLinear: uint8 over the range of x and 0, its scale and zero point.
Tensors dynamic_quantize_linear(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "DynamicQuantizeLinear");
  const std::vector<double> values = host_reals(x);
  double low = 0, high = 0;
  for (double v : values) {
    low = std::min(low, v);
    high = std::max(high, v);
  }
  const float scale = static_cast<float>((high - low) / 255.0);
  const double zero = scale == 0 ? 0 : std::nearbyint(std::min(255.0, std::max(0.0, -low / scale)));
  const Tensor scale_t = nnp::full({}, scale, Dtype::f32, x.device());
  const Tensor zero_t = nnp::full({}, zero, Dtype::u8, x.device());
  const Tensor y = scale == 0 ? nnp::full(x.shape(), zero, Dtype::u8, x.device())
                              : saturate((x.to(Dtype::f32) / scale_t).round().to(Dtype::f64) + zero, Dtype::u8);
  return {y, scale_t, zero_t};
}

// An integer operand less its zero point (per-tensor, or per-row for
// MatMulInteger's a and per-column for b, per-channel for a conv weight), in f64.
Tensor centred(const Tensor& t, const Tensors& in, size_t zero_index, int32_t axis) {
  Tensor v = t.to(Dtype::f64);
  if (!given(in, zero_index)) return v;
  const Tensor& zero = in[zero_index];
  if (zero.numel() == 1) return v - zero.reshape({}).to(Dtype::f64);
  nnp::Shape shape(static_cast<size_t>(t.ndim()), 1);
  shape[static_cast<size_t>(axis < 0 ? axis + t.ndim() : axis)] = zero.numel();
  return v - zero.reshape(shape).to(Dtype::f64);
}

Tensors matmul_integer(const Tensors& in, const Node&) {
  const Tensor &a = need(in, 0, "MatMulInteger"), &b = need(in, 1, "MatMulInteger");
  return {centred(a, in, 2, -2).matmul(centred(b, in, 3, -1)).round().to(Dtype::i32)};
}

Tensors conv_integer(const Tensors& in, const Node& node) {
  const Tensor &x = need(in, 0, "ConvInteger"), &w = need(in, 1, "ConvInteger");
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
  const Tensor scale = need(in, 1, op).to(Dtype::f64).reshape({}) * w_scale / need(in, 6, op).to(Dtype::f64).reshape({});
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
