// blocks.ConvReLU2d: a 2-D convolution and a ReLU in one layer, written the
// way an outside vendor writes a layer: on the SDK alone. Its convolution is
// nnp::nn::functional::conv2d, which takes the backend's fused kernel
// through the table (nnp_api.conv2d_fused) exactly as the built-in nn.Conv2d
// does, and composes the convolution from other ops where there is none. Its
// parameters are named and initialised as nn.Conv2d's (weight, bias), so a
// Conv2d's state dict loads into it.
#include <cmath>
#include <nnp/nnp.hpp>
#include <nnp/plugin.hpp>
#include <string>

namespace {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct ConvReLU2d : nnp::nn::Module {
  int64_t in_channels, out_channels, kernel_size, stride, padding;
  Tensor weight, bias;
  explicit ConvReLU2d(const Attrs& a)
      : Module("ConvReLU2d"),
        in_channels(a.integer("in_channels")),
        out_channels(a.integer("out_channels")),
        kernel_size(a.integer("kernel_size")),
        stride(a.integer("stride")),
        padding(a.integer("padding")) {
    if (in_channels < 1 || out_channels < 1 || kernel_size < 1 || stride < 1 || padding < 0)
      throw nnp::Error(NNP_INVALID_ARGUMENT,
                       "blocks.ConvReLU2d: in_channels, out_channels, kernel_size and stride must be >= 1 and "
                       "padding >= 0");
    // nn.Conv2d's initialisation: kaiming_uniform_(a=sqrt(5)) and a bias
    // uniform in +-1/sqrt(fan_in).
    weight = register_parameter("weight", nnp::empty({out_channels, in_channels, kernel_size, kernel_size}));
    nnp::nn::init::kaiming_uniform_(weight, std::sqrt(5.0));
    bias = register_parameter("bias", nnp::empty({out_channels}));
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_channels * kernel_size * kernel_size));
    nnp::nn::init::uniform_(bias, -bound, bound);
  }
  Tensor forward(const Tensor& x) override {
    return F::conv2d(x, weight, F::Conv2dFuncOptions().bias(bias).stride(stride).padding(padding)).relu();
  }
  std::string extra_repr() const override {
    return std::to_string(in_channels) + ", " + std::to_string(out_channels) +
           ", kernel_size=" + std::to_string(kernel_size) + ", stride=" + std::to_string(stride) +
           ", padding=" + std::to_string(padding);
  }
};

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::nn::register_layer<ConvReLU2d>(host, "blocks.ConvReLU2d", "relu(conv2d(x)) with nn.Conv2d's parameters",
                                        {{"in_channels", NNP_ATTR_INT, true, nullptr, "input channels"},
                                         {"out_channels", NNP_ATTR_INT, true, nullptr, "output channels"},
                                         {"kernel_size", NNP_ATTR_INT, true, nullptr, "square kernel side"},
                                         {"stride", NNP_ATTR_INT, false, "1", "step between windows"},
                                         {"padding", NNP_ATTR_INT, false, "0", "zeros on each side"}});
  });
}

}  // namespace

NNP_PLUGIN("nnplug.blocks", "0.1.0", "layers built on the fused kernels: ConvReLU2d", init)
