// Layer types composed of core ops, so autograd comes for free:
//   act.Swish  x * sigmoid(beta x)            (beta: float, default 1.0)
//   act.Mish   x * tanh(softplus(x))
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>

namespace {

using nnp::Tensor;
using nnp::nn::Attrs;

struct Swish : nnp::nn::Module {
  double beta;
  explicit Swish(const Attrs& a) : Module("Swish"), beta(a.real("beta")) {}
  Tensor forward(const Tensor& x) override { return x * (x * beta).sigmoid(); }
  std::string extra_repr() const override { return "beta=" + nnp::nn::format_float(beta); }
};

struct Mish : nnp::nn::Module {
  explicit Mish(const Attrs&) : Module("Mish") {}
  Tensor forward(const Tensor& x) override {
    // softplus(x) = max(x, 0) + log(1 + exp(-|x|)): no overflow for large |x|.
    Tensor softplus = x.relu() + ((-x.abs()).exp() + 1.0).log();
    return x * softplus.tanh();
  }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<Swish>(host, "act.Swish", "x * sigmoid(beta * x)",
                                   {{"beta", NNP_ATTR_FLOAT, false, "1.0", "slope inside the sigmoid"}});
    nnp::nn::register_layer<Mish>(host, "act.Mish", "x * tanh(softplus(x))");
  });
}

}  // namespace

NNP_PLUGIN("nnplug.activations", "0.1.0", "activations composed of core ops: Swish, Mish", init)
