// tiny.Scale: a learnable per-feature scale, x * weight, with weight a
// Parameter of shape [features] starting at `init`.
#include <nnp/plugin.h>

#include <nnp/nnp.hpp>

namespace {

struct Scale : nnp::nn::Module {
  nnp::Tensor weight;
  explicit Scale(const nnp::nn::Attrs& a) : Module("Scale") {
    weight = register_parameter("weight", nnp::full({a.integer("features")}, a.real("init")));
  }
  nnp::Tensor forward(const nnp::Tensor& x) override { return x * weight; }
  std::string extra_repr() const override { return "features=" + std::to_string(weight.size(0)); }
};

const nnp_attr_def kAttrs[] = {
    {sizeof(nnp_attr_def), "features", NNP_ATTR_INT, 1, nullptr, "size of the last dimension"},
    {sizeof(nnp_attr_def), "init", NNP_ATTR_FLOAT, 0, "1.0", "starting scale"}};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  nnp::set_api(api);
  const nnp_layer_type scale{sizeof(nnp_layer_type),          "tiny.Scale", "learnable per-feature scale", kAttrs, 2,
                             nnp::nn::create_layer_of<Scale>, nullptr};
  return api->register_layer_type(host, &scale);
}

const nnp_plugin_descriptor kDescriptor = {sizeof(nnp_plugin_descriptor),
                                           NNP_ABI_MAJOR,
                                           NNP_ABI_MINOR,
                                           "tiny",
                                           "1.0.0",
                                           init,
                                           "the out-of-tree test's plugin: a learnable scale"};

}  // namespace

NNP_PLUGIN_ENTRY { return &kDescriptor; }
