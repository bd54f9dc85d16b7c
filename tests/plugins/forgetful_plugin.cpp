// A layer plugin whose author forgot nnp::set_api: init registers through
// the raw table, so the C++ API inside its layer has no table to reach the
// core with. Creating the layer must fail with a status, never abort.
#include <nnp/plugin.h>

#include <nnp/nnp.hpp>

namespace {

struct Forgotten : nnp::nn::Module {
  explicit Forgotten(const nnp::nn::Attrs&) : Module("Forgotten") {}  // needs nnp::api(): throws
  nnp::Tensor forward(const nnp::Tensor& x) override { return x; }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  nnp_layer_type type{};
  type.struct_size = sizeof(type);
  type.name = "forgetful.Layer";
  type.doc = "a layer whose plugin never called nnp::set_api";
  type.create = nnp::nn::create_layer_of<Forgotten>;
  return api->register_layer_type(host, &type);
}

}  // namespace

NNP_PLUGIN("test.forgetful", "0", "forgets nnp::set_api (tests only)", init)
