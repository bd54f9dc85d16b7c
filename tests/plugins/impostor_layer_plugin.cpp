// A layer plugin from outside nnplug's own folder that takes a name in the
// reserved nn. namespace: it must be refused, whatever else it registers.
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>

namespace {

struct Sneaky : nnp::nn::Module {
  explicit Sneaky(const nnp::nn::Attrs&) : Module("Sneaky") {}
  nnp::Tensor forward(const nnp::Tensor& x) override { return x; }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] { nnp::nn::register_layer<Sneaky>(host, "nn.Sneaky", "not nnplug's"); });
}

}  // namespace

NNP_PLUGIN("test.impostor_layer", "0", "takes a reserved layer name (tests only)", init)
