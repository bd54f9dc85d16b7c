// nnp/modules/padding.hpp - typed ReflectionPad, ReplicationPad,
// CircularPad, ZeroPad and ConstantPad in 1, 2 and 3 dimensions (libtorch's
// holders over the registry's nn.* layers):
//
//   nnp::nn::ReflectionPad2d pad(2);                                   // every side
//   nnp::nn::ConstantPad1d fill(nnp::nn::ConstantPad1dOptions({1, 2}, 3.5));
#pragma once

#include <initializer_list>
#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <vector>

namespace nnp::nn {

// One size for every side, or (left, right[, top, bottom[, front, back]]).
struct PaddingOptions {
  PaddingOptions(int64_t padding) : padding_{padding} {}                          // NOLINT: implicit, as libtorch's
  PaddingOptions(std::initializer_list<int64_t> padding) : padding_(padding) {}   // NOLINT
  PaddingOptions(std::vector<int64_t> padding) : padding_(std::move(padding)) {}  // NOLINT
  NNP_ARG(std::vector<int64_t>, padding);
};
struct ConstantPaddingOptions {
  ConstantPaddingOptions(PaddingOptions padding, double value) : padding_(padding.padding()), value_(value) {}
  NNP_ARG(std::vector<int64_t>, padding);
  NNP_ARG(double, value);
};

template <const char* Type>
struct PadImpl : Layer {
  PadImpl(const PaddingOptions& o) : Layer(Type, Attrs().set("padding", o.padding())), options(o) {}  // NOLINT
  Tensor forward(const Tensor& x) { return call({x}); }
  PaddingOptions options;
};
template <const char* Type>
struct ConstantPadImpl : Layer {
  explicit ConstantPadImpl(const ConstantPaddingOptions& o)
      : Layer(Type, Attrs().set("padding", o.padding()).set("value", o.value())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  ConstantPaddingOptions options;
};

// (Base, not Impl: a parameter named Impl would capture Name##Impl.)
#define NNP_PAD_LAYER(Name, Base, OptionsType)         \
  inline constexpr char k##Name##Type[] = "nn." #Name; \
  using Name##Options = OptionsType;                   \
  using Name##Impl = Base<k##Name##Type>;              \
  NNP_MODULE(Name)
NNP_PAD_LAYER(ReflectionPad1d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ReflectionPad2d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ReflectionPad3d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ReplicationPad1d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ReplicationPad2d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ReplicationPad3d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(CircularPad1d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(CircularPad2d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(CircularPad3d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ZeroPad1d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ZeroPad2d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ZeroPad3d, PadImpl, PaddingOptions);
NNP_PAD_LAYER(ConstantPad1d, ConstantPadImpl, ConstantPaddingOptions);
NNP_PAD_LAYER(ConstantPad2d, ConstantPadImpl, ConstantPaddingOptions);
NNP_PAD_LAYER(ConstantPad3d, ConstantPadImpl, ConstantPaddingOptions);
#undef NNP_PAD_LAYER

}  // namespace nnp::nn
