// nn.Dropout1d, nn.Dropout2d, nn.Dropout3d (whole channels),
// nn.AlphaDropout and nn.FeatureAlphaDropout (SELU's moments kept): the
// functions of nnp/functional/dropout.hpp while training, the identity
// otherwise. (nn.Dropout is in linear_layers.cpp.)
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

template <Tensor (*Fn)(const Tensor&, const F::FeatureDropoutFuncOptions&)>
struct DropoutLike : nnp::nn::Module {
  double p;
  bool inplace;
  DropoutLike(const char* name, const Attrs& a) : Module(name), p(a.real("p")), inplace(a.boolean("inplace")) {
    F::detail::check_probability(name, p);
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = Fn(x, F::FeatureDropoutFuncOptions(p).training(is_training()));
    if (inplace && y.get() != x.get()) {
      Tensor(x).copy_(y);  // PyTorch's inplace=True: the input holds the result
      return x;
    }
    return y;
  }
  std::string extra_repr() const override {
    return "p=" + nnp::nn::format_float(p) + ", inplace=" + nnp::nn::format_bool(inplace);
  }
};

struct Dropout1d : DropoutLike<F::dropout1d> {
  explicit Dropout1d(const Attrs& a) : DropoutLike("Dropout1d", a) {}
};
struct Dropout2d : DropoutLike<F::dropout2d> {
  explicit Dropout2d(const Attrs& a) : DropoutLike("Dropout2d", a) {}
};
struct Dropout3d : DropoutLike<F::dropout3d> {
  explicit Dropout3d(const Attrs& a) : DropoutLike("Dropout3d", a) {}
};
struct AlphaDropout : DropoutLike<F::alpha_dropout> {
  explicit AlphaDropout(const Attrs& a) : DropoutLike("AlphaDropout", a) {}
};
struct FeatureAlphaDropout : DropoutLike<F::feature_alpha_dropout> {
  explicit FeatureAlphaDropout(const Attrs& a) : DropoutLike("FeatureAlphaDropout", a) {}
};

void register_dropout_layers(nnp_plugin_host* host) {
  const std::vector<AttrDecl> attrs{
      {"p", NNP_ATTR_FLOAT, false, "0.5", "probability of an element (or channel) to be zeroed"},
      {"inplace", NNP_ATTR_BOOL, false, "false", "write the result into the input"}};
  add_builtin<Dropout1d>(host, "nn.Dropout1d", "zeroes whole channels of [N, C, L] while training", attrs);
  add_builtin<Dropout2d>(host, "nn.Dropout2d", "zeroes whole channels of [N, C, H, W] while training", attrs);
  add_builtin<Dropout3d>(host, "nn.Dropout3d", "zeroes whole channels of [N, C, D, H, W] while training", attrs);
  add_builtin<AlphaDropout>(host, "nn.AlphaDropout", "dropout that keeps SELU's mean and variance", attrs);
  add_builtin<FeatureAlphaDropout>(host, "nn.FeatureAlphaDropout", "alpha dropout of whole channels", attrs);
}

}  // namespace nnp::library::layers
