// nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d, nn.AdaptiveAvgPool2d,
// nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool3d, nn.AdaptiveMaxPool1d/2d/3d,
// nn.LPPool1d, nn.LPPool2d and nn.MaxUnpool1d/2d/3d: the functions of
// nnp/functional/{pooling,pooling_nd,unpooling}.hpp with PyTorch's attributes and reprs.
#include <algorithm>
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

namespace {

// An attribute of one value or D values, as PyTorch prints it: one value
// (or D equal ones, as MaxPool2d prints) bare, or as a 1-tuple where
// PyTorch keeps tuples; different values as a tuple.
std::string sizes_text(const std::vector<int64_t>& v, bool tuple_always = false) {
  const bool equal = !v.empty() && std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; });
  if (equal && !tuple_always) return std::to_string(v[0]);
  std::string text = "(";
  for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + std::to_string(v[i]);
  return text + (v.size() == 1 ? ",)" : ")");
}

template <size_t D>
nnp::ExpandingArray<D> expand(const std::string& type, const char* name, const std::vector<int64_t>& v) {
  if (v.size() == 1) return nnp::ExpandingArray<D>(v[0]);
  if (v.size() != D)
    throw Error(NNP_INVALID_ARGUMENT,
                type + ": " + name + " takes one value or " + std::to_string(D) + ", got " + std::to_string(v.size()));
  nnp::ExpandingArray<D> out(0);
  for (size_t i = 0; i < D; ++i) out[i] = v[i];
  return out;
}

using F::detail::Pair;
using F::detail::pair_text;
using F::detail::WindowIndexCache;

Pair pair_of(const Attrs& a, const std::string& name, const std::string& layer) {
  std::vector<int64_t> v = a.integers(name);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw Error(NNP_INVALID_ARGUMENT, layer + ": " + name + " takes one or two values, got " + std::to_string(v.size()));
}

std::string number_text(double v) {  // PyTorch prints the int it was given
  return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<int64_t>(v)) : nnp::nn::format_float(v);
}

}  // namespace

// The 2-D pools keep an index of their windows between calls.
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

// Windowed pooling in D dimensions: kernel_size, stride (default the
// kernel), padding, dilation (max only).
template <size_t D>
struct WindowPool : nnp::nn::Module {
  std::vector<int64_t> kernel, stride, padding, dilation;
  WindowPool(const char* name, const Attrs& a, bool with_dilation)
      : Module(name),
        kernel(a.integers("kernel_size")),
        stride(a.has("stride") ? a.integers("stride") : kernel),
        padding(a.integers("padding")),
        dilation(with_dilation ? a.integers("dilation") : std::vector<int64_t>{1}) {
    if (a.boolean("ceil_mode"))
      throw Error(NNP_UNIMPLEMENTED, std::string(name) + ": ceil_mode=True is not supported yet; use padding instead");
    for (const auto* v : {&kernel, &stride, &padding, &dilation}) expand<D>(name, "a size", *v);
  }
  nnp::ExpandingArray<D> k() const { return expand<D>(type_name(), "kernel_size", kernel); }
  nnp::ExpandingArray<D> s() const { return expand<D>(type_name(), "stride", stride); }
  nnp::ExpandingArray<D> p() const { return expand<D>(type_name(), "padding", padding); }
  nnp::ExpandingArray<D> d() const { return expand<D>(type_name(), "dilation", dilation); }
  // [C, ...] unbatched runs as one sample.
  Tensor batched(const Tensor& x, const std::function<Tensor(const Tensor&)>& pool) const {
    if (x.ndim() == static_cast<int32_t>(D) + 1) return pool(x.unsqueeze(0)).squeeze(0);
    return pool(x);
  }
};

struct MaxPool1d : WindowPool<1> {
  explicit MaxPool1d(const Attrs& a) : WindowPool("MaxPool1d", a, true) {}
  Tensor forward(const Tensor& x) override {
    return batched(x, [&](const Tensor& t) {
      return F::max_pool1d(t, F::MaxPool1dFuncOptions(k()).stride(s()).padding(p()).dilation(d()));
    });
  }
  std::string extra_repr() const override {
    return "kernel_size=" + sizes_text(kernel) + ", stride=" + sizes_text(stride) + ", padding=" + sizes_text(padding) +
           ", dilation=" + sizes_text(dilation) + ", ceil_mode=False";
  }
};

struct MaxPool3d : WindowPool<3> {
  explicit MaxPool3d(const Attrs& a) : WindowPool("MaxPool3d", a, true) {}
  Tensor forward(const Tensor& x) override {
    return F::max_pool3d(x, F::MaxPool3dFuncOptions(k()).stride(s()).padding(p()).dilation(d()));
  }
  std::string extra_repr() const override {
    return "kernel_size=" + sizes_text(kernel) + ", stride=" + sizes_text(stride) + ", padding=" + sizes_text(padding) +
           ", dilation=" + sizes_text(dilation) + ", ceil_mode=False";
  }
};

template <size_t D>
struct AvgPool : WindowPool<D> {
  AvgPool(const char* name, const Attrs& a) : WindowPool<D>(name, a, false) {
    if (!a.boolean("count_include_pad"))
      throw Error(NNP_UNIMPLEMENTED, std::string(name) + ": count_include_pad=False is not supported yet");
  }
  std::string extra_repr() const override {
    const bool tuples = D == 1;  // PyTorch keeps AvgPool1d's sizes as 1-tuples
    return "kernel_size=" + sizes_text(this->kernel, tuples) + ", stride=" + sizes_text(this->stride, tuples) +
           ", padding=" + sizes_text(this->padding, tuples);
  }
};
struct AvgPool1d : AvgPool<1> {
  explicit AvgPool1d(const Attrs& a) : AvgPool("AvgPool1d", a) {}
  Tensor forward(const Tensor& x) override {
    return batched(
        x, [&](const Tensor& t) { return F::avg_pool1d(t, F::AvgPool1dFuncOptions(k()).stride(s()).padding(p())); });
  }
};
struct AvgPool3d : AvgPool<3> {
  explicit AvgPool3d(const Attrs& a) : AvgPool("AvgPool3d", a) {}
  Tensor forward(const Tensor& x) override {
    return F::avg_pool3d(x, F::AvgPool3dFuncOptions(k()).stride(s()).padding(p()));
  }
};

template <size_t D, bool Max>
struct AdaptivePool : nnp::nn::Module {
  std::vector<int64_t> output;
  AdaptivePool(const char* name, const Attrs& a) : Module(name), output(a.integers("output_size")) {
    expand<D>(name, "output_size", output);
    for (int64_t o : output)
      if (o < 1) throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": output_size must be >= 1");
  }
  Tensor forward(const Tensor& x) override {
    return F::detail::adaptive_pool(type_name(), x, expand<D>(type_name(), "output_size", output).vec(), Max);
  }
  std::string extra_repr() const override { return "output_size=" + sizes_text(output); }
};
struct AdaptiveAvgPool1d : AdaptivePool<1, false> {
  explicit AdaptiveAvgPool1d(const Attrs& a) : AdaptivePool("AdaptiveAvgPool1d", a) {}
};
struct AdaptiveAvgPool3d : AdaptivePool<3, false> {
  explicit AdaptiveAvgPool3d(const Attrs& a) : AdaptivePool("AdaptiveAvgPool3d", a) {}
};
struct AdaptiveMaxPool1d : AdaptivePool<1, true> {
  explicit AdaptiveMaxPool1d(const Attrs& a) : AdaptivePool("AdaptiveMaxPool1d", a) {}
};
struct AdaptiveMaxPool2d : AdaptivePool<2, true> {
  explicit AdaptiveMaxPool2d(const Attrs& a) : AdaptivePool("AdaptiveMaxPool2d", a) {}
};
struct AdaptiveMaxPool3d : AdaptivePool<3, true> {
  explicit AdaptiveMaxPool3d(const Attrs& a) : AdaptivePool("AdaptiveMaxPool3d", a) {}
};

template <size_t D>
struct LPPool : nnp::nn::Module {
  double norm_type;
  std::vector<int64_t> kernel, stride;
  bool has_stride;
  LPPool(const char* name, const Attrs& a)
      : Module(name),
        norm_type(a.real("norm_type")),
        kernel(a.integers("kernel_size")),
        stride(a.has("stride") ? a.integers("stride") : kernel),
        has_stride(a.has("stride")) {
    if (a.boolean("ceil_mode"))
      throw Error(NNP_UNIMPLEMENTED, std::string(name) + ": ceil_mode=True is not supported yet");
    if (!(norm_type > 0)) throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": norm_type must be > 0");
    expand<D>(name, "kernel_size", kernel);
    expand<D>(name, "stride", stride);
  }
  Tensor forward(const Tensor& x) override {
    const auto k = expand<D>(type_name(), "kernel_size", kernel), s = expand<D>(type_name(), "stride", stride);
    if constexpr (D == 1)
      return F::lp_pool1d(x, norm_type, k[0], s[0]);
    else
      return F::lp_pool2d(x, norm_type, k, s);
  }
  std::string extra_repr() const override {
    return "norm_type=" + number_text(norm_type) + ", kernel_size=" + sizes_text(kernel) +
           ", stride=" + (has_stride ? sizes_text(stride) : "None") + ", ceil_mode=False";
  }
};
struct LPPool1d : LPPool<1> {
  explicit LPPool1d(const Attrs& a) : LPPool("LPPool1d", a) {}
};
struct LPPool2d : LPPool<2> {
  explicit LPPool2d(const Attrs& a) : LPPool("LPPool2d", a) {}
};

// forward(input, indices, output_size=None): indices as max pooling with
// return_indices gives them. A spec call passes no output_size (values
// have no int lists); the C++ function takes one.
template <size_t D>
struct MaxUnpool : nnp::nn::Module {
  std::vector<int64_t> kernel, stride, padding;
  MaxUnpool(const char* name, const Attrs& a)
      : Module(name),
        kernel(expand<D>(name, "kernel_size", a.integers("kernel_size")).vec()),
        stride(expand<D>(name, "stride", a.has("stride") ? a.integers("stride") : a.integers("kernel_size")).vec()),
        padding(expand<D>(name, "padding", a.integers("padding")).vec()) {
    for (size_t i = 0; i < D; ++i)
      if (kernel[i] < 1 || stride[i] < 1 || padding[i] < 0)
        throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": kernel_size and stride must be >= 1, padding >= 0");
  }
  std::vector<nnp::Value> forward_values(const std::vector<nnp::Value>& args) override {
    const CallArgs call(type_name(), args, {"input", "indices"}, 2);
    return {unpool(call.tensor(0), call.tensor(1))};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    const CallArgs call(type_name(), tensor_args(inputs), {"input", "indices"}, 2);
    return unpool(inputs[0], inputs[1]);
  }
  Tensor unpool(const Tensor& x, const Tensor& indices) const {
    return F::detail::max_unpool<D>(type_name(), x, indices,
                                    F::MaxUnpoolFuncOptions<D>(nnp::ExpandingArray<D>(kernel))
                                        .stride(nnp::ExpandingArray<D>(stride))
                                        .padding(nnp::ExpandingArray<D>(padding)));
  }
  std::string extra_repr() const override {
    return "kernel_size=" + sizes_text(kernel, true) + ", stride=" + sizes_text(stride, true) +
           ", padding=" + sizes_text(padding, true);
  }
};
struct MaxUnpool1d : MaxUnpool<1> {
  explicit MaxUnpool1d(const Attrs& a) : MaxUnpool("MaxUnpool1d", a) {}
};
struct MaxUnpool2d : MaxUnpool<2> {
  explicit MaxUnpool2d(const Attrs& a) : MaxUnpool("MaxUnpool2d", a) {}
};
struct MaxUnpool3d : MaxUnpool<3> {
  explicit MaxUnpool3d(const Attrs& a) : MaxUnpool("MaxUnpool3d", a) {}
};

void register_pooling_layers(LayerRegistry& registry) {
  const AttrDecl kernel{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size (one value or one per dimension)"};
  const AttrDecl stride{"stride", NNP_ATTR_INTS, false, nullptr, "step between windows (default: kernel_size)"};
  const AttrDecl ceil{"ceil_mode", NNP_ATTR_BOOL, false, "false", "round output sizes up (not supported yet)"};
  const std::vector<AttrDecl> max{kernel,
                                  stride,
                                  {"padding", NNP_ATTR_INTS, false, "0", "-inf added on each side"},
                                  {"dilation", NNP_ATTR_INTS, false, "1", "spacing between window elements"},
                                  ceil};
  const std::vector<AttrDecl> avg{kernel,
                                  stride,
                                  {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
                                  ceil,
                                  {"count_include_pad", NNP_ATTR_BOOL, false, "true", "count padding in the mean"}};
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
  add_builtin<MaxPool1d>(registry, "nn.MaxPool1d", "maximum over sliding windows of [N, C, L]", max);
  add_builtin<MaxPool3d>(registry, "nn.MaxPool3d", "maximum over sliding windows of [N, C, D, H, W]", max);
  add_builtin<AvgPool1d>(registry, "nn.AvgPool1d", "mean over sliding windows of [N, C, L]", avg);
  add_builtin<AvgPool3d>(registry, "nn.AvgPool3d", "mean over sliding windows of [N, C, D, H, W]", avg);
  const std::vector<AttrDecl> adaptive{{"output_size", NNP_ATTR_INTS, true, nullptr, "the output's size"}};
  add_builtin<AdaptiveAvgPool1d>(registry, "nn.AdaptiveAvgPool1d", "mean pooling of [N, C, L] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveAvgPool3d>(registry, "nn.AdaptiveAvgPool3d", "mean pooling of [N, C, D, H, W] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveMaxPool1d>(registry, "nn.AdaptiveMaxPool1d", "max pooling of [N, C, L] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveMaxPool2d>(registry, "nn.AdaptiveMaxPool2d", "max pooling of [N, C, H, W] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveMaxPool3d>(registry, "nn.AdaptiveMaxPool3d", "max pooling of [N, C, D, H, W] to a fixed size",
                                 adaptive);
  const std::vector<AttrDecl> lp{{"norm_type", NNP_ATTR_FLOAT, true, nullptr, "p of the p-norm"}, kernel, stride, ceil};
  add_builtin<LPPool1d>(registry, "nn.LPPool1d", "p-norm over sliding windows of [N, C, L]", lp);
  add_builtin<LPPool2d>(registry, "nn.LPPool2d", "p-norm over sliding windows of [N, C, H, W]", lp);
  const std::vector<AttrDecl> unpool{kernel, stride, {"padding", NNP_ATTR_INTS, false, "0", "the pooling's padding"}};
  add_builtin<MaxUnpool1d>(registry, "nn.MaxUnpool1d", "max pooling's values put back where its indices say", unpool);
  add_builtin<MaxUnpool2d>(registry, "nn.MaxUnpool2d", "max pooling's values put back where its indices say", unpool);
  add_builtin<MaxUnpool3d>(registry, "nn.MaxUnpool3d", "max pooling's values put back where its indices say", unpool);
}

}  // namespace nnp::core::nn::layers
