// Layer types composed of core ops, so autograd comes for free:
//   act.Swish  x * sigmoid(beta x)            (beta: float, default 1.0)
//   act.Mish   x * tanh(softplus(x))
#include <nnp/plugin.h>

#include <nnp/nnp.hpp>

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

const nnp_attr_def kSwishAttrs[] = {
    {sizeof(nnp_attr_def), "beta", NNP_ATTR_FLOAT, 0, "1.0", "slope inside the sigmoid"}};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  nnp::set_api(api);
  const nnp_layer_type swish{sizeof(nnp_layer_type),          "act.Swish", "x * sigmoid(beta * x)", kSwishAttrs, 1,
                             nnp::nn::create_layer_of<Swish>, nullptr};
  const nnp_layer_type mish{sizeof(nnp_layer_type),         "act.Mish", "x * tanh(softplus(x))", nullptr, 0,
                            nnp::nn::create_layer_of<Mish>, nullptr};
  if (nnp_status status = api->register_layer_type(host, &swish); status != NNP_OK) return status;
  return api->register_layer_type(host, &mish);
}

const nnp_plugin_descriptor kDescriptor = {sizeof(nnp_plugin_descriptor),
                                           NNP_ABI_MAJOR,
                                           NNP_ABI_MINOR,
                                           "nnplug.activations",
                                           "0.1.0",
                                           init,
                                           "activations composed of core ops: Swish, Mish"};

}  // namespace

NNP_PLUGIN_ENTRY { return &kDescriptor; }
