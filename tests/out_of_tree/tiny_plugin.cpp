// tiny.Scale: a learnable per-feature scale, x * weight, with weight a
// Parameter of shape [features] starting at `init`.
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>

namespace {

struct Scale : nnp::nn::Module {
  nnp::Tensor weight;
  explicit Scale(const nnp::nn::Attrs& a) : Module("Scale") {
    weight = register_parameter("weight", nnp::full({a.integer("features")}, a.real("init")));
  }
  nnp::Tensor forward(const nnp::Tensor& x) override { return x * weight; }
  std::string extra_repr() const override { return "features=" + std::to_string(weight.size(0)); }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<Scale>(host, "tiny.Scale", "learnable per-feature scale",
                                   {{"features", NNP_ATTR_INT, true, nullptr, "size of the last dimension"},
                                    {"init", NNP_ATTR_FLOAT, false, "1.0", "starting scale"}});
  });
}

}  // namespace

NNP_PLUGIN("tiny", "1.0.0", "the out-of-tree test's plugin: a learnable scale", init)
