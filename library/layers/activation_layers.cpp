// Activation layers: every one PyTorch has (nn.ReLU, nn.ELU, nn.Hardswish,
// nn.PReLU, nn.Softmax, ...), each calling its nnp::nn::functional function,
// with PyTorch's attributes, defaults and extra_repr.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// A parameter-free layer applying one unary op.
template <nnp_unary_op Op>
struct Pointwise : nnp::nn::Module {
  explicit Pointwise(const char* name) : Module(name) {}
  Tensor forward(const Tensor& x) override { return x.unary(Op); }
};
struct ReLU : Pointwise<NNP_UNARY_RELU> {
  explicit ReLU(const Attrs&) : Pointwise("ReLU") {}
};
struct SiLU : Pointwise<NNP_UNARY_SILU> {
  explicit SiLU(const Attrs&) : Pointwise("SiLU") {}
};
struct Sigmoid : Pointwise<NNP_UNARY_SIGMOID> {
  explicit Sigmoid(const Attrs&) : Pointwise("Sigmoid") {}
};
struct Tanh : Pointwise<NNP_UNARY_TANH> {
  explicit Tanh(const Attrs&) : Pointwise("Tanh") {}
};

struct LeakyReLU : nnp::nn::Module {
  double slope;
  explicit LeakyReLU(const Attrs& a) : Module("LeakyReLU"), slope(a.real("negative_slope")) {}
  Tensor forward(const Tensor& x) override { return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(slope)); }
  std::string extra_repr() const override { return "negative_slope=" + nnp::nn::format_float(slope); }
};

struct GELU : nnp::nn::Module {
  std::string approximate;
  explicit GELU(const Attrs& a) : Module("GELU"), approximate(a.string("approximate")) {
    if (approximate != "none" && approximate != "tanh")
      throw Error(NNP_INVALID_ARGUMENT, "GELU: approximate must be 'none' or 'tanh', got '" + approximate + "'");
  }
  Tensor forward(const Tensor& x) override { return F::gelu(x, F::GELUFuncOptions().approximate(approximate)); }
  std::string extra_repr() const override { return "approximate='" + approximate + "'"; }
};

// A layer whose forward is one function of its input: the function and the
// repr come from the subclass.
struct Elementwise : nnp::nn::Module {
  using Module::Module;
  std::string repr_text;
  std::string extra_repr() const override { return repr_text; }
};
std::string inplace_suffix(const Attrs& a, bool first) {
  return a.boolean("inplace") ? (first ? "inplace=True" : ", inplace=True") : "";
}
// Python prints PyTorch's integer defaults (Softplus(beta=1)) without ".0".
std::string python_number(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<int64_t>(v)) : nnp::nn::format_float(v);
}

struct ELU : Elementwise {
  F::ELUFuncOptions o;
  explicit ELU(const Attrs& a) : Elementwise("ELU") {
    o.alpha(a.real("alpha")).inplace(a.boolean("inplace"));
    repr_text = "alpha=" + nnp::nn::format_float(o.alpha()) + inplace_suffix(a, false);
  }
  Tensor forward(const Tensor& x) override { return F::elu(x, o); }
};
struct CELU : Elementwise {
  F::CELUFuncOptions o;
  explicit CELU(const Attrs& a) : Elementwise("CELU") {
    o.alpha(a.real("alpha")).inplace(a.boolean("inplace"));
    if (o.alpha() == 0) throw Error(NNP_INVALID_ARGUMENT, "CELU: alpha must not be 0 (it divides x)");
    repr_text = "alpha=" + nnp::nn::format_float(o.alpha()) + inplace_suffix(a, false);
  }
  Tensor forward(const Tensor& x) override { return F::celu(x, o); }
};
struct SELU : Elementwise {
  bool inplace;
  explicit SELU(const Attrs& a) : Elementwise("SELU"), inplace(a.boolean("inplace")) {
    repr_text = inplace_suffix(a, true);
  }
  Tensor forward(const Tensor& x) override { return F::selu(x, F::SELUFuncOptions().inplace(inplace)); }
};
struct GLU : Elementwise {
  int64_t dim;
  explicit GLU(const Attrs& a) : Elementwise("GLU"), dim(a.integer("dim")) { repr_text = "dim=" + std::to_string(dim); }
  Tensor forward(const Tensor& x) override { return F::glu(x, F::GLUFuncOptions().dim(dim)); }
};
struct Hardtanh : Elementwise {
  F::HardtanhFuncOptions o;
  explicit Hardtanh(const Attrs& a, const char* name = "Hardtanh") : Elementwise(name) {
    o.min_val(a.real("min_val")).max_val(a.real("max_val")).inplace(a.boolean("inplace"));
    if (o.max_val() < o.min_val()) throw Error(NNP_INVALID_ARGUMENT, "Hardtanh: max_val must be larger than min_val");
    repr_text = "min_val=" + nnp::nn::format_float(o.min_val()) + ", max_val=" + nnp::nn::format_float(o.max_val()) +
                inplace_suffix(a, false);
  }
  Tensor forward(const Tensor& x) override { return F::hardtanh(x, o); }
};
struct ReLU6 : Elementwise {
  bool inplace;
  explicit ReLU6(const Attrs& a) : Elementwise("ReLU6"), inplace(a.boolean("inplace")) {
    repr_text = inplace_suffix(a, true);
  }
  Tensor forward(const Tensor& x) override { return F::relu6(x, F::ReLU6FuncOptions().inplace(inplace)); }
};
struct Hardswish : Elementwise {
  bool inplace;
  explicit Hardswish(const Attrs& a) : Elementwise("Hardswish"), inplace(a.boolean("inplace")) {}
  Tensor forward(const Tensor& x) override { return F::hardswish(x, F::HardswishFuncOptions().inplace(inplace)); }
};
struct Hardsigmoid : Elementwise {
  bool inplace;
  explicit Hardsigmoid(const Attrs& a) : Elementwise("Hardsigmoid"), inplace(a.boolean("inplace")) {}
  Tensor forward(const Tensor& x) override { return F::hardsigmoid(x, F::HardsigmoidFuncOptions().inplace(inplace)); }
};
struct Mish : Elementwise {
  bool inplace;
  explicit Mish(const Attrs& a) : Elementwise("Mish"), inplace(a.boolean("inplace")) {}
  Tensor forward(const Tensor& x) override { return F::mish(x, F::MishFuncOptions().inplace(inplace)); }
};
template <bool Soft>
struct Shrink : Elementwise {
  double lambda;
  explicit Shrink(const Attrs& a) : Elementwise(Soft ? "Softshrink" : "Hardshrink"), lambda(a.real("lambd")) {
    if (Soft && !(lambda >= 0))
      throw Error(NNP_INVALID_ARGUMENT,
                  "Softshrink: lambda must be greater or equal to 0, but found to be " + nnp::nn::format_float(lambda));
    repr_text = nnp::nn::format_float(lambda);
  }
  Tensor forward(const Tensor& x) override {
    return Soft ? F::softshrink(x, F::SoftshrinkFuncOptions().lambda(lambda))
                : F::hardshrink(x, F::HardshrinkFuncOptions().lambda(lambda));
  }
};
struct Tanhshrink : Elementwise {
  explicit Tanhshrink(const Attrs&) : Elementwise("Tanhshrink") {}
  Tensor forward(const Tensor& x) override { return F::tanhshrink(x); }
};
struct Softsign : Elementwise {
  explicit Softsign(const Attrs&) : Elementwise("Softsign") {}
  Tensor forward(const Tensor& x) override { return F::softsign(x); }
};
struct LogSigmoid : Elementwise {
  explicit LogSigmoid(const Attrs&) : Elementwise("LogSigmoid") {}
  Tensor forward(const Tensor& x) override { return F::logsigmoid(x); }
};
struct Softplus : Elementwise {
  F::SoftplusFuncOptions o;
  explicit Softplus(const Attrs& a) : Elementwise("Softplus") {
    o.beta(a.real("beta")).threshold(a.real("threshold"));
    if (o.beta() == 0) throw Error(NNP_INVALID_ARGUMENT, "Softplus: beta must not be 0 (it divides)");
    repr_text = "beta=" + python_number(o.beta()) + ", threshold=" + python_number(o.threshold());
  }
  Tensor forward(const Tensor& x) override { return F::softplus(x, o); }
};
struct Threshold : Elementwise {
  F::ThresholdFuncOptions o;
  explicit Threshold(const Attrs& a) : Elementwise("Threshold"), o(a.real("threshold"), a.real("value")) {
    o.inplace(a.boolean("inplace"));
    repr_text =
        "threshold=" + python_number(o.threshold()) + ", value=" + python_number(o.value()) + inplace_suffix(a, false);
  }
  Tensor forward(const Tensor& x) override { return F::threshold(x, o); }
};
struct RReLU : Elementwise {
  F::RReLUFuncOptions o;
  explicit RReLU(const Attrs& a) : Elementwise("RReLU") {
    o.lower(a.real("lower")).upper(a.real("upper")).inplace(a.boolean("inplace"));
    if (o.upper() < o.lower())
      throw Error(NNP_INVALID_ARGUMENT,
                  "RReLU: lower must not exceed upper, got lower=" + nnp::nn::format_float(o.lower()) +
                      ", upper=" + nnp::nn::format_float(o.upper()));
    repr_text = "lower=" + nnp::nn::format_float(o.lower()) + ", upper=" + nnp::nn::format_float(o.upper()) +
                inplace_suffix(a, false);
  }
  Tensor forward(const Tensor& x) override { return F::rrelu(x, F::RReLUFuncOptions(o).training(is_training())); }
};
struct PReLU : Elementwise {
  Tensor weight;
  explicit PReLU(const Attrs& a) : Elementwise("PReLU") {
    const int64_t n = a.integer("num_parameters");
    if (n < 1) throw Error(NNP_INVALID_ARGUMENT, "PReLU: num_parameters must be at least 1, got " + std::to_string(n));
    weight = register_parameter("weight", nnp::full({n}, a.real("init")));
    repr_text = "num_parameters=" + std::to_string(n);
  }
  Tensor forward(const Tensor& x) override { return F::prelu(x, weight); }
};
struct Softmax2d : Elementwise {
  explicit Softmax2d(const Attrs&) : Elementwise("Softmax2d") {}
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != 3 && x.ndim() != 4)
      throw Error(NNP_INVALID_ARGUMENT,
                  "Softmax2d: expected input to be 3D or 4D, got " + std::to_string(x.ndim()) + "D instead");
    return F::softmax(x, -3);
  }
};

// PyTorch's rule when dim is not given (legacy implicit dimension).
int32_t implicit_softmax_dim(int32_t ndim) { return ndim == 0 || ndim == 1 || ndim == 3 ? 0 : 1; }

enum class SoftmaxKind { Softmax, LogSoftmax, Softmin };
constexpr const char* softmax_name(SoftmaxKind k) {
  return k == SoftmaxKind::Softmax ? "Softmax" : k == SoftmaxKind::LogSoftmax ? "LogSoftmax" : "Softmin";
}

template <SoftmaxKind Kind>
struct SoftmaxLayer : nnp::nn::Module {
  bool has_dim;
  int32_t dim;
  explicit SoftmaxLayer(const Attrs& a)
      : Module(softmax_name(Kind)), has_dim(a.has("dim")), dim(has_dim ? dim_of(a.integer("dim")) : 0) {}
  // A tensor has at most 8 dimensions: a dim past int32 was truncated silently.
  int32_t dim_of(int64_t value) const {
    if (value < -NNP_MAX_DIMS || value >= NNP_MAX_DIMS)
      throw Error(NNP_INVALID_ARGUMENT, std::string(softmax_name(Kind)) + ": dim " + std::to_string(value) +
                                            " is out of range (a tensor has at most " + std::to_string(NNP_MAX_DIMS) +
                                            " dimensions)");
    return static_cast<int32_t>(value);
  }
  Tensor forward(const Tensor& x) override {
    int32_t d = has_dim ? dim : implicit_softmax_dim(x.ndim());
    if (Kind == SoftmaxKind::Softmin) return F::softmin(x, d);
    return Kind == SoftmaxKind::LogSoftmax ? F::log_softmax(x, d) : F::softmax(x, d);
  }
  std::string extra_repr() const override { return has_dim ? "dim=" + std::to_string(dim) : "dim=None"; }
};

void register_activation_layers(nnp_plugin_host* host) {
  add_builtin<ReLU>(host, "nn.ReLU", "max(0, x)", {});
  add_builtin<LeakyReLU>(host, "nn.LeakyReLU", "x if x > 0 else negative_slope * x",
                         {{"negative_slope", NNP_ATTR_FLOAT, false, "0.01", "slope for negative inputs"}});
  add_builtin<GELU>(host, "nn.GELU", "x * Phi(x), exact or tanh-approximated",
                    {{"approximate", NNP_ATTR_STRING, false, "\"none\"", "'none' (erf) or 'tanh'"}});
  add_builtin<SiLU>(host, "nn.SiLU", "x * sigmoid(x)", {});
  add_builtin<Sigmoid>(host, "nn.Sigmoid", "1 / (1 + exp(-x))", {});
  add_builtin<Tanh>(host, "nn.Tanh", "tanh(x)", {});
  add_builtin<SoftmaxLayer<SoftmaxKind::Softmax>>(
      host, "nn.Softmax", "softmax along dim",
      {{"dim", NNP_ATTR_INT, false, nullptr, "dimension the values sum to 1 along"}});
  add_builtin<SoftmaxLayer<SoftmaxKind::LogSoftmax>>(
      host, "nn.LogSoftmax", "log of softmax along dim",
      {{"dim", NNP_ATTR_INT, false, nullptr, "dimension of the softmax"}});
  add_builtin<SoftmaxLayer<SoftmaxKind::Softmin>>(host, "nn.Softmin", "softmax of -x along dim",
                                                  {{"dim", NNP_ATTR_INT, false, nullptr, "dimension of the softmin"}});
  add_builtin<Softmax2d>(host, "nn.Softmax2d", "softmax over the channels of [C, H, W] or [N, C, H, W]", {});

  const AttrDecl inplace{"inplace", NNP_ATTR_BOOL, false, "false", "write the result into the input"};
  add_builtin<ELU>(host, "nn.ELU", "x if x > 0 else alpha * (exp(x) - 1)",
                   {{"alpha", NNP_ATTR_FLOAT, false, "1.0", "value the negative side tends to (-alpha)"}, inplace});
  add_builtin<CELU>(host, "nn.CELU", "max(0, x) + min(0, alpha * (exp(x / alpha) - 1))",
                    {{"alpha", NNP_ATTR_FLOAT, false, "1.0", "alpha of the CELU formulation"}, inplace});
  add_builtin<SELU>(host, "nn.SELU", "scale * elu(x, alpha) with the self-normalising constants", {inplace});
  add_builtin<GLU>(host, "nn.GLU", "a * sigmoid(b), x split in halves a, b along dim",
                   {{"dim", NNP_ATTR_INT, false, "-1", "dimension split in two"}});
  add_builtin<Hardtanh>(host, "nn.Hardtanh", "x clamped to [min_val, max_val]",
                        {{"min_val", NNP_ATTR_FLOAT, false, "-1.0", "lower bound"},
                         {"max_val", NNP_ATTR_FLOAT, false, "1.0", "upper bound"},
                         inplace});
  add_builtin<ReLU6>(host, "nn.ReLU6", "min(max(0, x), 6)", {inplace});
  add_builtin<Hardswish>(host, "nn.Hardswish", "x * relu6(x + 3) / 6", {inplace});
  add_builtin<Hardsigmoid>(host, "nn.Hardsigmoid", "relu6(x + 3) / 6", {inplace});
  add_builtin<Shrink<false>>(host, "nn.Hardshrink", "x if |x| > lambd else 0",
                             {{"lambd", NNP_ATTR_FLOAT, false, "0.5", "half-width of the zeroed band"}});
  add_builtin<Shrink<true>>(host, "nn.Softshrink", "x - lambd, x + lambd, or 0 inside [-lambd, lambd]",
                            {{"lambd", NNP_ATTR_FLOAT, false, "0.5", "half-width of the zeroed band (>= 0)"}});
  add_builtin<Tanhshrink>(host, "nn.Tanhshrink", "x - tanh(x)", {});
  add_builtin<Softsign>(host, "nn.Softsign", "x / (1 + |x|)", {});
  add_builtin<LogSigmoid>(host, "nn.LogSigmoid", "log(sigmoid(x))", {});
  add_builtin<Softplus>(host, "nn.Softplus", "log(1 + exp(beta * x)) / beta, linear past threshold",
                        {{"beta", NNP_ATTR_FLOAT, false, "1.0", "sharpness"},
                         {"threshold", NNP_ATTR_FLOAT, false, "20.0", "beta * x past which the result is x"}});
  add_builtin<Mish>(host, "nn.Mish", "x * tanh(softplus(x))", {inplace});
  add_builtin<Threshold>(host, "nn.Threshold", "x if x > threshold else value",
                         {{"threshold", NNP_ATTR_FLOAT, true, nullptr, "the value to threshold at"},
                          {"value", NNP_ATTR_FLOAT, true, nullptr, "the value to replace with"},
                          inplace});
  add_builtin<RReLU>(host, "nn.RReLU", "leaky ReLU with a random slope in [lower, upper] while training",
                     {{"lower", NNP_ATTR_FLOAT, false, "0.125", "lower bound of the slope"},
                      {"upper", NNP_ATTR_FLOAT, false, "0.3333333333333333", "upper bound of the slope"},
                      inplace});
  add_builtin<PReLU>(host, "nn.PReLU", "x if x > 0 else weight * x, weight learned per channel",
                     {{"num_parameters", NNP_ATTR_INT, false, "1", "1, or the number of channels (dimension 1)"},
                      {"init", NNP_ATTR_FLOAT, false, "0.25", "initial value of the weight"}});
}

}  // namespace nnp::library::layers
