// nn.PixelShuffle, nn.PixelUnshuffle and nn.ChannelShuffle: the
// rearrangements of nnp/functional/vision.hpp.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// A layer of one integer factor, printed as "<attribute>=<factor>".
template <Tensor (*Fn)(const Tensor&, int64_t)>
struct Rearrange : nnp::nn::Module {
  const char* attribute;
  int64_t factor;
  Rearrange(const char* name, const char* attr, const Attrs& a)
      : Module(name), attribute(attr), factor(a.integer(attr)) {
    if (factor <= 0)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": " + attr + " must be > 0, got " + std::to_string(factor));
  }
  Tensor forward(const Tensor& x) override { return Fn(x, factor); }
  std::string extra_repr() const override { return std::string(attribute) + "=" + std::to_string(factor); }
};

struct PixelShuffle : Rearrange<F::pixel_shuffle> {
  explicit PixelShuffle(const Attrs& a) : Rearrange("PixelShuffle", "upscale_factor", a) {}
};
struct PixelUnshuffle : Rearrange<F::pixel_unshuffle> {
  explicit PixelUnshuffle(const Attrs& a) : Rearrange("PixelUnshuffle", "downscale_factor", a) {}
};
struct ChannelShuffle : Rearrange<F::channel_shuffle> {
  explicit ChannelShuffle(const Attrs& a) : Rearrange("ChannelShuffle", "groups", a) {}
};

void register_vision_layers(nnp_plugin_host* host) {
  add_builtin<PixelShuffle>(host, "nn.PixelShuffle", "[*, C r^2, H, W] to [*, C, H r, W r]",
                            {{"upscale_factor", NNP_ATTR_INT, true, nullptr, "r"}});
  add_builtin<PixelUnshuffle>(host, "nn.PixelUnshuffle", "[*, C, H r, W r] to [*, C r^2, H, W]",
                              {{"downscale_factor", NNP_ATTR_INT, true, nullptr, "r"}});
  add_builtin<ChannelShuffle>(host, "nn.ChannelShuffle", "interleaves the channels of [N, C, *] in groups",
                              {{"groups", NNP_ATTR_INT, true, nullptr, "channel groups"}});
}

}  // namespace nnp::library::layers
