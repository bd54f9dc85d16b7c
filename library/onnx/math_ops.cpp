// ONNX's elementwise functions, activations, logic and bit ops, and the
// reductions beyond sum, mean, max and min. What the SDK's tensor ops can
// say is written with them (so it runs on any device and differentiates);
// what no backend has a kernel for (floor, tan, bit shifts) is computed on
// the host (op_support.hpp's host_elementwise).
#include <cmath>
#include <limits>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

namespace F = nnp::nn::functional;
using Reals = std::vector<double>;
using Ints = std::vector<int64_t>;

// A function of one floating value, on the host.
template <double (*Fn)(double)>
Tensors host_unary(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "elementwise op");
  if (!floating(x)) refuse("this op takes floating tensors");
  return {host_elementwise({x}, [](const Reals& v) { return Fn(v[0]); }, nullptr, "elementwise op")};
}
double floor_of(double v) { return std::floor(v); }
double ceil_of(double v) { return std::ceil(v); }
double tan_of(double v) { return std::tan(v); }
double asin_of(double v) { return std::asin(v); }
double acos_of(double v) { return std::acos(v); }
double atan_of(double v) { return std::atan(v); }
double sinh_of(double v) { return std::sinh(v); }
double cosh_of(double v) { return std::cosh(v); }
double asinh_of(double v) { return std::asinh(v); }
double acosh_of(double v) { return std::acosh(v); }
double atanh_of(double v) { return std::atanh(v); }

Tensors mod(const Tensors& in, const Node& a) {
  const Tensor &x = need(in, 0, "Mod"), &y = need(in, 1, "Mod");
  const bool fmod = attr_int(a, "fmod", 0) != 0;
  if (floating(x) && !fmod) invalid("Mod: floating operands need fmod=1");
  const bool unsigned64 = x.dtype() == Dtype::u64;  // its int64 values carry uint64's bits
  return {host_elementwise(
      {x, y.to(x.dtype())}, [](const Reals& v) { return std::fmod(v[0], v[1]); },
      [fmod, unsigned64](const Ints& v) {
        if (v[1] == 0) invalid("Mod: integer division by zero");
        if (unsigned64) return static_cast<int64_t>(static_cast<uint64_t>(v[0]) % static_cast<uint64_t>(v[1]));
        const int64_t r = v[0] % v[1];
        return (!fmod && r != 0 && ((r < 0) != (v[1] < 0))) ? r + v[1] : r;  // the divisor's sign
      },
      "Mod")};
}

Tensors is_nan(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "IsNaN");
  return {x.ne(x)};
}
Tensors is_inf(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "IsInf");
  const bool negative = attr_int(a, "detect_negative", 1) != 0, positive = attr_int(a, "detect_positive", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  if (positive && negative) return {x.abs().eq(x.scalar_like(inf))};
  if (positive || negative) return {x.eq(x.scalar_like(positive ? inf : -inf))};
  return {nnp::full(x.shape(), 0, Dtype::boolean, x.device())};
}

// And, Or, Xor of booleans; BitShift of unsigned integers.
template <int Kind>
Tensors logical(const Tensors& in, const Node&) {
  const Tensor &x = need(in, 0, "logical op"), &y = need(in, 1, "logical op");
  return {host_elementwise(
      {x.to(Dtype::boolean), y.to(Dtype::boolean)}, nullptr,
      [](const Ints& v) -> int64_t {
        const bool p = v[0] != 0, q = v[1] != 0;
        return Kind == 0 ? (p && q) : Kind == 1 ? (p || q) : (p != q);
      },
      "logical op", Dtype::boolean)};
}
Tensors bit_shift(const Tensors& in, const Node& a) {
  const Tensor &x = need(in, 0, "BitShift"), &y = need(in, 1, "BitShift");
  const Dtype d = x.dtype();
  if (d != Dtype::u8 && d != Dtype::u16 && d != Dtype::u32 && d != Dtype::u64)
    invalid("BitShift: the operands must be unsigned integers (uint8 to uint64)");
  const std::string direction = attr_string(a, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT") invalid("BitShift: direction must be LEFT or RIGHT");
  const bool left = direction == "LEFT";
  const uint64_t bits = 8 * nnp::dtype_size(d), mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return {host_elementwise(
      {x, y.to(d)}, nullptr,
      [left, bits, mask](const Ints& v) -> int64_t {
        // Unsigned throughout: the int64 values carry the operands' bits.
        const uint64_t value = static_cast<uint64_t>(v[0]) & mask, shift = static_cast<uint64_t>(v[1]) & mask;
        if (shift >= bits) return 0;
        return static_cast<int64_t>(left ? (value << shift) & mask : value >> shift);
      },
      "BitShift")};
}

Tensors elu(const Tensors& in, const Node& a) {
  return {F::elu(need(in, 0, "Elu"), F::ELUFuncOptions().alpha(attr_float(a, "alpha", 1.0)))};
}
Tensors selu(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Selu");
  const double alpha = attr_float(a, "alpha", 1.67326319217681884765625),
               gamma = attr_float(a, "gamma", 1.05070102214813232421875);
  return {F::elu(x, F::ELUFuncOptions().alpha(alpha)) * gamma};
}
Tensors celu(const Tensors& in, const Node& a) {
  return {F::celu(need(in, 0, "Celu"), F::CELUFuncOptions().alpha(attr_float(a, "alpha", 1.0)))};
}
Tensors hard_sigmoid(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "HardSigmoid");
  return {(x * attr_float(a, "alpha", 0.2) + attr_float(a, "beta", 0.5)).clamp(0.0, 1.0)};
}
Tensors hard_swish(const Tensors& in, const Node&) { return {F::hardswish(need(in, 0, "HardSwish"))}; }
Tensors softplus(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Softplus");
  // log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
  return {x.clamp_min(0.0) + ((-x.abs()).exp() + 1.0).log()};
}
Tensors softsign(const Tensors& in, const Node&) { return {F::softsign(need(in, 0, "Softsign"))}; }
Tensors mish(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Mish");
  return {x * (x.clamp_min(0.0) + ((-x.abs()).exp() + 1.0).log()).tanh()};
}
Tensors thresholded_relu(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "ThresholdedRelu");
  return {nnp::where(x.gt(x.scalar_like(attr_float(a, "alpha", 1.0))), x, x.scalar_like(0))};
}
Tensors shrink(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Shrink");
  const double bias = attr_float(a, "bias", 0.0), lambd = attr_float(a, "lambd", 0.5);
  const Tensor below = x.lt(x.scalar_like(-lambd)), above = x.gt(x.scalar_like(lambd));
  const Tensor shifted_up = (x.to(Dtype::f64) + bias).to(x.dtype()), shifted_down = (x.to(Dtype::f64) - bias).to(x.dtype());
  return {nnp::where(below, shifted_up, nnp::where(above, shifted_down, x.scalar_like(0)))};
}
Tensors prelu(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "PRelu");
  Tensor slope = need(in, 1, "PRelu");
  // Models of opsets before 7 (PyTorch's old exports) give one slope per
  // channel as [C] where broadcasting from the back would not reach axis 1.
  if (slope.ndim() == 1 && x.ndim() > 2 && slope.size(0) == x.size(1) && slope.size(0) != x.size(-1)) {
    nnp::Shape per_channel(static_cast<size_t>(x.ndim() - 1), 1);
    per_channel[0] = slope.size(0);
    slope = slope.reshape(per_channel);
  }
  return {nnp::where(x.lt(x.scalar_like(0)), x * slope, x)};
}
Tensors sum_mean(const Tensors& in, const Node&) {  // Mean of any count
  Tensor out = need(in, 0, "Mean");
  for (size_t i = 1; i < in.size(); ++i) out = out + need(in, i, "Mean");
  return {out / static_cast<double>(in.size())};
}

// The axes a reduction names (the input of opset 13/18, else the
// attribute); empty for every axis. nullopt: no reduction at all
// (noop_with_empty_axes with none given).
std::optional<std::vector<int32_t>> reduced_axes(const Tensors& in, const Node& a, const char* op) {
  const Tensor& x = need(in, 0, op);
  const std::vector<int64_t> axes = given(in, 1) ? host_ints(in[1]) : attr_ints(a, "axes");
  if (axes.empty() && attr_int(a, "noop_with_empty_axes", 0)) return std::nullopt;
  std::vector<int32_t> dims;
  for (int64_t axis : axes) dims.push_back(wrap(axis, x.ndim(), op));
  if (dims.empty())
    for (int32_t d = 0; d < x.ndim(); ++d) dims.push_back(d);
  return dims;
}

// ReduceL1, L2, LogSum, LogSumExp, SumSquare: a sum of a function of x,
// then a function of the sum.
template <int Kind>
Tensors reduce_composite(const Tensors& in, const Node& a) {
  const char* op = "Reduce";
  const Tensor& x = need(in, 0, op);
  const bool keep = attr_int(a, "keepdims", 1) != 0;
  const auto dims = reduced_axes(in, a, op);
  auto sum = [&](const Tensor& t) { return dims ? t.reduce(NNP_REDUCE_SUM, *dims, keep) : t; };
  switch (Kind) {
    case 0: return {sum(x.abs())};
    case 1: return {floating(x) ? sum(x * x).sqrt() : sum(x * x).to(Dtype::f64).sqrt().to(x.dtype())};
    case 2: return {sum(x).log()};
    case 3: {
      if (!dims) return {x};
      // log(sum(exp(x - top))) + top, top the largest finite value (0 where none is).
      const Tensor top = x.reduce(NNP_REDUCE_MAX, *dims, true).detach();
      const Tensor safe = nnp::where((top - top).eq(top.scalar_like(0)), top, top.scalar_like(0));
      const Tensor out = (x - safe).exp().reduce(NNP_REDUCE_SUM, *dims, true).log() + safe;
      return {keep ? out : out.reshape(x.reduce(NNP_REDUCE_SUM, *dims, false).shape())};
    }
    default: return {sum(x * x)};
  }
}
// ReduceProd: on the host (no product kernel); an integer product wraps as C's does.
Tensors reduce_prod(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "ReduceProd");
  const auto dims = reduced_axes(in, a, "ReduceProd");
  if (!dims) return {x};
  const bool keep = attr_int(a, "keepdims", 1) != 0;
  // Move the reduced axes last, flatten them, and multiply each row.
  std::vector<int32_t> order, sorted = *dims;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  nnp::Shape kept_shape, keep_dims_shape;
  for (int32_t d = 0; d < x.ndim(); ++d) {
    const bool reduced = std::binary_search(sorted.begin(), sorted.end(), d);
    if (!reduced) {
      order.push_back(d);
      kept_shape.push_back(x.size(d));
    }
    keep_dims_shape.push_back(reduced ? 1 : x.size(d));
  }
  int64_t row = 1;
  for (int32_t d : sorted) {
    order.push_back(d);
    row *= x.size(d);
  }
  const Tensor rows = x.permute(order).contiguous();
  const int64_t count = row == 0 ? 0 : rows.numel() / row;
  int64_t outputs = 1;
  for (int64_t s : kept_shape) outputs *= s;
  const bool as_integer = !floating(x);
  std::vector<double> reals = as_integer ? Reals{} : host_reals(rows);
  std::vector<int64_t> ints = as_integer ? host_ints(rows) : Ints{};
  Reals out_reals(static_cast<size_t>(outputs), 1.0);
  Ints out_ints(static_cast<size_t>(outputs), 1);
  for (int64_t r = 0; r < count; ++r)
    for (int64_t k = 0; k < row; ++k) {
      const size_t i = static_cast<size_t>(r * row + k);
      if (as_integer)
        out_ints[static_cast<size_t>(r)] = static_cast<int64_t>(static_cast<uint64_t>(out_ints[static_cast<size_t>(r)]) *
                                                                static_cast<uint64_t>(ints[i]));
      else
        out_reals[static_cast<size_t>(r)] *= reals[i];
    }
  const nnp::Shape shape = keep ? keep_dims_shape : kept_shape;
  Tensor out = as_integer ? nnp::from_vector(out_ints, shape, x.device()) : nnp::from_vector(out_reals, shape, x.device());
  return {out.to(x.dtype())};
}

Tensors cum_sum(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "CumSum");
  const std::vector<int64_t> axis = host_ints(need(in, 1, "CumSum"));
  if (axis.size() != 1) invalid("CumSum: axis must hold one value");
  const int32_t d = wrap(axis[0], x.ndim(), "CumSum");
  const bool exclusive = attr_int(a, "exclusive", 0) != 0, reverse = attr_int(a, "reverse", 0) != 0;
  auto flip = [&](const Tensor& t) {
    if (!reverse || t.size(d) == 0) return t;
    return t.index_select(d, nnp::arange(static_cast<double>(t.size(d) - 1), -1, -1, Dtype::i64, t.device()));
  };
  const Tensor source = flip(x);
  Tensor out = source.cumsum(d);
  if (exclusive) out = out - source;
  return {flip(out).to(x.dtype())};
}

Tensors hardmax(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Hardmax");
  const int32_t axis = wrap(attr_int(a, "axis", -1), x.ndim(), "Hardmax");
  const Tensor first = x.reduce(NNP_REDUCE_ARGMAX, {axis}, true);
  nnp::Shape index_shape(static_cast<size_t>(x.ndim()), 1);
  index_shape[static_cast<size_t>(axis)] = x.size(axis);
  const Tensor index = nnp::arange(0, static_cast<double>(x.size(axis)), 1, Dtype::i64, x.device()).reshape(index_shape);
  return {index.eq(first).to(x.dtype())};
}

Tensors size(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Size");
  return {nnp::from_vector(std::vector<int64_t>{x.numel()}, nnp::Shape{}, x.device())};
}
Tensors cast_like(const Tensors& in, const Node&) {
  return {need(in, 0, "CastLike").to(need(in, 1, "CastLike").dtype())};
}

// Trilu: the upper (or lower) triangle of the last two axes, from diagonal k.
Tensors trilu(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "Trilu");
  if (x.ndim() < 2) invalid("Trilu: the input needs two axes or more");
  const int64_t k = given(in, 1) ? host_ints(in[1]).at(0) : 0;
  const bool upper = attr_int(a, "upper", 1) != 0;
  const int64_t rows = x.size(-2), cols = x.size(-1);
  const Tensor i = nnp::arange(0, static_cast<double>(rows), 1, Dtype::i64, x.device()).reshape({rows, 1});
  const Tensor j = nnp::arange(0, static_cast<double>(cols), 1, Dtype::i64, x.device()).reshape({1, cols});
  const Tensor offset = j - i;  // j - i against k
  const Tensor keep = upper ? offset.ge(offset.scalar_like(static_cast<double>(k)))
                            : offset.le(offset.scalar_like(static_cast<double>(k)));
  return {nnp::where(keep, x, x.scalar_like(0))};
}

// InstanceNormalization: each (sample, channel) over its spatial axes.
Tensors instance_norm(const Tensors& in, const Node& a) {
  const char* op = "InstanceNormalization";
  const Tensor& x = need(in, 0, op);
  if (x.ndim() < 3) invalid(std::string(op) + ": needs [N, C, D1, ...]");
  std::vector<int32_t> dims;
  for (int32_t d = 2; d < x.ndim(); ++d) dims.push_back(d);
  nnp::Shape per_channel(static_cast<size_t>(x.ndim()), 1);
  per_channel[1] = -1;
  const Tensor mean = x.mean(dims, true), centred = x - mean, var = (centred * centred).mean(dims, true);
  return {centred * (var + var.scalar_like(attr_float(a, "epsilon", 1e-5))).rsqrt() *
              need(in, 1, op).reshape(per_channel) + need(in, 2, op).reshape(per_channel)};
}
// MeanVarianceNormalization: (x - mean) / (standard deviation + 1e-9) over axes ([0, 2, 3] by default).
Tensors mean_variance_norm(const Tensors& in, const Node& a) {
  const Tensor& x = need(in, 0, "MeanVarianceNormalization");
  std::vector<int64_t> axes = attr_ints(a, "axes");
  if (axes.empty()) axes = {0, 2, 3};
  std::vector<int32_t> dims;
  for (int64_t axis : axes) dims.push_back(wrap(axis, x.ndim(), "MeanVarianceNormalization"));
  const Tensor centred = x - x.mean(dims, true);
  return {centred / ((centred * centred).mean(dims, true).sqrt() + 1e-9)};
}

// The Hann, Hamming and Blackman windows: sum of k_i cos(2 pi i n / N),
// N the size (periodic) or the size - 1 (symmetric).
template <int Kind>
Tensors window(const Tensors& in, const Node& a) {
  const std::vector<int64_t> size_value = host_ints(need(in, 0, "window"));
  if (size_value.size() != 1 || size_value[0] < 0 || size_value[0] > kMaxElements)
    invalid("window op: size must be one non-negative value");
  const int64_t size = size_value[0];
  const double denominator = static_cast<double>(attr_int(a, "periodic", 1) ? size : size - 1);
  std::vector<double> values(static_cast<size_t>(size));
  constexpr double kPi = 3.14159265358979323846;
  for (int64_t n = 0; n < size; ++n) {
    const double x = 2 * kPi * static_cast<double>(n) / denominator;
    values[static_cast<size_t>(n)] = Kind == 0   ? 0.5 - 0.5 * std::cos(x)
                                     : Kind == 1 ? 25.0 / 46.0 - 21.0 / 46.0 * std::cos(x)
                                                 : 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
  }
  return {nnp::from_vector(values, {size}, in[0].device())
              .to(dtype_of_onnx(attr_int(a, "output_datatype", 1), "window op"))};
}

// Det: each trailing [n, n] matrix's determinant, by LU with partial pivoting on the host.
Tensors det(const Tensors& in, const Node&) {
  const Tensor& x = need(in, 0, "Det");
  if (x.ndim() < 2 || x.size(-1) != x.size(-2)) invalid("Det: needs [..., n, n]");
  const int64_t n = x.size(-1), count = n == 0 ? 0 : x.numel() / (n * n);
  std::vector<double> values = host_reals(x), out(static_cast<size_t>(count));
  for (int64_t m = 0; m < count; ++m) {
    double* a = values.data() + m * n * n;
    double result = 1;
    for (int64_t c = 0; c < n && result != 0; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
      if (a[pivot * n + c] == 0) {
        result = 0;
        break;
      }
      if (pivot != c) {
        for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[pivot * n + k]);
        result = -result;
      }
      result *= a[c * n + c];
      for (int64_t r = c + 1; r < n; ++r) {
        const double f = a[r * n + c] / a[c * n + c];
        for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      }
    }
    out[static_cast<size_t>(m)] = result;
  }
  nnp::Shape shape = x.shape();
  shape.resize(shape.size() - 2);
  return {nnp::from_vector(out, shape, x.device()).to(x.dtype())};
}

}  // namespace

void add_math_ops(OpTable& t) {
  t.insert({{"Acos", host_unary<acos_of>},
            {"Acosh", host_unary<acosh_of>},
            {"And", logical<0>},
            {"Asin", host_unary<asin_of>},
            {"Asinh", host_unary<asinh_of>},
            {"Atan", host_unary<atan_of>},
            {"Atanh", host_unary<atanh_of>},
            {"BitShift", bit_shift},
            {"CastLike", cast_like},
            {"Ceil", host_unary<ceil_of>},
            {"Celu", celu},
            {"Cosh", host_unary<cosh_of>},
            {"CumSum", cum_sum},
            {"Elu", elu},
            {"Floor", host_unary<floor_of>},
            {"BlackmanWindow", window<2>},
            {"Det", det},
            {"HammingWindow", window<1>},
            {"HannWindow", window<0>},
            {"HardSigmoid", hard_sigmoid},
            {"InstanceNormalization", instance_norm},
            {"MeanVarianceNormalization", mean_variance_norm},
            {"HardSwish", hard_swish},
            {"Hardmax", hardmax},
            {"IsInf", is_inf},
            {"IsNaN", is_nan},
            {"Mean", sum_mean},
            {"Mish", mish},
            {"Mod", mod},
            {"Or", logical<1>},
            {"PRelu", prelu},
            {"ReduceL1", reduce_composite<0>},
            {"ReduceL2", reduce_composite<1>},
            {"ReduceLogSum", reduce_composite<2>},
            {"ReduceLogSumExp", reduce_composite<3>},
            {"ReduceProd", reduce_prod},
            {"ReduceSumSquare", reduce_composite<4>},
            {"Selu", selu},
            {"Shrink", shrink},
            {"Sinh", host_unary<sinh_of>},
            {"Size", size},
            {"Softplus", softplus},
            {"Softsign", softsign},
            {"Tan", host_unary<tan_of>},
            {"ThresholdedRelu", thresholded_relu},
            {"Trilu", trilu},
            {"Xor", logical<2>}});
}

}  // namespace nnp::library::onnx
