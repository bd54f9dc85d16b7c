// A plugin whose name, version, description, layer type doc and attribute
// names carry terminal control sequences and newlines: `nnplug plugins` must
// print them escaped, so no control byte reaches the terminal and no line can
// be forged.
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>

namespace {

struct Quiet : nnp::nn::Module {
  explicit Quiet(const nnp::nn::Attrs&) : Module("Quiet") {}
  nnp::Tensor forward(const nnp::Tensor& x) override { return x; }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<Quiet>(host, "ctl.Quiet", "doc\x1b[2J\nloaded   nnplug.cpu forged line",
                                   {{"beta\x07", NNP_ATTR_FLOAT, false, "1.0", "bell\r\x1b[31mred"}});
  });
}

}  // namespace

NNP_PLUGIN("test.ctl\x1b]0;title\x07", "1\x1b[31m", "desc\nrefused  /etc/passwd\n\x1b[2Jcleared", init)
