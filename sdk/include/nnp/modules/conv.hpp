// nnp/modules/conv.hpp - typed Conv1d and Conv2d (libtorch's holders over
// the registry's nn.Conv1d and nn.Conv2d).
#pragma once

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
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(ExpandingArray<D>, dilation) = 1;
  NNP_ARG(int64_t, groups) = 1;
  NNP_ARG(bool, bias) = true;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

template <size_t D>
struct ConvImpl : Layer {
  ConvImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvImpl(const ConvOptions<D>& o)
      : Layer(D == 1 ? "nn.Conv1d" : "nn.Conv2d", Attrs()
                                                      .set("in_channels", o.in_channels())
                                                      .set("out_channels", o.out_channels())
                                                      .set("kernel_size", o.kernel_size().vec())
                                                      .set("stride", o.stride().vec())
                                                      .set("padding", o.padding().vec())
                                                      .set("dilation", o.dilation().vec())
                                                      .set("groups", o.groups())
                                                      .set("bias", o.bias())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  ConvOptions<D> options;
  Tensor weight, bias;
};
using Conv1dImpl = ConvImpl<1>;
using Conv2dImpl = ConvImpl<2>;
NNP_MODULE(Conv1d);
NNP_MODULE(Conv2d);

}  // namespace nnp::nn
