// Quantized Linear and Conv2d: int8 weights (per output channel,
// symmetric), int8 activations, int32 sums on the backend's int8 GEMM.
// They take and give float tensors holding quantized values, so they chain
// with any layer: each quantizes its input with its own parameters (dynamic:
// from the batch's range; static: calibrated), and a static layer rounds its
// output to its calibrated output parameters (the next layer's input
// parameters, so that rounding is exact again there).
#include <cmath>
#include <nnp/nnp.hpp>
#include <nnp/quantization.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;

namespace {

// fbgemm's ChooseQuantizationParams (what PyTorch's dynamic Linear uses on
// each batch): the range widened to 0, the zero point nudged to the side
// with the smaller rounding error, over [0, 127] (reduce_range).
struct ActivationParams {
  double scale;
  int64_t zero_point;
};
ActivationParams choose_activation_params(float lo, float hi) {
  constexpr double qmin = 0, qmax = 127;
  const double min = std::min<double>(lo, 0.0), max = std::max<double>(hi, 0.0);
  double scale = (max - min) / (qmax - qmin);
  if (static_cast<float>(scale) == 0.0f || std::isinf(1.0f / static_cast<float>(scale))) scale = 0.1;
  const double from_min = qmin - min / scale, from_max = qmax - max / scale;
  const double error_min = std::fabs(qmin) - std::fabs(min / scale),
               error_max = std::fabs(qmax) - std::fabs(max / scale);
  const double initial = error_min < error_max ? from_min : from_max;
  const int64_t zero_point =
      initial < qmin ? 0 : (initial > qmax ? 127 : static_cast<int64_t>(std::nearbyint(initial)));
  return {static_cast<float>(scale), zero_point};
}

// The parts every quantized layer holds: the int8 weight [out, K] with its
// per-channel scales, the float bias.
struct QuantizedWeights : nnp::nn::Module {
  int64_t out_features, k;
  Tensor weight, weight_scale, weight_zero_point, bias;
  QuantizedWeights(const char* type, int64_t out, int64_t k_, bool has_bias, const Shape& weight_shape)
      : Module(type), out_features(out), k(k_) {
    if (out < 0 || k_ < 0) throw Error(NNP_INVALID_ARGUMENT, std::string(type) + ": sizes must be >= 0");
    weight = register_buffer("weight", zeros(weight_shape, Dtype::i8));
    weight_scale = register_buffer("weight_scale", ones({out}, Dtype::f64));
    weight_zero_point = register_buffer("weight_zero_point", zeros({out}, Dtype::i64));
    if (has_bias) bias = register_buffer("bias", zeros({out}));
  }
  // rows [M, K] (floats) quantized with the activations' parameters, times
  // the weights, rescaled to floats and biased: [M, out]. The activations
  // become i8 offsets from their zero point, clamp(round(x / scale),
  // -zero_point, 127): the quint8 value minus its zero point with the top
  // clamped to fit int8 (calibrated ranges use [0, 127]; only inputs past
  // twice the calibrated range meet that clamp). Each column's int32 sum is
  // then scaled by weight_scale * input_scale, in f32.
  Tensor quantized_product(const Tensor& rows, double input_scale, int64_t input_zero_point) const {
    const Tensor column_scale =
        get_buffer("weight_scale").to(Dtype::f32) * static_cast<double>(static_cast<float>(input_scale));
    return quantized_matmul(rows, input_scale, input_zero_point, get_buffer("weight").reshape({out_features, k}),
                            column_scale, bias.defined() ? get_buffer("bias") : Tensor());
  }
};

std::string qscheme_text() { return "qscheme=torch.per_channel_affine"; }

// torch.ao.nn.quantized.dynamic.Linear: activations quantized per batch.
struct DynamicQuantizedLinear : QuantizedWeights {
  int64_t in_features;
  explicit DynamicQuantizedLinear(const Attrs& a)
      : QuantizedWeights("DynamicQuantizedLinear", a.integer("out_features"), a.integer("in_features"),
                         a.boolean("bias"), {a.integer("out_features"), a.integer("in_features")}),
        in_features(a.integer("in_features")) {}
  Tensor forward(const Tensor& x) override {
    if (x.ndim() < 1 || x.size(-1) != in_features)
      throw Error(NNP_SHAPE_MISMATCH, "DynamicQuantizedLinear: input " + shape_text(x.shape()) + " does not end in " +
                                          std::to_string(in_features) + " features");
    Shape out_shape = x.shape();
    out_shape.back() = out_features;
    const Tensor rows = x.reshape({-1, in_features});
    if (rows.size(0) == 0) return zeros(out_shape, Dtype::f32, x.device());
    const Tensor flat = rows.detach();
    const ActivationParams p = choose_activation_params(flat.amin().item<float>(), flat.amax().item<float>());
    return quantized_product(flat, p.scale, p.zero_point).reshape(out_shape);
  }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) +
           ", dtype=torch.qint8, " + qscheme_text();
  }
};

// The static layers' activation parameters: the input's (calibrated) and
// the output's, with the output clamped at its zero point when a ReLU was
// fused in.
struct StaticParams {
  Tensor input_scale, input_zero_point, scale, zero_point;
  bool relu;
};

struct StaticQuantized : QuantizedWeights {
  bool relu;
  StaticQuantized(const char* type, int64_t out, int64_t k_, bool has_bias, const Shape& weight_shape, bool relu_)
      : QuantizedWeights(type, out, k_, has_bias, weight_shape), relu(relu_) {
    register_buffer("input_scale", ones({}));
    register_buffer("input_zero_point", zeros({}, Dtype::i64));
    register_buffer("scale", ones({}));
    register_buffer("zero_point", zeros({}, Dtype::i64));
  }
  double input_scale() const { return get_buffer("input_scale").item<float>(); }
  int64_t input_zero_point() const { return get_buffer("input_zero_point").item<int64_t>(); }
  // y rounded to the output's quint8 grid (and clamped at its zero point
  // with a fused ReLU), as floats.
  Tensor requantize(const Tensor& y) const {
    const double s = get_buffer("scale").item<float>();
    const int64_t z = get_buffer("zero_point").item<int64_t>();
    return fake_quantize_per_tensor_affine(y, s, z, relu ? z : 0, 255);
  }
  std::string output_text() const {
    return "scale=" + nnp::nn::format_float(get_buffer("scale").item<float>()) +
           ", zero_point=" + std::to_string(get_buffer("zero_point").item<int64_t>());
  }
};

// torch.ao.nn.quantized.Linear (and LinearReLU, relu=true).
struct QuantizedLinear : StaticQuantized {
  int64_t in_features;
  explicit QuantizedLinear(const Attrs& a)
      : StaticQuantized(a.boolean("relu") ? "QuantizedLinearReLU" : "QuantizedLinear", a.integer("out_features"),
                        a.integer("in_features"), a.boolean("bias"),
                        {a.integer("out_features"), a.integer("in_features")}, a.boolean("relu")),
        in_features(a.integer("in_features")) {}
  Tensor forward(const Tensor& x) override {
    if (x.ndim() < 1 || x.size(-1) != in_features)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": input " + shape_text(x.shape()) + " does not end in " +
                                          std::to_string(in_features) + " features");
    Shape out_shape = x.shape();
    out_shape.back() = out_features;
    const Tensor rows = x.reshape({-1, in_features}).detach();
    if (rows.size(0) == 0) return zeros(out_shape, Dtype::f32, x.device());
    return requantize(quantized_product(rows, input_scale(), input_zero_point())).reshape(out_shape);
  }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(in_features) + ", out_features=" + std::to_string(out_features) + ", " +
           output_text() + ", " + qscheme_text();
  }
};

// torch.ao.nn.quantized.Conv2d (and ConvReLU2d): im2col of the input (its
// padding, 0.0, quantizes to offset 0, the quantized zero), one int8 GEMM.
// in_channels * kh * kw, refused before it could overflow.
int64_t conv_columns(const Attrs& a, const std::vector<int64_t>& kernel) {
  const int64_t c = a.integer("in_channels");
  if (c < 1 || c > (int64_t{1} << 24) || kernel[0] < 1 || kernel[1] < 1 || kernel[0] > 4096 || kernel[1] > 4096)
    throw Error(NNP_INVALID_ARGUMENT, "QuantizedConv2d: in_channels " + std::to_string(c) + " and kernel_size " +
                                          shape_text(kernel) + " must be positive (and at most 2^24 and 4096)");
  return c * kernel[0] * kernel[1];
}

struct QuantizedConv2d : StaticQuantized {
  int64_t in_channels;
  nnp::nn::functional::detail::Window window;
  nnp::nn::functional::detail::WindowIndexCache cache;
  std::vector<int64_t> kernel, stride, padding, dilation;
  explicit QuantizedConv2d(const Attrs& a)
      : StaticQuantized(
            a.boolean("relu") ? "QuantizedConvReLU2d" : "QuantizedConv2d", a.integer("out_channels"),
            conv_columns(a, pair(a, "kernel_size")), a.boolean("bias"),
            {a.integer("out_channels"), a.integer("in_channels"), pair(a, "kernel_size")[0], pair(a, "kernel_size")[1]},
            a.boolean("relu")),
        in_channels(a.integer("in_channels")),
        kernel(pair(a, "kernel_size")),
        stride(pair(a, "stride")),
        padding(pair(a, "padding")),
        dilation(pair(a, "dilation")) {
    window.kernel = {kernel[0], kernel[1]};
    window.stride = {stride[0], stride[1]};
    window.padding = {padding[0], padding[1]};
    window.dilation = {dilation[0], dilation[1]};
    nnp::nn::functional::detail::check_window(type_name(), window);
  }
  static std::vector<int64_t> pair(const Attrs& a, const char* name) {
    std::vector<int64_t> v = a.integers(name);
    if (v.size() == 1) v.push_back(v[0]);
    if (v.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT, std::string("QuantizedConv2d: ") + name + " takes one or two integers");
    return v;
  }
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != 4 || x.size(1) != in_channels)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected an input [N, " + std::to_string(in_channels) +
                                          ", H, W], got " + shape_text(x.shape()));
    namespace d = nnp::nn::functional::detail;
    const d::Geometry g = d::geometry(type_name(), x, window);
    const int64_t n = x.size(0);
    // columns [K, N * L] -> rows [N * L, K]
    const Tensor cols = d::im2col(x.detach(), window, g, cache).t().contiguous();
    const Tensor y = requantize(quantized_product(cols, input_scale(), input_zero_point()));  // [N * L, out]
    return y.reshape({n, g.oh, g.ow, out_features}).permute({0, 3, 1, 2}).contiguous();
  }
  std::string extra_repr() const override {
    auto tuple = [](const std::vector<int64_t>& v) {
      return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ")";
    };
    std::string s = std::to_string(in_channels) + ", " + std::to_string(out_features) +
                    ", kernel_size=" + tuple(kernel) + ", stride=" + tuple(stride) + ", " + output_text();
    if (padding[0] != 0 || padding[1] != 0) s += ", padding=" + tuple(padding);
    if (dilation[0] != 1 || dilation[1] != 1) s += ", dilation=" + tuple(dilation);
    if (!bias.defined()) s += ", bias=False";
    return s;
  }
};

}  // namespace

void register_quantized_layers(nnp_plugin_host* host) {
  const std::vector<AttrDecl> linear = {{"in_features", NNP_ATTR_INT, true, nullptr, "size of each input sample"},
                                        {"out_features", NNP_ATTR_INT, true, nullptr, "size of each output sample"},
                                        {"bias", NNP_ATTR_BOOL, false, "true", "add a float bias"}};
  add_builtin<DynamicQuantizedLinear>(host, "nn.quantized.dynamic.Linear",
                                      "int8 Linear; activations quantized per batch", linear);
  std::vector<AttrDecl> static_linear = linear;
  static_linear.push_back({"relu", NNP_ATTR_BOOL, false, "false", "a ReLU fused in (LinearReLU)"});
  add_builtin<QuantizedLinear>(host, "nn.quantized.Linear", "int8 Linear with calibrated activations", static_linear);
  add_builtin<QuantizedConv2d>(host, "nn.quantized.Conv2d", "int8 Conv2d with calibrated activations (groups 1)",
                               {{"in_channels", NNP_ATTR_INT, true, nullptr, "input channels"},
                                {"out_channels", NNP_ATTR_INT, true, nullptr, "output channels"},
                                {"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size (one or two integers)"},
                                {"stride", NNP_ATTR_INTS, false, "[1]", "step between windows"},
                                {"padding", NNP_ATTR_INTS, false, "[0]", "zeros added on each side"},
                                {"dilation", NNP_ATTR_INTS, false, "[1]", "spacing of the window's taps"},
                                {"bias", NNP_ATTR_BOOL, false, "true", "add a float bias"},
                                {"relu", NNP_ATTR_BOOL, false, "false", "a ReLU fused in (ConvReLU2d)"}});
}

}  // namespace nnp::library::layers
