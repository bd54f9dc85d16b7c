// nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d, nn.AdaptiveAvgPool2d,
// nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool3d, nn.AdaptiveMaxPool1d/2d/3d,
// nn.LPPool1d, nn.LPPool2d, nn.FractionalMaxPool2d/3d and nn.MaxUnpool1d/2d/3d:
// the functions of nnp/functional/{pooling,pooling_nd,fractional_pooling,unpooling}.hpp with PyTorch's attributes and
// reprs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <nnp/nnp.hpp>
#include <optional>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

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
// kernel), padding, dilation (max only), ceil_mode. The 1-D and 2-D pools
// run as one 2-D pass and keep its window index between calls.
template <size_t D>
struct WindowPool : nnp::nn::Module {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode;
  WindowIndexCache windows;
  WindowPool(const char* name, const Attrs& a, bool with_dilation)
      : Module(name),
        kernel(a.integers("kernel_size")),
        stride(a.has("stride") ? a.integers("stride") : kernel),
        padding(a.integers("padding")),
        dilation(with_dilation ? a.integers("dilation") : std::vector<int64_t>{1}),
        ceil_mode(a.boolean("ceil_mode")) {
    for (const auto* v : {&kernel, &stride, &padding, &dilation}) expand<D>(name, "a size", *v);
    if constexpr (D == 3)
      F::detail::check_pool3d(name, k(), s(), p(), d());
    else
      F::detail::check_pool(name, window());
  }
  nnp::ExpandingArray<D> k() const { return expand<D>(type_name(), "kernel_size", kernel); }
  nnp::ExpandingArray<D> s() const { return expand<D>(type_name(), "stride", stride); }
  nnp::ExpandingArray<D> p() const { return expand<D>(type_name(), "padding", padding); }
  nnp::ExpandingArray<D> d() const { return expand<D>(type_name(), "dilation", dilation); }
  F::detail::Window window() const { return F::detail::window_of<D>(k(), s(), p(), d()); }
  // [C, ...] unbatched runs as one sample; 1-D runs as 2-D over [N, C, 1, L].
  F::detail::MaxPooled batched(const Tensor& x, const std::function<F::detail::MaxPooled(const Tensor&)>& pool) const {
    const int32_t ndim = static_cast<int32_t>(D);
    if (x.ndim() != ndim + 1 && x.ndim() != ndim + 2)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected " + std::to_string(ndim + 1) + "-D or " +
                                          std::to_string(ndim + 2) + "-D input, got " + shape_text(x.shape()));
    const bool unbatched = x.ndim() == ndim + 1;
    Tensor in = unbatched ? x.unsqueeze(0) : x;
    if constexpr (D == 1) in = in.unsqueeze(2);
    F::detail::MaxPooled out = pool(in);
    for (Tensor* t : {&out.values, &out.indices}) {
      if (!t->defined()) continue;
      if constexpr (D == 1) *t = t->squeeze(2);
      if (unbatched) *t = t->squeeze(0);
    }
    return out;
  }
  std::string window_repr(bool tuples) const {
    return "kernel_size=" + sizes_text(kernel, tuples) + ", stride=" + sizes_text(stride, tuples) +
           ", padding=" + sizes_text(padding, tuples);
  }
};

// return_indices=True makes a call give (output, indices), the indices
// flat within each input plane as MaxUnpool takes them.
template <size_t D>
struct MaxPool : WindowPool<D> {
  bool return_indices;
  MaxPool(const char* name, const Attrs& a)
      : WindowPool<D>(name, a, true), return_indices(a.boolean("return_indices")) {}
  F::detail::MaxPooled pool(const Tensor& x, bool with_indices) {
    if constexpr (D == 3) {
      return F::detail::max_pool3d(
          this->type_name(), x,
          F::MaxPool3dFuncOptions(this->k()).stride(this->s()).padding(this->p()).dilation(this->d()).ceil_mode(
              this->ceil_mode),
          with_indices);
    } else {
      return this->batched(x, [&](const Tensor& t) {
        return F::detail::max_pool2d_windows(this->type_name(), t, this->window(), this->windows, this->ceil_mode,
                                             with_indices);
      });
    }
  }
  Tensor forward(const Tensor& x) override { return pool(x, false).values; }
  std::vector<nnp::Value> forward_values(const std::vector<nnp::Value>& args) override {
    const CallArgs call(this->type_name(), args, {"input"}, 1);
    if (!return_indices) return {forward(call.tensor(0))};
    F::detail::MaxPooled out = pool(call.tensor(0), true);
    return {out.values, out.indices};
  }
  std::string extra_repr() const override {
    return this->window_repr(false) + ", dilation=" + sizes_text(this->dilation) +
           ", ceil_mode=" + nnp::nn::format_bool(this->ceil_mode);
  }
};
struct MaxPool1d : MaxPool<1> {
  explicit MaxPool1d(const Attrs& a) : MaxPool("MaxPool1d", a) {}
};
struct MaxPool2d : MaxPool<2> {
  explicit MaxPool2d(const Attrs& a) : MaxPool("MaxPool2d", a) {}
};
struct MaxPool3d : MaxPool<3> {
  explicit MaxPool3d(const Attrs& a) : MaxPool("MaxPool3d", a) {}
};

template <size_t D>
struct AvgPool : WindowPool<D> {
  bool count_include_pad;
  std::optional<int64_t> divisor_override;
  AvgPool(const char* name, const Attrs& a)
      : WindowPool<D>(name, a, false), count_include_pad(a.boolean("count_include_pad")) {
    if (a.has("divisor_override")) {
      divisor_override = a.integer("divisor_override");
      if (*divisor_override == 0)
        throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": divisor_override must not be 0");
    }
  }
  Tensor forward(const Tensor& x) override {
    if constexpr (D == 3) {
      return F::avg_pool3d(x, F::AvgPool3dFuncOptions(this->k())
                                  .stride(this->s())
                                  .padding(this->p())
                                  .ceil_mode(this->ceil_mode)
                                  .count_include_pad(count_include_pad)
                                  .divisor_override(divisor_override));
    } else {
      return this
          ->batched(x,
                    [&](const Tensor& t) {
                      return F::detail::MaxPooled{
                          F::detail::avg_pool2d_windows(this->type_name(), t, this->window(), this->windows,
                                                        {this->ceil_mode, count_include_pad, divisor_override}),
                          Tensor()};
                    })
          .values;
    }
  }
  std::string extra_repr() const override { return this->window_repr(D == 1); }  // 1-d keeps 1-tuples
};
struct AvgPool1d : AvgPool<1> {
  explicit AvgPool1d(const Attrs& a) : AvgPool("AvgPool1d", a) {}
};
struct AvgPool2d : AvgPool<2> {
  explicit AvgPool2d(const Attrs& a) : AvgPool("AvgPool2d", a) {}
};
struct AvgPool3d : AvgPool<3> {
  explicit AvgPool3d(const Attrs& a) : AvgPool("AvgPool3d", a) {}
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
  bool has_stride, ceil_mode;
  LPPool(const char* name, const Attrs& a)
      : Module(name),
        norm_type(a.real("norm_type")),
        kernel(a.integers("kernel_size")),
        stride(a.has("stride") ? a.integers("stride") : kernel),
        has_stride(a.has("stride")),
        ceil_mode(a.boolean("ceil_mode")) {
    if (!(norm_type > 0)) throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": norm_type must be > 0");
    expand<D>(name, "kernel_size", kernel);
    expand<D>(name, "stride", stride);
  }
  Tensor forward(const Tensor& x) override {
    const auto k = expand<D>(type_name(), "kernel_size", kernel), s = expand<D>(type_name(), "stride", stride);
    if constexpr (D == 1)
      return F::lp_pool1d(x, norm_type, k[0], s[0], ceil_mode);
    else
      return F::lp_pool2d(x, norm_type, k, s, ceil_mode);
  }
  std::string extra_repr() const override {
    return "norm_type=" + number_text(norm_type) + ", kernel_size=" + sizes_text(kernel) +
           ", stride=" + (has_stride ? sizes_text(stride) : "None") + ", ceil_mode=" + nnp::nn::format_bool(ceil_mode);
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

// forward(input, _random_samples=None): the samples [N, C, D] fix the
// windows (PyTorch's _random_samples); without them each call draws its own.
template <size_t D>
struct FractionalMaxPool : nnp::nn::Module {
  F::FractionalMaxPoolFuncOptions<D> options;
  bool return_indices;
  FractionalMaxPool(const char* name, const Attrs& a)
      : Module(name),
        options(expand<D>(name, "kernel_size", a.integers("kernel_size"))),
        return_indices(a.boolean("return_indices")) {
    if (a.has("output_size")) options.output_size(expand<D>(name, "output_size", a.integers("output_size")));
    if (a.has("output_ratio")) options.output_ratio(a.reals("output_ratio"));
    F::detail::check_fractional_target<D>(name, options.output_size(), options.output_ratio());
  }
  std::vector<nnp::Value> forward_values(const std::vector<nnp::Value>& args) override {
    const CallArgs call(type_name(), args, {"input", "_random_samples"}, 1);
    F::FractionalMaxPoolFuncOptions<D> o = options;
    if (call.given(1)) o._random_samples(call.tensor(1));
    F::detail::MaxPooled out = F::detail::fractional_max_pool<D>(type_name(), call.tensor(0), o, return_indices);
    if (!return_indices) return {out.values};
    return {out.values, out.indices};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
};
struct FractionalMaxPool2d : FractionalMaxPool<2> {
  explicit FractionalMaxPool2d(const Attrs& a) : FractionalMaxPool("FractionalMaxPool2d", a) {}
};
struct FractionalMaxPool3d : FractionalMaxPool<3> {
  explicit FractionalMaxPool3d(const Attrs& a) : FractionalMaxPool("FractionalMaxPool3d", a) {}
};

void register_pooling_layers(nnp_plugin_host* host) {
  const AttrDecl kernel{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size (one value or one per dimension)"};
  const AttrDecl stride{"stride", NNP_ATTR_INTS, false, nullptr, "step between windows (default: kernel_size)"};
  const AttrDecl ceil{"ceil_mode", NNP_ATTR_BOOL, false, "false", "round output sizes up, as PyTorch does"};
  const std::vector<AttrDecl> max{
      kernel,
      stride,
      {"padding", NNP_ATTR_INTS, false, "0", "-inf added on each side"},
      {"dilation", NNP_ATTR_INTS, false, "1", "spacing between window elements"},
      {"return_indices", NNP_ATTR_BOOL, false, "false", "also return each maximum's flat position in its input plane"},
      ceil};
  const std::vector<AttrDecl> avg{
      kernel,
      stride,
      {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
      ceil,
      {"count_include_pad", NNP_ATTR_BOOL, false, "true", "count padding in the mean"},
      {"divisor_override", NNP_ATTR_INT, false, nullptr, "divide every window's sum by this instead"}};
  std::vector<AttrDecl> avg1d = avg;
  avg1d.pop_back();  // PyTorch's AvgPool1d has no divisor_override
  add_builtin<MaxPool2d>(host, "nn.MaxPool2d", "maximum over sliding windows", max);
  add_builtin<AvgPool2d>(host, "nn.AvgPool2d", "mean over sliding windows", avg);
  add_builtin<AdaptiveAvgPool2d>(host, "nn.AdaptiveAvgPool2d", "mean pooling to a fixed output size",
                                 {{"output_size", NNP_ATTR_INTS, true, nullptr, "output height and width"}});
  add_builtin<MaxPool1d>(host, "nn.MaxPool1d", "maximum over sliding windows of [N, C, L]", max);
  add_builtin<MaxPool3d>(host, "nn.MaxPool3d", "maximum over sliding windows of [N, C, D, H, W]", max);
  add_builtin<AvgPool1d>(host, "nn.AvgPool1d", "mean over sliding windows of [N, C, L]", avg1d);
  add_builtin<AvgPool3d>(host, "nn.AvgPool3d", "mean over sliding windows of [N, C, D, H, W]", avg);
  const std::vector<AttrDecl> adaptive{{"output_size", NNP_ATTR_INTS, true, nullptr, "the output's size"}};
  add_builtin<AdaptiveAvgPool1d>(host, "nn.AdaptiveAvgPool1d", "mean pooling of [N, C, L] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveAvgPool3d>(host, "nn.AdaptiveAvgPool3d", "mean pooling of [N, C, D, H, W] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveMaxPool1d>(host, "nn.AdaptiveMaxPool1d", "max pooling of [N, C, L] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveMaxPool2d>(host, "nn.AdaptiveMaxPool2d", "max pooling of [N, C, H, W] to a fixed size",
                                 adaptive);
  add_builtin<AdaptiveMaxPool3d>(host, "nn.AdaptiveMaxPool3d", "max pooling of [N, C, D, H, W] to a fixed size",
                                 adaptive);
  const std::vector<AttrDecl> lp{{"norm_type", NNP_ATTR_FLOAT, true, nullptr, "p of the p-norm"}, kernel, stride, ceil};
  add_builtin<LPPool1d>(host, "nn.LPPool1d", "p-norm over sliding windows of [N, C, L]", lp);
  add_builtin<LPPool2d>(host, "nn.LPPool2d", "p-norm over sliding windows of [N, C, H, W]", lp);
  const std::vector<AttrDecl> fractional{
      kernel,
      {"output_size", NNP_ATTR_INTS, false, nullptr, "the output's size (or give output_ratio)"},
      {"output_ratio", NNP_ATTR_FLOATS, false, nullptr, "the output's size as a fraction of the input's, in (0, 1)"},
      {"return_indices", NNP_ATTR_BOOL, false, "false", "also return each maximum's flat position in its plane"}};
  add_builtin<FractionalMaxPool2d>(host, "nn.FractionalMaxPool2d",
                                   "max over windows at pseudo-random steps, to a given size; (input, _random_samples)",
                                   fractional);
  add_builtin<FractionalMaxPool3d>(host, "nn.FractionalMaxPool3d",
                                   "3-D max over windows at pseudo-random steps; (input, _random_samples)", fractional);
  const std::vector<AttrDecl> unpool{kernel, stride, {"padding", NNP_ATTR_INTS, false, "0", "the pooling's padding"}};
  add_builtin<MaxUnpool1d>(host, "nn.MaxUnpool1d", "max pooling's values put back where its indices say", unpool);
  add_builtin<MaxUnpool2d>(host, "nn.MaxUnpool2d", "max pooling's values put back where its indices say", unpool);
  add_builtin<MaxUnpool3d>(host, "nn.MaxUnpool3d", "max pooling's values put back where its indices say", unpool);
}

}  // namespace nnp::library::layers
