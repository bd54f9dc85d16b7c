// nnp/modules/conv.hpp - typed Conv1d/2d/3d, ConvTranspose1d/2d/3d, Fold and
// Unfold (libtorch's holders over the registry's layer types).
#pragma once

#include <nnp/functional/conv_nd.hpp>
#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>

namespace nnp::nn {

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  NNP_ARG(int64_t, in_channels);
  NNP_ARG(int64_t, out_channels);
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride) = 1;
  NNP_ARG(ConvPadding<D>, padding) = 0;  // sizes, or kSame / kValid
  NNP_ARG(ExpandingArray<D>, dilation) = 1;
  NNP_ARG(int64_t, groups) = 1;
  NNP_ARG(bool, bias) = true;
  NNP_ARG(std::string, padding_mode) = kZeros;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

template <size_t D>
struct ConvImpl : Layer {
  static constexpr const char* kTypes[] = {"", "nn.Conv1d", "nn.Conv2d", "nn.Conv3d"};
  ConvImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvImpl(const ConvOptions<D>& o) : Layer(kTypes[D], attrs(o)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  ConvOptions<D> options;
  Tensor weight = tensor_named("weight"), bias = tensor_named("bias");

 private:
  static Attrs attrs(const ConvOptions<D>& o) {
    Attrs a;
    a.set("in_channels", o.in_channels())
        .set("out_channels", o.out_channels())
        .set("kernel_size", o.kernel_size().vec())
        .set("stride", o.stride().vec())
        .set("dilation", o.dilation().vec())
        .set("groups", o.groups())
        .set("bias", o.bias())
        .set("padding_mode", o.padding_mode());
    if (o.padding().rule.empty())
      a.set("padding", o.padding().sizes.vec());
    else
      a.set("padding", o.padding().rule);
    return a;
  }
};
using Conv1dImpl = ConvImpl<1>;
using Conv2dImpl = ConvImpl<2>;
using Conv3dImpl = ConvImpl<3>;
NNP_MODULE(Conv1d);
NNP_MODULE(Conv2d);
NNP_MODULE(Conv3d);

template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  NNP_ARG(int64_t, in_channels);
  NNP_ARG(int64_t, out_channels);
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride) = 1;
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(ExpandingArray<D>, output_padding) = 0;
  NNP_ARG(int64_t, groups) = 1;
  NNP_ARG(bool, bias) = true;
  NNP_ARG(ExpandingArray<D>, dilation) = 1;
  NNP_ARG(std::string, padding_mode) = kZeros;
};
using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

template <size_t D>
struct ConvTransposeImpl : Layer {
  static constexpr const char* kTypes[] = {"", "nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.ConvTranspose3d"};
  ConvTransposeImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvTransposeImpl(ConvTransposeOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvTransposeImpl(const ConvTransposeOptions<D>& o)
      : Layer(kTypes[D], std::move(Attrs()
                                       .set("in_channels", o.in_channels())
                                       .set("out_channels", o.out_channels())
                                       .set("kernel_size", o.kernel_size().vec())
                                       .set("stride", o.stride().vec())
                                       .set("padding", o.padding().vec())
                                       .set("output_padding", o.output_padding().vec())
                                       .set("groups", o.groups())
                                       .set("bias", o.bias())
                                       .set("dilation", o.dilation().vec())
                                       .set("padding_mode", o.padding_mode()))),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  // output_size (the last D sizes, or all) picks the output padding, as PyTorch's.
  Tensor forward(const Tensor& x, const std::vector<int64_t>& output_size) {
    return call_values({x, from_vector(output_size)}).tensor(0);
  }
  ConvTransposeOptions<D> options;
  Tensor weight = tensor_named("weight"), bias = tensor_named("bias");
};
using ConvTranspose1dImpl = ConvTransposeImpl<1>;
using ConvTranspose2dImpl = ConvTransposeImpl<2>;
using ConvTranspose3dImpl = ConvTransposeImpl<3>;
NNP_MODULE(ConvTranspose1d);
NNP_MODULE(ConvTranspose2d);
NNP_MODULE(ConvTranspose3d);

namespace detail {
// Fold and Unfold print their sizes as given: 2, or (2, 3).
inline std::vector<int64_t> as_given(const ExpandingArray<2>& v) {
  return v[0] == v[1] ? std::vector<int64_t>{v[0]} : v.vec();
}
template <typename BlockOptions>
Attrs block_attrs(const BlockOptions& o) {
  Attrs a;
  a.set("kernel_size", as_given(o.kernel_size()))
      .set("dilation", as_given(o.dilation()))
      .set("padding", as_given(o.padding()))
      .set("stride", as_given(o.stride()));
  return a;
}
}  // namespace detail

// The options are the functions' (nnp/functional/conv_nd.hpp), as libtorch's.
using UnfoldOptions = functional::UnfoldFuncOptions;
struct UnfoldImpl : Layer {
  explicit UnfoldImpl(const UnfoldOptions& o) : Layer("nn.Unfold", detail::block_attrs(o)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  UnfoldOptions options;
};
NNP_MODULE(Unfold);

using FoldOptions = functional::FoldFuncOptions;
struct FoldImpl : Layer {
  explicit FoldImpl(const FoldOptions& o)
      : Layer("nn.Fold", std::move(detail::block_attrs(o).set("output_size", detail::as_given(o.output_size())))),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  FoldOptions options;
};
NNP_MODULE(Fold);

}  // namespace nnp::nn
