// nnp/modules/pooling.hpp - typed MaxPool1d/2d/3d, AvgPool1d/2d/3d,
// AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, LPPool1d/2d,
// FractionalMaxPool2d/3d and MaxUnpool1d/2d/3d (libtorch's holders over the
// registry's nn.* layers).
#pragma once

#include <nnp/functional/fractional_pooling.hpp>
#include <nnp/functional/pooling.hpp>
#include <nnp/functional/pooling_nd.hpp>
#include <nnp/functional/unpooling.hpp>
#include <nnp/module_holder.hpp>

namespace nnp::nn {

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

template <size_t D, const char* Type>
struct MaxPoolImpl : Layer {
  explicit MaxPoolImpl(const functional::MaxPoolFuncOptions<D>& o)
      : Layer(Type, Attrs()
                        .set("kernel_size", o.kernel_size().vec())
                        .set("stride", o.stride().vec())
                        .set("padding", o.padding().vec())
                        .set("dilation", o.dilation().vec())
                        .set("ceil_mode", o.ceil_mode())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  // libtorch's: the output and each maximum's flat position in its plane.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    if constexpr (D == 1) return functional::max_pool1d_with_indices(x, options);
    if constexpr (D == 2) return functional::max_pool2d_with_indices(x, options);
    if constexpr (D == 3) return functional::max_pool3d_with_indices(x, options);
  }
  functional::MaxPoolFuncOptions<D> options;
};
template <size_t D, const char* Type>
struct AvgPoolImpl : Layer {
  explicit AvgPoolImpl(const functional::AvgPoolFuncOptions<D>& o) : Layer(Type, attrs(o)), options(o) {}
  static Attrs attrs(const functional::AvgPoolFuncOptions<D>& o) {
    Attrs a;
    a.set("kernel_size", o.kernel_size().vec())
        .set("stride", o.stride().vec())
        .set("padding", o.padding().vec())
        .set("ceil_mode", o.ceil_mode())
        .set("count_include_pad", o.count_include_pad());
    if (o.divisor_override()) a.set("divisor_override", *o.divisor_override());
    return a;
  }
  Tensor forward(const Tensor& x) { return call({x}); }
  functional::AvgPoolFuncOptions<D> options;
};
inline constexpr char kMaxPool1dType[] = "nn.MaxPool1d";
inline constexpr char kMaxPool2dType[] = "nn.MaxPool2d";
inline constexpr char kAvgPool2dType[] = "nn.AvgPool2d";
inline constexpr char kMaxPool3dType[] = "nn.MaxPool3d";
inline constexpr char kAvgPool1dType[] = "nn.AvgPool1d";
inline constexpr char kAvgPool3dType[] = "nn.AvgPool3d";
using MaxPool1dOptions = functional::MaxPool1dFuncOptions;
using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
using MaxPool3dOptions = functional::MaxPool3dFuncOptions;
using AvgPool1dOptions = functional::AvgPool1dFuncOptions;
using AvgPool3dOptions = functional::AvgPool3dFuncOptions;
using MaxPool1dImpl = MaxPoolImpl<1, kMaxPool1dType>;
using MaxPool2dImpl = MaxPoolImpl<2, kMaxPool2dType>;
using AvgPool2dImpl = AvgPoolImpl<2, kAvgPool2dType>;
using MaxPool3dImpl = MaxPoolImpl<3, kMaxPool3dType>;
using AvgPool1dImpl = AvgPoolImpl<1, kAvgPool1dType>;
using AvgPool3dImpl = AvgPoolImpl<3, kAvgPool3dType>;
NNP_MODULE(MaxPool1d);
NNP_MODULE(MaxPool2d);
NNP_MODULE(AvgPool2d);
NNP_MODULE(MaxPool3d);
NNP_MODULE(AvgPool1d);
NNP_MODULE(AvgPool3d);

template <size_t D>
struct AdaptivePoolOptions {
  AdaptivePoolOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}               // NOLINT: implicit
  AdaptivePoolOptions(int64_t output_size) : output_size_(output_size) {}                         // NOLINT
  AdaptivePoolOptions(std::initializer_list<int64_t> output_size) : output_size_(output_size) {}  // NOLINT
  NNP_ARG(ExpandingArray<D>, output_size);
};
template <size_t D, const char* Type>
struct AdaptivePoolImpl : Layer {
  AdaptivePoolImpl(const AdaptivePoolOptions<D>& o)  // NOLINT: implicit, so AdaptiveMaxPool2d(3) works
      : Layer(Type, Attrs().set("output_size", o.output_size().vec())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  AdaptivePoolOptions<D> options;
};
#define NNP_ADAPTIVE_POOL(Name, D)                       \
  inline constexpr char k##Name##Type[] = "nn." #Name;   \
  using Name##Options = AdaptivePoolOptions<D>;          \
  using Name##Impl = AdaptivePoolImpl<D, k##Name##Type>; \
  NNP_MODULE(Name)
NNP_ADAPTIVE_POOL(AdaptiveAvgPool1d, 1);
NNP_ADAPTIVE_POOL(AdaptiveAvgPool3d, 3);
NNP_ADAPTIVE_POOL(AdaptiveMaxPool1d, 1);
NNP_ADAPTIVE_POOL(AdaptiveMaxPool2d, 2);
NNP_ADAPTIVE_POOL(AdaptiveMaxPool3d, 3);
#undef NNP_ADAPTIVE_POOL

template <size_t D>
struct LPPoolOptions {
  LPPoolOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  NNP_ARG(double, norm_type);
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride);  // default: kernel_size
  NNP_ARG(bool, ceil_mode) = false;
};
template <size_t D, const char* Type>
struct LPPoolImpl : Layer {
  explicit LPPoolImpl(const LPPoolOptions<D>& o)
      : Layer(Type, Attrs()
                        .set("norm_type", o.norm_type())
                        .set("kernel_size", o.kernel_size().vec())
                        .set("stride", o.stride().vec())
                        .set("ceil_mode", o.ceil_mode())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LPPoolOptions<D> options;
};
inline constexpr char kLPPool1dType[] = "nn.LPPool1d";
inline constexpr char kLPPool2dType[] = "nn.LPPool2d";
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;
using LPPool1dImpl = LPPoolImpl<1, kLPPool1dType>;
using LPPool2dImpl = LPPoolImpl<2, kLPPool2dType>;
NNP_MODULE(LPPool1d);
NNP_MODULE(LPPool2d);

// FractionalMaxPool2d/3d: forward(input) draws the windows' samples,
// forward(input, samples) takes PyTorch's _random_samples [N, C, D].
template <size_t D>
struct FractionalMaxPoolImpl : Layer {
  static constexpr const char* kTypes[] = {"", "", "nn.FractionalMaxPool2d", "nn.FractionalMaxPool3d"};
  explicit FractionalMaxPoolImpl(const functional::FractionalMaxPoolFuncOptions<D>& o)
      : Layer(kTypes[D], attrs(o)), options(o) {}
  static Attrs attrs(const functional::FractionalMaxPoolFuncOptions<D>& o) {
    Attrs a;
    a.set("kernel_size", o.kernel_size().vec());
    if (o.output_size()) a.set("output_size", o.output_size()->vec());
    if (o.output_ratio()) a.set("output_ratio", *o.output_ratio());
    return a;
  }
  Tensor forward(const Tensor& input, const Tensor& random_samples = {}) {
    return call_values({input, random_samples}).tensor(0);
  }
  // libtorch's: the output and each maximum's flat position in its plane.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input, const Tensor& random_samples = {}) {
    functional::FractionalMaxPoolFuncOptions<D> o = options;
    if (random_samples.defined()) o._random_samples(random_samples);
    functional::detail::MaxPooled p = functional::detail::fractional_max_pool<D>(kTypes[D] + 3, input, o, true);
    return {p.values, p.indices};
  }
  functional::FractionalMaxPoolFuncOptions<D> options;
};
using FractionalMaxPool2dOptions = functional::FractionalMaxPool2dFuncOptions;
using FractionalMaxPool3dOptions = functional::FractionalMaxPool3dFuncOptions;
using FractionalMaxPool2dImpl = FractionalMaxPoolImpl<2>;
using FractionalMaxPool3dImpl = FractionalMaxPoolImpl<3>;
NNP_MODULE(FractionalMaxPool2d);
NNP_MODULE(FractionalMaxPool3d);

template <size_t D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(ExpandingArray<D> kernel_size)  // NOLINT: implicit, as libtorch's
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride);  // default: kernel_size
  NNP_ARG(ExpandingArray<D>, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

template <size_t D>
struct MaxUnpoolImpl : Layer {
  static constexpr const char* kTypes[] = {"", "nn.MaxUnpool1d", "nn.MaxUnpool2d", "nn.MaxUnpool3d"};
  explicit MaxUnpoolImpl(const MaxUnpoolOptions<D>& o)
      : Layer(kTypes[D], std::move(Attrs()
                                       .set("kernel_size", o.kernel_size().vec())
                                       .set("stride", o.stride().vec())
                                       .set("padding", o.padding().vec()))),
        options(o) {}
  // indices as max pooling with return_indices gives them; output_size
  // (the last D sizes, or all) within a stride of the default.
  Tensor forward(const Tensor& input, const Tensor& indices,
                 const std::optional<std::vector<int64_t>>& output_size = std::nullopt) {
    if (!output_size) return call({input, indices});
    return functional::detail::max_unpool<D>(kTypes[D] + 3, input, indices,
                                             functional::MaxUnpoolFuncOptions<D>(options.kernel_size())
                                                 .stride(options.stride())
                                                 .padding(options.padding())
                                                 .output_size(output_size));
  }
  MaxUnpoolOptions<D> options;
};
using MaxUnpool1dImpl = MaxUnpoolImpl<1>;
using MaxUnpool2dImpl = MaxUnpoolImpl<2>;
using MaxUnpool3dImpl = MaxUnpoolImpl<3>;
NNP_MODULE(MaxUnpool1d);
NNP_MODULE(MaxUnpool2d);
NNP_MODULE(MaxUnpool3d);

}  // namespace nnp::nn
