// nnp/modules/pooling.hpp - typed MaxPool2d, AvgPool2d and
// AdaptiveAvgPool2d (libtorch's holders over the registry's nn.* layers).
#pragma once

#include <nnp/functional/pooling.hpp>
#include <nnp/module_holder.hpp>

namespace nnp::nn {

using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
struct MaxPool2dImpl : Layer {
  explicit MaxPool2dImpl(const MaxPool2dOptions& o)
      : Layer("nn.MaxPool2d", Attrs()
                                  .set("kernel_size", o.kernel_size().vec())
                                  .set("stride", o.stride().vec())
                                  .set("padding", o.padding().vec())
                                  .set("dilation", o.dilation().vec())
                                  .set("ceil_mode", o.ceil_mode())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  MaxPool2dOptions options;
};
NNP_MODULE(MaxPool2d);

using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
struct AvgPool2dImpl : Layer {
  explicit AvgPool2dImpl(const AvgPool2dOptions& o)
      : Layer("nn.AvgPool2d", Attrs()
                                  .set("kernel_size", o.kernel_size().vec())
                                  .set("stride", o.stride().vec())
                                  .set("padding", o.padding().vec())
                                  .set("ceil_mode", o.ceil_mode())
                                  .set("count_include_pad", o.count_include_pad())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  AvgPool2dOptions options;
};
NNP_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}  // NOLINT: implicit
  AdaptiveAvgPool2dOptions(int64_t output_size) : output_size_(output_size) {}            // NOLINT
  AdaptiveAvgPool2dOptions(std::initializer_list<int64_t> output_size)                    // NOLINT
      : output_size_(output_size) {}
  NNP_ARG(ExpandingArray<2>, output_size);
};
struct AdaptiveAvgPool2dImpl : Layer {
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& o)
      : Layer("nn.AdaptiveAvgPool2d", Attrs().set("output_size", o.output_size().vec())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  AdaptiveAvgPool2dOptions options;
};
NNP_MODULE(AdaptiveAvgPool2d);

}  // namespace nnp::nn
