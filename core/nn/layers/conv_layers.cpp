// nn.Conv1d, nn.Conv2d (stride, padding, dilation, groups), nn.MaxPool2d,
// nn.AvgPool2d and nn.AdaptiveAvgPool2d: the functions of
// nnp/functional/{conv,pooling}.hpp with an index of windows kept between
// calls (nnp/functional/windows.hpp).
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

namespace {

using F::detail::Pair;
using F::detail::pair_text;
using F::detail::WindowIndexCache;

Pair pair_of(const Attrs& a, const std::string& name, const std::string& layer) {
  std::vector<int64_t> v = a.integers(name);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw Error(NNP_INVALID_ARGUMENT, layer + ": " + name + " takes one or two values, got " + std::to_string(v.size()));
}

}  // namespace

struct Conv2d : nnp::nn::Module {
  int64_t in_channels, out_channels, groups;
  Pair kernel, stride, padding, dilation;
  Tensor weight, bias;
  WindowIndexCache windows;
  explicit Conv2d(const Attrs& a, const char* name = "Conv2d")
      : Module(name),
        in_channels(a.integer("in_channels")),
        out_channels(a.integer("out_channels")),
        groups(a.integer("groups")),
        kernel(pair_of(a, "kernel_size", name)),
        stride(pair_of(a, "stride", name)),
        padding(pair_of(a, "padding", name)),
        dilation(pair_of(a, "dilation", name)) {
    F::detail::check_at_least(name, "kernel_size", kernel, 1);
    F::detail::check_at_least(name, "stride", stride, 1);
    F::detail::check_at_least(name, "padding", padding, 0);
    F::detail::check_at_least(name, "dilation", dilation, 1);
    if (groups < 1 || in_channels % groups || out_channels % groups)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": in_channels and out_channels must be divisible by groups");
    weight = register_parameter("weight", nnp::empty({out_channels, in_channels / groups, kernel.h, kernel.w}));
    const double bound = 1.0 / std::sqrt(static_cast<double>(in_channels / groups * kernel.h * kernel.w));
    nnp::nn::init::uniform_(weight, -bound, bound);  // kaiming_uniform_(a=sqrt(5)), as PyTorch
    if (a.boolean("bias")) {
      bias = register_parameter("bias", nnp::empty({out_channels}));
      nnp::nn::init::uniform_(bias, -bound, bound);
    } else {
      register_parameter("bias", Tensor());
    }
  }
  Tensor forward(const Tensor& x) override { return conv(x); }
  Tensor conv(const Tensor& x) {
    if (x.ndim() != 4 || x.size(1) != in_channels)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected [N, " + std::to_string(in_channels) + ", H, W], got " +
                                          shape_text(x.shape()));
    return F::detail::conv2d_windows(type_name(), x, weight, bias, {kernel, stride, padding, dilation}, groups,
                                     windows);
  }
  std::string extra_repr() const override {
    std::string text = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                       ", kernel_size=" + pair_text(kernel) + ", stride=" + pair_text(stride);
    if (padding.h || padding.w) text += ", padding=" + pair_text(padding);
    if (dilation.h != 1 || dilation.w != 1) text += ", dilation=" + pair_text(dilation);
    if (groups != 1) text += ", groups=" + std::to_string(groups);
    if (!bias.defined()) text += ", bias=False";
    return text;
  }
};

// Conv1d runs as a Conv2d over a height of 1.
struct Conv1d : Conv2d {
  explicit Conv1d(const Attrs& a) : Conv2d(a, "Conv1d") {}
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != 3) throw Error(NNP_SHAPE_MISMATCH, "Conv1d: expected [N, C, L], got " + shape_text(x.shape()));
    Tensor y = conv(x.unsqueeze(2));
    return y.squeeze(2);
  }
  std::string extra_repr() const override {
    std::string text = std::to_string(in_channels) + ", " + std::to_string(out_channels) + ", kernel_size=(" +
                       std::to_string(kernel.w) + ",), stride=(" + std::to_string(stride.w) + ",)";
    if (padding.w) text += ", padding=(" + std::to_string(padding.w) + ",)";
    if (dilation.w != 1) text += ", dilation=(" + std::to_string(dilation.w) + ",)";
    if (groups != 1) text += ", groups=" + std::to_string(groups);
    if (!bias.defined()) text += ", bias=False";
    return text;
  }
};

std::vector<AttrDecl> conv_attrs() {
  return {{"in_channels", NNP_ATTR_INT, true, nullptr, "channels of the input"},
          {"out_channels", NNP_ATTR_INT, true, nullptr, "channels produced"},
          {"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size (one value or one per dimension)"},
          {"stride", NNP_ATTR_INTS, false, "1", "step between windows"},
          {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
          {"dilation", NNP_ATTR_INTS, false, "1", "spacing between kernel elements"},
          {"groups", NNP_ATTR_INT, false, "1", "blocked connections from input to output channels"},
          {"bias", NNP_ATTR_BOOL, false, "true", "learn an additive bias"}};
}

// Conv1d's attributes describe the length only; Conv2d then sees (1, k).
struct Conv1dAttrs {
  static Attrs widen(const Attrs& a) {
    Attrs wide;
    wide.set("in_channels", a.integer("in_channels")).set("out_channels", a.integer("out_channels"));
    wide.set("groups", a.integer("groups")).set("bias", a.boolean("bias"));
    for (const char* name : {"kernel_size", "stride", "padding", "dilation"}) {
      std::vector<int64_t> v = a.integers(name);
      if (v.size() != 1) throw Error(NNP_INVALID_ARGUMENT, std::string("Conv1d: ") + name + " takes one value");
      wide.set(name, std::vector<int64_t>{std::string(name) == "padding" ? 0 : 1, v[0]});
    }
    return wide;
  }
};
struct Conv1dLayer : Conv1d {
  explicit Conv1dLayer(const Attrs& a) : Conv1d(Conv1dAttrs::widen(a)) {}
};

struct Pool2d : nnp::nn::Module {
  Pair kernel, stride, padding;
  WindowIndexCache windows;
  Pool2d(const char* name, const Attrs& a)
      : Module(name),
        kernel(pair_of(a, "kernel_size", name)),
        stride(a.has("stride") ? pair_of(a, "stride", name) : kernel),
        padding(pair_of(a, "padding", name)) {
    F::detail::check_at_least(name, "kernel_size", kernel, 1);
    F::detail::check_at_least(name, "stride", stride, 1);
    if (padding.h * 2 > kernel.h || padding.w * 2 > kernel.w)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": pad should be at most half of the effective kernel size");
    if (a.boolean("ceil_mode"))
      throw Error(NNP_UNIMPLEMENTED, std::string(name) + ": ceil_mode=True is not supported yet; use padding instead");
  }
  static std::string number(Pair p) { return p.h == p.w ? std::to_string(p.h) : pair_text(p); }
};

struct MaxPool2d : Pool2d {
  Pair dilation;
  explicit MaxPool2d(const Attrs& a) : Pool2d("MaxPool2d", a), dilation(pair_of(a, "dilation", "MaxPool2d")) {}
  Tensor forward(const Tensor& x) override {
    return F::detail::max_pool2d_windows("MaxPool2d", x, {kernel, stride, padding, dilation}, windows);
  }
  std::string extra_repr() const override {
    return "kernel_size=" + number(kernel) + ", stride=" + number(stride) + ", padding=" + number(padding) +
           ", dilation=" + number(dilation) + ", ceil_mode=False";
  }
};

struct AvgPool2d : Pool2d {
  explicit AvgPool2d(const Attrs& a) : Pool2d("AvgPool2d", a) {
    if (!a.boolean("count_include_pad"))
      throw Error(NNP_UNIMPLEMENTED, "AvgPool2d: count_include_pad=False is not supported yet");
  }
  Tensor forward(const Tensor& x) override {
    return F::detail::avg_pool2d_windows("AvgPool2d", x, {kernel, stride, padding, {1, 1}}, windows);
  }
  std::string extra_repr() const override {
    return "kernel_size=" + number(kernel) + ", stride=" + number(stride) + ", padding=" + number(padding);
  }
};

struct AdaptiveAvgPool2d : nnp::nn::Module {
  Pair output;
  explicit AdaptiveAvgPool2d(const Attrs& a)
      : Module("AdaptiveAvgPool2d"), output(pair_of(a, "output_size", "AdaptiveAvgPool2d")) {
    F::detail::check_at_least("AdaptiveAvgPool2d", "output_size", output, 1);
  }
  Tensor forward(const Tensor& x) override { return F::adaptive_avg_pool2d(x, {output.h, output.w}); }
  std::string extra_repr() const override {
    return "output_size=" + (output.h == output.w ? std::to_string(output.h) : pair_text(output));
  }
};

void register_conv_layers(LayerRegistry& registry) {
  add_builtin<Conv2d>(registry, "nn.Conv2d", "2-D convolution over [N, C, H, W]", conv_attrs());
  add_builtin<Conv1dLayer>(registry, "nn.Conv1d", "1-D convolution over [N, C, L]", conv_attrs());
  add_builtin<MaxPool2d>(registry, "nn.MaxPool2d", "maximum over sliding windows",
                         {{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size"},
                          {"stride", NNP_ATTR_INTS, false, nullptr, "step between windows (default: kernel_size)"},
                          {"padding", NNP_ATTR_INTS, false, "0", "-inf added on each side"},
                          {"dilation", NNP_ATTR_INTS, false, "1", "spacing between window elements"},
                          {"ceil_mode", NNP_ATTR_BOOL, false, "false", "round output sizes up (not supported yet)"}});
  add_builtin<AvgPool2d>(registry, "nn.AvgPool2d", "mean over sliding windows",
                         {{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size"},
                          {"stride", NNP_ATTR_INTS, false, nullptr, "step between windows (default: kernel_size)"},
                          {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
                          {"ceil_mode", NNP_ATTR_BOOL, false, "false", "round output sizes up (not supported yet)"},
                          {"count_include_pad", NNP_ATTR_BOOL, false, "true", "count padding in the mean"}});
  add_builtin<AdaptiveAvgPool2d>(registry, "nn.AdaptiveAvgPool2d", "mean pooling to a fixed output size",
                                 {{"output_size", NNP_ATTR_INTS, true, nullptr, "output height and width"}});
}

}  // namespace nnp::core::nn::layers
