// nn.Conv1d/2d/3d (stride, padding as sizes or 'same'/'valid', padding_mode,
// dilation, groups), nn.ConvTranspose1d/2d/3d (output_padding) and
// nn.Unfold/nn.Fold: the functions of nnp/functional/conv{,_nd}.hpp with an
// index of windows kept between calls, PyTorch's parameters, initialisation
// and reprs. Unbatched inputs ([C, *]) run as a batch of one, as PyTorch's.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"
#include "call_args.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

namespace {

// One value for every dimension, or one per dimension.
std::vector<int64_t> sizes_of(const Attrs& a, const char* name, size_t dims, const std::string& layer) {
  std::vector<int64_t> v = a.integers(name);
  if (v.size() == 1) return std::vector<int64_t>(dims, v[0]);
  if (v.size() == dims) return v;
  throw Error(NNP_INVALID_ARGUMENT, layer + ": " + name + " takes one value or " + std::to_string(dims) + ", got " +
                                        std::to_string(v.size()));
}

// Python's tuple: (3,) or (3, 3).
std::string tuple_text(const std::vector<int64_t>& v) {
  std::string text = "(";
  for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + std::to_string(v[i]);
  return text + (v.size() == 1 ? ",)" : ")");
}

bool all_equal(const std::vector<int64_t>& v, int64_t value) {
  for (int64_t e : v)
    if (e != value) return false;
  return true;
}

// kaiming_uniform_(a=sqrt(5)) for the weight and its bound for the bias, as
// PyTorch's _ConvNd.reset_parameters: both U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
void init_conv(Tensor& weight, Tensor& bias, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  nnp::nn::init::uniform_(weight, -bound, bound);
  if (bias.defined()) nnp::nn::init::uniform_(bias, -bound, bound);
}

}  // namespace

// What Conv and ConvTranspose share: channels, windows, groups, parameters.
template <size_t D>
struct ConvBase : nnp::nn::Module {
  int64_t in_channels, out_channels, groups;
  std::vector<int64_t> kernel, stride, padding, dilation;
  std::string padding_mode;
  Tensor weight, bias;
  F::detail::WindowIndexCache windows;
  ConvBase(const char* name, const Attrs& a)
      : Module(name),
        in_channels(a.integer("in_channels")),
        out_channels(a.integer("out_channels")),
        groups(a.integer("groups")),
        kernel(sizes_of(a, "kernel_size", D, name)),
        stride(sizes_of(a, "stride", D, name)),
        padding(a.holds_string("padding") ? std::vector<int64_t>(D, 0) : sizes_of(a, "padding", D, name)),
        dilation(sizes_of(a, "dilation", D, name)),
        padding_mode(a.string("padding_mode")) {
    F::detail::check_grid(name, grid());
    F::detail::check_sizes(name, "padding", padding, 0);
    if (in_channels < 1 || out_channels < 1)
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": in_channels and out_channels must be >= 1");
    if (groups < 1 || in_channels % groups || out_channels % groups)
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": in_channels and out_channels must be divisible by groups");
    if (padding_mode != nnp::kZeros && padding_mode != nnp::kReflect && padding_mode != nnp::kReplicate &&
        padding_mode != nnp::kCircular)
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) +
                                            ": padding_mode must be one of 'zeros', 'reflect', "
                                            "'replicate' or 'circular', got '" +
                                            padding_mode + "'");
  }
  F::detail::Grid grid() const { return {kernel, stride, dilation}; }
  int64_t taps() const { return grid().taps(); }
  // The weight [first, second / groups, *kernel] and the bias.
  void make_parameters(const Attrs& a, int64_t first, int64_t second) {
    nnp::Shape shape{first, second / groups};
    shape.insert(shape.end(), kernel.begin(), kernel.end());
    weight = register_parameter("weight", nnp::empty(shape));
    if (a.boolean("bias"))
      bias = register_parameter("bias", nnp::empty({out_channels}));
    else
      register_parameter("bias", Tensor());
    init_conv(weight, bias, second / groups * taps());
  }
  void check_input(const Tensor& x) const {
    const int32_t batched = static_cast<int32_t>(D) + 2;
    const char* sizes = D == 1 ? "L" : (D == 2 ? "H, W" : "D, H, W");
    if ((x.ndim() != batched && x.ndim() != batched - 1) ||
        x.size(x.ndim() - static_cast<int32_t>(D) - 1) != in_channels)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected [N, " + std::to_string(in_channels) + ", " + sizes +
                                          "] or [" + std::to_string(in_channels) + ", " + sizes + "], got " +
                                          shape_text(x.shape()));
  }
  // PyTorch's _ConvNd.extra_repr (padding_text empty: not printed).
  std::string repr_with(const std::string& padding_text, const std::vector<int64_t>& output_padding) const {
    std::string text = std::to_string(in_channels) + ", " + std::to_string(out_channels) +
                       ", kernel_size=" + tuple_text(kernel) + ", stride=" + tuple_text(stride);
    if (!padding_text.empty()) text += ", padding=" + padding_text;
    if (!all_equal(dilation, 1)) text += ", dilation=" + tuple_text(dilation);
    if (!all_equal(output_padding, 0)) text += ", output_padding=" + tuple_text(output_padding);
    if (groups != 1) text += ", groups=" + std::to_string(groups);
    if (!bias.defined()) text += ", bias=False";
    if (padding_mode != nnp::kZeros) text += ", padding_mode=" + padding_mode;
    return text;
  }
};

template <size_t D>
struct Conv : ConvBase<D> {
  std::string padding_rule;  // "same", "valid", or empty: padding says it
  Conv(const char* name, const Attrs& a)
      : ConvBase<D>(name, a), padding_rule(a.holds_string("padding") ? a.string("padding") : "") {
    if (!padding_rule.empty() && padding_rule != nnp::kSame && padding_rule != nnp::kValid)
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": invalid padding string '" + padding_rule +
                                            "', should be one of 'valid' or 'same'");
    if (padding_rule == nnp::kSame && !all_equal(this->stride, 1))
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": padding='same' is not supported for strided convolutions");
    this->make_parameters(a, this->out_channels, this->in_channels);
  }
  Tensor forward(const Tensor& input) override {
    this->check_input(input);
    return F::detail::batch_of_one(input, static_cast<int32_t>(D) + 2, [&](const Tensor& x) { return conv(x); });
  }
  Tensor conv(const Tensor& input) {
    // Padding per side: 'same' puts the odd one after, as PyTorch does.
    std::vector<int64_t> before = this->padding, after = this->padding;
    if (padding_rule == nnp::kSame)
      for (size_t i = 0; i < D; ++i) {
        const int64_t total = this->dilation[i] * (this->kernel[i] - 1);
        before[i] = total / 2;
        after[i] = total - before[i];
      }
    Tensor x = input;
    if (this->padding_mode != nnp::kZeros) {
      x = F::pad(x, F::PadFuncOptions(F::detail::pad_list(before, after)).mode(this->padding_mode));
      before.assign(D, 0);
      after.assign(D, 0);
    }
    if constexpr (D == 3) {
      return F::detail::conv_nd(this->type_name(), x, this->weight, this->bias, this->grid(), before, after,
                                this->groups, this->windows);
    } else {
      // One and two dimensions take conv2d's path (a 1-D input is one row).
      if (before != after) {
        x = F::pad(x, F::detail::pad_list(before, after));
        before.assign(D, 0);
      }
      auto pair = [](const std::vector<int64_t>& v, int64_t one) {
        return D == 1 ? F::detail::Pair{one, v[0]} : F::detail::Pair{v[0], v[1]};
      };
      const F::detail::Window w{pair(this->kernel, 1), pair(this->stride, 1), pair(before, 0), pair(this->dilation, 1)};
      if constexpr (D == 1)
        return F::detail::conv2d_windows(this->type_name(), x.unsqueeze(2), this->weight.unsqueeze(2), this->bias, w,
                                         this->groups, this->windows)
            .squeeze(2);
      else
        return F::detail::conv2d_windows(this->type_name(), x, this->weight, this->bias, w, this->groups,
                                         this->windows);
    }
  }
  std::string extra_repr() const override {
    const std::string padding_text =
        !padding_rule.empty() ? padding_rule : (all_equal(this->padding, 0) ? "" : tuple_text(this->padding));
    return this->repr_with(padding_text, std::vector<int64_t>(D, 0));
  }
};
struct Conv1d : Conv<1> {
  explicit Conv1d(const Attrs& a) : Conv("Conv1d", a) {}
};
struct Conv2d : Conv<2> {
  explicit Conv2d(const Attrs& a) : Conv("Conv2d", a) {}
};
struct Conv3d : Conv<3> {
  explicit Conv3d(const Attrs& a) : Conv("Conv3d", a) {}
};

template <size_t D>
struct ConvTranspose : ConvBase<D> {
  std::vector<int64_t> output_padding;
  ConvTranspose(const char* name, const Attrs& a)
      : ConvBase<D>(name, a), output_padding(sizes_of(a, "output_padding", D, name)) {
    if (a.holds_string("padding"))
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": padding must be sizes, not '" + a.string("padding") +
                                            "' (transposed convolutions take no padding rule)");
    if (this->padding_mode != nnp::kZeros)
      throw Error(NNP_INVALID_ARGUMENT, std::string("Only 'zeros' padding mode is supported for ") + name);
    F::detail::check_sizes(name, "output_padding", output_padding, 0);
    for (size_t i = 0; i < D; ++i)
      if (output_padding[i] >= std::max(this->stride[i], this->dilation[i]))
        throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": output_padding " + tuple_text(output_padding) +
                                              " must be smaller than either stride or dilation");
    // PyTorch's transposed weight: [in_channels, out_channels / groups, *kernel].
    this->make_parameters(a, this->in_channels, this->out_channels);
  }
  Tensor forward(const Tensor& input) override { return transposed(input, output_padding); }
  // forward(input, output_size): output_size (a 1-D integer tensor in a
  // call of values; the last D sizes, or all) picks the output padding, as
  // PyTorch's _output_padding does.
  std::vector<nnp::Value> forward_values(const std::vector<nnp::Value>& args) override {
    const CallArgs call(this->type_name(), args, {"input", "output_size"}, 1);
    const Tensor input = call.tensor(0);
    if (!call.given(1)) return {forward(input)};
    const Tensor sizes = call.tensor(1);
    if (sizes.ndim() != 1 || is_floating(sizes.dtype()))
      throw Error(NNP_INVALID_ARGUMENT,
                  this->type_name() + ": output_size must be a 1-D integer tensor, got " + shape_text(sizes.shape()));
    return {transposed(input, padding_for(input, sizes.to(nnp::Dtype::i64).to_vector<int64_t>()))};
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    return forward_values(tensor_args(inputs))[0].toTensor();
  }
  std::vector<int64_t> padding_for(const Tensor& input, std::vector<int64_t> size) const {
    const size_t leading = input.ndim() == static_cast<int32_t>(D) + 2 ? 2 : 1;
    if (size.size() == leading + D) size.erase(size.begin(), size.begin() + static_cast<std::ptrdiff_t>(leading));
    if (size.size() != D)
      throw Error(NNP_INVALID_ARGUMENT, this->type_name() + ": for " + std::to_string(input.ndim()) +
                                            "D input, output_size must have " + std::to_string(D) + " or " +
                                            std::to_string(leading + D) + " elements (got " +
                                            std::to_string(size.size()) + ")");
    this->check_input(input);
    std::vector<int64_t> low(D), high(D), padding(D);
    for (size_t d = 0; d < D; ++d) {
      // In 128 bits: sizes from specs may be anything up to INT64_MAX.
      const __int128 lo = __int128{input.size(static_cast<int32_t>(leading + d)) - 1} * this->stride[d] -
                          2 * __int128{this->padding[d]} + __int128{this->dilation[d]} * (this->kernel[d] - 1) + 1;
      const __int128 hi = lo + this->stride[d] - 1;
      if (lo < INT64_MIN || hi > INT64_MAX)
        throw Error(NNP_INVALID_ARGUMENT, this->type_name() + ": the output sizes overflow 64 bits");
      low[d] = static_cast<int64_t>(lo);
      high[d] = static_cast<int64_t>(hi);
    }
    for (size_t d = 0; d < D; ++d) {
      if (size[d] < low[d] || size[d] > high[d])
        throw Error(NNP_INVALID_ARGUMENT, this->type_name() + ": requested an output size of " + tuple_text(size) +
                                              ", but valid sizes range from " + tuple_text(low) + " to " +
                                              tuple_text(high) + " (for an input of " + shape_text(input.shape()) +
                                              ")");
      padding[d] = size[d] - low[d];
    }
    return padding;
  }
  Tensor transposed(const Tensor& input, const std::vector<int64_t>& out_padding) {
    this->check_input(input);
    return F::detail::batch_of_one(input, static_cast<int32_t>(D) + 2, [&](const Tensor& x) {
      return F::detail::conv_transpose_nd(this->type_name(), x, this->weight, this->bias, this->grid(), this->padding,
                                          out_padding, this->groups, this->windows);
    });
  }
  std::string extra_repr() const override {
    return this->repr_with(all_equal(this->padding, 0) ? "" : tuple_text(this->padding), output_padding);
  }
};
struct ConvTranspose1d : ConvTranspose<1> {
  explicit ConvTranspose1d(const Attrs& a) : ConvTranspose("ConvTranspose1d", a) {}
};
struct ConvTranspose2d : ConvTranspose<2> {
  explicit ConvTranspose2d(const Attrs& a) : ConvTranspose("ConvTranspose2d", a) {}
};
struct ConvTranspose3d : ConvTranspose<3> {
  explicit ConvTranspose3d(const Attrs& a) : ConvTranspose("ConvTranspose3d", a) {}
};

// PyTorch prints Fold's and Unfold's sizes as given: 3 or (2, 3).
std::string given_text(const std::vector<int64_t>& v) { return v.size() == 1 ? std::to_string(v[0]) : tuple_text(v); }

struct Unfold : nnp::nn::Module {
  std::vector<int64_t> kernel, dilation, padding, stride;
  F::detail::WindowIndexCache windows;
  explicit Unfold(const Attrs& a, const char* name = "Unfold")
      : Module(name),
        kernel(a.integers("kernel_size")),
        dilation(a.integers("dilation")),
        padding(a.integers("padding")),
        stride(a.integers("stride")) {
    for (const char* attr : {"kernel_size", "dilation", "padding", "stride"}) sizes_of(a, attr, 2, name);
  }
  nnp::ExpandingArray<2> two(const std::vector<int64_t>& v) const {
    return v.size() == 1 ? nnp::ExpandingArray<2>(v[0]) : nnp::ExpandingArray<2>(v);
  }
  Tensor forward(const Tensor& x) override {
    return F::detail::unfold_with(
        x, F::UnfoldFuncOptions(two(kernel)).dilation(two(dilation)).padding(two(padding)).stride(two(stride)),
        windows);
  }
  std::string extra_repr() const override {
    return "kernel_size=" + given_text(kernel) + ", dilation=" + given_text(dilation) +
           ", padding=" + given_text(padding) + ", stride=" + given_text(stride);
  }
};

struct Fold : Unfold {
  std::vector<int64_t> output;
  explicit Fold(const Attrs& a) : Unfold(a, "Fold"), output(a.integers("output_size")) {
    sizes_of(a, "output_size", 2, "Fold");
  }
  Tensor forward(const Tensor& x) override {
    return F::detail::fold_with(
        x,
        F::FoldFuncOptions(two(output), two(kernel)).dilation(two(dilation)).padding(two(padding)).stride(two(stride)),
        windows);
  }
  std::string extra_repr() const override { return "output_size=" + given_text(output) + ", " + Unfold::extra_repr(); }
};

void register_conv_layers(nnp_plugin_host* host) {
  const AttrDecl in{"in_channels", NNP_ATTR_INT, true, nullptr, "channels of the input"};
  const AttrDecl out{"out_channels", NNP_ATTR_INT, true, nullptr, "channels produced"};
  const AttrDecl kernel{"kernel_size", NNP_ATTR_INTS, true, nullptr, "window size (one value or one per dimension)"};
  const AttrDecl stride{"stride", NNP_ATTR_INTS, false, "1", "step between windows"};
  const AttrDecl dilation{"dilation", NNP_ATTR_INTS, false, "1", "spacing between kernel elements"};
  const AttrDecl groups{"groups", NNP_ATTR_INT, false, "1", "blocked connections from input to output channels"};
  const AttrDecl bias{"bias", NNP_ATTR_BOOL, false, "true", "learn an additive bias"};
  const AttrDecl mode{"padding_mode", NNP_ATTR_STRING, false, "\"zeros\"",
                      "'zeros', 'reflect', 'replicate' or 'circular'"};
  const std::vector<AttrDecl> conv{
      in,
      out,
      kernel,
      stride,
      {"padding", NNP_ATTR_INTS_OR_STRING, false, "0", "added on each side: sizes, or 'same' or 'valid'"},
      dilation,
      groups,
      bias,
      mode};
  const std::vector<AttrDecl> transposed{
      in,
      out,
      kernel,
      stride,
      {"padding", NNP_ATTR_INTS, false, "0", "dilation * (kernel_size - 1) - padding zeros on each side"},
      {"output_padding", NNP_ATTR_INTS, false, "0", "size added to one side of the output"},
      groups,
      bias,
      dilation,
      mode};
  add_builtin<Conv1d>(host, "nn.Conv1d", "1-D convolution over [N, C, L]", conv);
  add_builtin<Conv2d>(host, "nn.Conv2d", "2-D convolution over [N, C, H, W]", conv);
  add_builtin<Conv3d>(host, "nn.Conv3d", "3-D convolution over [N, C, D, H, W]", conv);
  add_builtin<ConvTranspose1d>(host, "nn.ConvTranspose1d", "1-D transposed convolution over [N, C, L]", transposed);
  add_builtin<ConvTranspose2d>(host, "nn.ConvTranspose2d", "2-D transposed convolution over [N, C, H, W]",
                               transposed);
  add_builtin<ConvTranspose3d>(host, "nn.ConvTranspose3d", "3-D transposed convolution over [N, C, D, H, W]",
                               transposed);
  const std::vector<AttrDecl> blocks{
      {"kernel_size", NNP_ATTR_INTS, true, nullptr, "block size"},
      {"dilation", NNP_ATTR_INTS, false, "1", "spacing between block elements"},
      {"padding", NNP_ATTR_INTS, false, "0", "zeros added on each side"},
      {"stride", NNP_ATTR_INTS, false, "1", "step between blocks"},
  };
  add_builtin<Unfold>(host, "nn.Unfold", "sliding blocks of [N, C, H, W] as columns [N, C * kh * kw, L]", blocks);
  std::vector<AttrDecl> fold{{"output_size", NNP_ATTR_INTS, true, nullptr, "the output's height and width"}};
  fold.insert(fold.end(), blocks.begin(), blocks.end());
  add_builtin<Fold>(host, "nn.Fold", "columns [N, C * kh * kw, L] summed into [N, C, *output_size]", fold);
}

}  // namespace nnp::library::layers
