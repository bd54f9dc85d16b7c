// nn.Upsample, nn.UpsamplingNearest2d and nn.UpsamplingBilinear2d:
// F::interpolate (nnp/functional/upsampling.hpp) with PyTorch's attributes
// and reprs.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct Upsample : nnp::nn::Module {
  std::optional<std::vector<int64_t>> size;
  std::optional<double> scale_factor;
  std::string mode;
  std::optional<bool> align_corners, recompute_scale_factor;
  Upsample(const Attrs& a, const char* name = "Upsample", const char* fixed_mode = nullptr,
           std::optional<bool> fixed_corners = std::nullopt)
      : Module(name), mode(fixed_mode ? fixed_mode : a.string("mode")) {
    if (a.has("size")) size = a.integers("size");
    if (a.has("scale_factor")) scale_factor = a.real("scale_factor");
    align_corners = fixed_corners;
    if (!fixed_mode && a.has("align_corners")) align_corners = a.boolean("align_corners");
    if (!fixed_mode && a.has("recompute_scale_factor")) recompute_scale_factor = a.boolean("recompute_scale_factor");
    if (size.has_value() == scale_factor.has_value())
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": give exactly one of size and scale_factor");
  }
  Tensor forward(const Tensor& x) override {
    F::InterpolateFuncOptions o;
    o.size(size).mode(mode).align_corners(align_corners).recompute_scale_factor(recompute_scale_factor);
    if (scale_factor) o.scale_factor(std::vector<double>{*scale_factor});
    return F::interpolate(x, o);
  }
  // Python's repr of what was given: 2.0, 4 or (4, 6); then the mode.
  std::string extra_repr() const override {
    std::string text;
    if (scale_factor) {
      text = "scale_factor=" + nnp::nn::format_float(*scale_factor);
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
    } else if (size->size() == 1) {
      text = "size=" + std::to_string((*size)[0]);
    } else {
      text = "size=(";
      for (size_t i = 0; i < size->size(); ++i) text += (i ? ", " : "") + std::to_string((*size)[i]);
      text += ")";
    }
    return text + ", mode=" + mode;
  }
};

struct UpsamplingNearest2d : Upsample {
  explicit UpsamplingNearest2d(const Attrs& a) : Upsample(a, "UpsamplingNearest2d", F::kNearest) {}
};
struct UpsamplingBilinear2d : Upsample {
  explicit UpsamplingBilinear2d(const Attrs& a) : Upsample(a, "UpsamplingBilinear2d", F::kBilinear, true) {}
};

void register_upsampling_layers(nnp_plugin_host* host) {
  const AttrDecl size{"size", NNP_ATTR_INTS, false, nullptr, "the output's sizes (or give scale_factor)"};
  const AttrDecl scale{"scale_factor", NNP_ATTR_FLOAT, false, nullptr, "multiplier of every size (or give size)"};
  add_builtin<Upsample>(
      host, "nn.Upsample", "resizing of [N, C, *sizes] by nearest, linear, bilinear, bicubic or trilinear",
      {size,
       scale,
       {"mode", NNP_ATTR_STRING, false, "\"nearest\"",
        "nearest, nearest-exact, linear, bilinear, bicubic or trilinear"},
       {"align_corners", NNP_ATTR_BOOL, false, nullptr, "corner pixels' centres align (interpolating modes)"},
       {"recompute_scale_factor", NNP_ATTR_BOOL, false, nullptr, "use the computed output size's ratio"}});
  add_builtin<UpsamplingNearest2d>(host, "nn.UpsamplingNearest2d", "nearest-neighbour upsampling of [N, C, H, W]",
                                   {size, scale});
  add_builtin<UpsamplingBilinear2d>(host, "nn.UpsamplingBilinear2d",
                                    "bilinear upsampling of [N, C, H, W] with aligned corners", {size, scale});
}

}  // namespace nnp::library::layers
