// nnp/modules/quantization.hpp - typed observers, FakeQuantize and quantized
// layers (libtorch-style holders over the registry's layers; ABI 1.7).
//
//   nn::MinMaxObserver obs(nn::ObserverOptions().dtype(kQInt8).qscheme("per_tensor_symmetric"));
//   obs(x);  obs->calculate_qparams();  // {scale, zero_point}, as PyTorch's
//   nn::FakeQuantize fq;                // quantization-aware training
//   fq->disable_observer();
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/modules/linear.hpp>
#include <nnp/options.hpp>
#include <nnp/quantization.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn {

struct ObserverOptions {
  NNP_ARG(Dtype, dtype) = kQUInt8;
  NNP_ARG(std::optional<std::string>, qscheme);  // default: per_tensor_affine (per_channel_affine)
  NNP_ARG(bool, reduce_range) = false;
  NNP_ARG(std::optional<int64_t>, quant_min);
  NNP_ARG(std::optional<int64_t>, quant_max);
  NNP_ARG(double, eps) = 1.1920928955078125e-07;
  NNP_ARG(double, averaging_constant) = 0.01;  // MovingAverageMinMaxObserver
  NNP_ARG(int64_t, ch_axis) = 0;               // PerChannelMinMaxObserver
};

namespace detail {
inline Attrs observer_attrs(const ObserverOptions& o, bool moving, bool per_channel) {
  Attrs a;
  a.set("dtype", o.dtype() == kQInt8 ? "qint8" : "quint8").set("reduce_range", o.reduce_range()).set("eps", o.eps());
  if (o.qscheme()) a.set("qscheme", *o.qscheme());
  if (o.quant_min()) a.set("quant_min", *o.quant_min());
  if (o.quant_max()) a.set("quant_max", *o.quant_max());
  if (moving) a.set("averaging_constant", o.averaging_constant());
  if (per_channel) a.set("ch_axis", o.ch_axis());
  return a;
}
}  // namespace detail

// The observers' shared holder: the layer and calculate_qparams on what it saw.
struct ObserverImpl : Layer {
  ObserverImpl(const char* type, const ObserverOptions& o, bool moving, bool per_channel)
      : Layer(type, detail::observer_attrs(o, moving, per_channel)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  QParams calculate_qparams() const {
    const std::string scheme = options.qscheme().value_or("per_tensor_affine");
    const bool symmetric = scheme.find("symmetric") != std::string::npos;
    const QRange range =
        observer_range(options.dtype(), options.reduce_range(), options.quant_min(), options.quant_max());
    auto values = [this](const char* name) { return get_buffer(name).to(Dtype::f32).reshape({-1}).to_vector<float>(); };
    return qparams_from_range(values("min_val"), values("max_val"), values("eps")[0], options.dtype(), symmetric,
                              range);
  }
  ObserverOptions options;
};

struct MinMaxObserverImpl : ObserverImpl {
  explicit MinMaxObserverImpl(const ObserverOptions& o = {}) : ObserverImpl("nn.MinMaxObserver", o, false, false) {}
};
NNP_MODULE(MinMaxObserver);
struct MovingAverageMinMaxObserverImpl : ObserverImpl {
  explicit MovingAverageMinMaxObserverImpl(const ObserverOptions& o = {})
      : ObserverImpl("nn.MovingAverageMinMaxObserver", o, true, false) {}
};
NNP_MODULE(MovingAverageMinMaxObserver);
struct PerChannelMinMaxObserverImpl : ObserverImpl {
  explicit PerChannelMinMaxObserverImpl(const ObserverOptions& o = {})
      : ObserverImpl("nn.PerChannelMinMaxObserver", o, false, true) {}
};
NNP_MODULE(PerChannelMinMaxObserver);

struct FakeQuantizeOptions {
  NNP_ARG(std::string, observer) = "MovingAverageMinMaxObserver";
  NNP_ARG(int64_t, quant_min) = 0;
  NNP_ARG(int64_t, quant_max) = 255;
  NNP_ARG(ObserverOptions, observer_options);  // dtype, qscheme, reduce_range, eps, ...
};

// torch.ao.quantization.FakeQuantize.
struct FakeQuantizeImpl : Layer {
  explicit FakeQuantizeImpl(const FakeQuantizeOptions& o = {}) : Layer("nn.FakeQuantize", attrs(o)), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  void enable_fake_quant(bool enabled = true) { get_buffer("fake_quant_enabled").fill_(enabled ? 1 : 0); }
  void disable_fake_quant() { enable_fake_quant(false); }
  void enable_observer(bool enabled = true) { get_buffer("observer_enabled").fill_(enabled ? 1 : 0); }
  void disable_observer() { enable_observer(false); }
  FakeQuantizeOptions options;

 private:
  static Attrs attrs(const FakeQuantizeOptions& o) {
    Attrs a = detail::observer_attrs(o.observer_options(), true, true);
    a.set("observer", o.observer()).set("quant_min", o.quant_min()).set("quant_max", o.quant_max());
    return a;
  }
};
NNP_MODULE(FakeQuantize);

// The quantized layers, as quantize_dynamic / convert make them (their
// state is loaded from the float layer's).
struct DynamicQuantizedLinearImpl : Layer {
  explicit DynamicQuantizedLinearImpl(const LinearOptions& o)
      : Layer("nn.quantized.dynamic.Linear",
              Attrs().set("in_features", o.in_features()).set("out_features", o.out_features()).set("bias", o.bias())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LinearOptions options;
};
NNP_MODULE(DynamicQuantizedLinear);

struct QuantizedLinearOptions {
  QuantizedLinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  NNP_ARG(int64_t, in_features);
  NNP_ARG(int64_t, out_features);
  NNP_ARG(bool, bias) = true;
  NNP_ARG(bool, relu) = false;  // LinearReLU
};
struct QuantizedLinearImpl : Layer {
  explicit QuantizedLinearImpl(const QuantizedLinearOptions& o)
      : Layer("nn.quantized.Linear", Attrs()
                                         .set("in_features", o.in_features())
                                         .set("out_features", o.out_features())
                                         .set("bias", o.bias())
                                         .set("relu", o.relu())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  QuantizedLinearOptions options;
};
NNP_MODULE(QuantizedLinear);

struct QuantizedConv2dOptions {
  QuantizedConv2dOptions(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  NNP_ARG(int64_t, in_channels);
  NNP_ARG(int64_t, out_channels);
  NNP_ARG(std::vector<int64_t>, kernel_size);
  NNP_ARG(std::vector<int64_t>, stride) = {1};
  NNP_ARG(std::vector<int64_t>, padding) = {0};
  NNP_ARG(std::vector<int64_t>, dilation) = {1};
  NNP_ARG(bool, bias) = true;
  NNP_ARG(bool, relu) = false;  // ConvReLU2d
};
struct QuantizedConv2dImpl : Layer {
  explicit QuantizedConv2dImpl(const QuantizedConv2dOptions& o)
      : Layer("nn.quantized.Conv2d", Attrs()
                                         .set("in_channels", o.in_channels())
                                         .set("out_channels", o.out_channels())
                                         .set("kernel_size", o.kernel_size())
                                         .set("stride", o.stride())
                                         .set("padding", o.padding())
                                         .set("dilation", o.dilation())
                                         .set("bias", o.bias())
                                         .set("relu", o.relu())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  QuantizedConv2dOptions options;
};
NNP_MODULE(QuantizedConv2d);

}  // namespace nnp::nn
