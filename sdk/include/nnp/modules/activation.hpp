// nnp/modules/activation.hpp - typed activations (libtorch's holders over
// the registry's nn.* layers): ReLU, LeakyReLU, GELU, SiLU, Sigmoid, Tanh,
// ELU, SELU, CELU, GLU, Hardtanh, ReLU6, Hardswish, Hardsigmoid, Hardshrink,
// Softshrink, Tanhshrink, Softplus, Softsign, LogSigmoid, Mish, Threshold,
// RReLU, PReLU, Softmax, LogSoftmax, Softmin, Softmax2d.
#pragma once

#include <nnp/functional/activation.hpp>
#include <nnp/module_holder.hpp>

namespace nnp::nn {

// A layer without options: its registry type and forward.
#define NNP_PLAIN_LAYER(Name)                             \
  struct Name##Impl : Layer {                             \
    Name##Impl() : Layer("nn." #Name, Attrs()) {}         \
    Tensor forward(const Tensor& x) { return call({x}); } \
  };                                                      \
  NNP_MODULE(Name)

NNP_PLAIN_LAYER(ReLU);
NNP_PLAIN_LAYER(SiLU);
NNP_PLAIN_LAYER(Sigmoid);
NNP_PLAIN_LAYER(Tanh);
NNP_PLAIN_LAYER(Tanhshrink);
NNP_PLAIN_LAYER(Softsign);
NNP_PLAIN_LAYER(LogSigmoid);
NNP_PLAIN_LAYER(Softmax2d);
#undef NNP_PLAIN_LAYER

// A layer whose only option is inplace.
#define NNP_INPLACE_LAYER(Name, FuncOptions)                                     \
  using Name##Options = functional::FuncOptions;                                 \
  struct Name##Impl : Layer {                                                    \
    explicit Name##Impl(const Name##Options& o = {})                             \
        : Layer("nn." #Name, Attrs().set("inplace", o.inplace())), options(o) {} \
    Tensor forward(const Tensor& x) { return call({x}); }                        \
    Name##Options options;                                                       \
  };                                                                             \
  NNP_MODULE(Name)

NNP_INPLACE_LAYER(SELU, SELUFuncOptions);
NNP_INPLACE_LAYER(ReLU6, ReLU6FuncOptions);
NNP_INPLACE_LAYER(Hardswish, HardswishFuncOptions);
NNP_INPLACE_LAYER(Hardsigmoid, HardsigmoidFuncOptions);
NNP_INPLACE_LAYER(Mish, MishFuncOptions);
#undef NNP_INPLACE_LAYER

using ELUOptions = functional::ELUFuncOptions;
struct ELUImpl : Layer {
  explicit ELUImpl(const ELUOptions& o = {})
      : Layer("nn.ELU", Attrs().set("alpha", o.alpha()).set("inplace", o.inplace())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  ELUOptions options;
};
NNP_MODULE(ELU);

using CELUOptions = functional::CELUFuncOptions;
struct CELUImpl : Layer {
  explicit CELUImpl(const CELUOptions& o = {})
      : Layer("nn.CELU", Attrs().set("alpha", o.alpha()).set("inplace", o.inplace())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  CELUOptions options;
};
NNP_MODULE(CELU);

using GLUOptions = functional::GLUFuncOptions;
struct GLUImpl : Layer {
  explicit GLUImpl(const GLUOptions& o = {}) : Layer("nn.GLU", Attrs().set("dim", o.dim())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  GLUOptions options;
};
NNP_MODULE(GLU);

using HardtanhOptions = functional::HardtanhFuncOptions;
struct HardtanhImpl : Layer {
  explicit HardtanhImpl(const HardtanhOptions& o = {})
      : Layer("nn.Hardtanh",
              Attrs().set("min_val", o.min_val()).set("max_val", o.max_val()).set("inplace", o.inplace())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  HardtanhOptions options;
};
NNP_MODULE(Hardtanh);

using HardshrinkOptions = functional::HardshrinkFuncOptions;
struct HardshrinkImpl : Layer {
  explicit HardshrinkImpl(const HardshrinkOptions& o = {})
      : Layer("nn.Hardshrink", Attrs().set("lambd", o.lambda())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  HardshrinkOptions options;
};
NNP_MODULE(Hardshrink);

using SoftshrinkOptions = functional::SoftshrinkFuncOptions;
struct SoftshrinkImpl : Layer {
  explicit SoftshrinkImpl(const SoftshrinkOptions& o = {})
      : Layer("nn.Softshrink", Attrs().set("lambd", o.lambda())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  SoftshrinkOptions options;
};
NNP_MODULE(Softshrink);

using SoftplusOptions = functional::SoftplusFuncOptions;
struct SoftplusImpl : Layer {
  explicit SoftplusImpl(const SoftplusOptions& o = {})
      : Layer("nn.Softplus", Attrs().set("beta", o.beta()).set("threshold", o.threshold())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  SoftplusOptions options;
};
NNP_MODULE(Softplus);

using ThresholdOptions = functional::ThresholdFuncOptions;
struct ThresholdImpl : Layer {
  ThresholdImpl(double threshold, double value) : ThresholdImpl(ThresholdOptions(threshold, value)) {}
  explicit ThresholdImpl(const ThresholdOptions& o)
      : Layer("nn.Threshold",
              Attrs().set("threshold", o.threshold()).set("value", o.value()).set("inplace", o.inplace())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  ThresholdOptions options;
};
NNP_MODULE(Threshold);

struct RReLUOptions {
  NNP_ARG(double, lower) = 1.0 / 8.0;
  NNP_ARG(double, upper) = 1.0 / 3.0;
  NNP_ARG(bool, inplace) = false;
};
struct RReLUImpl : Layer {
  explicit RReLUImpl(const RReLUOptions& o = {})
      : Layer("nn.RReLU", Attrs().set("lower", o.lower()).set("upper", o.upper()).set("inplace", o.inplace())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  RReLUOptions options;
};
NNP_MODULE(RReLU);

struct PReLUOptions {
  NNP_ARG(int64_t, num_parameters) = 1;
  NNP_ARG(double, init) = 0.25;
};
struct PReLUImpl : Layer {
  explicit PReLUImpl(const PReLUOptions& o = {})
      : Layer("nn.PReLU", Attrs().set("num_parameters", o.num_parameters()).set("init", o.init())),
        options(o),
        weight(tensor_named("weight")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  PReLUOptions options;
  Tensor weight;
};
NNP_MODULE(PReLU);

using LeakyReLUOptions = functional::LeakyReLUFuncOptions;
struct LeakyReLUImpl : Layer {
  explicit LeakyReLUImpl(const LeakyReLUOptions& o = {})
      : Layer("nn.LeakyReLU", Attrs().set("negative_slope", o.negative_slope())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LeakyReLUOptions options;
};
NNP_MODULE(LeakyReLU);

using GELUOptions = functional::GELUFuncOptions;
struct GELUImpl : Layer {
  explicit GELUImpl(const GELUOptions& o = {})
      : Layer("nn.GELU", Attrs().set("approximate", o.approximate())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  GELUOptions options;
};
NNP_MODULE(GELU);

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, dim);
};
struct SoftmaxImpl : Layer {
  explicit SoftmaxImpl(const SoftmaxOptions& o) : Layer("nn.Softmax", Attrs().set("dim", o.dim())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  SoftmaxOptions options;
};
NNP_MODULE(Softmax);

using LogSoftmaxOptions = SoftmaxOptions;
struct LogSoftmaxImpl : Layer {
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& o)
      : Layer("nn.LogSoftmax", Attrs().set("dim", o.dim())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LogSoftmaxOptions options;
};
NNP_MODULE(LogSoftmax);

using SoftminOptions = SoftmaxOptions;
struct SoftminImpl : Layer {
  explicit SoftminImpl(const SoftminOptions& o) : Layer("nn.Softmin", Attrs().set("dim", o.dim())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  SoftminOptions options;
};
NNP_MODULE(Softmin);

}  // namespace nnp::nn
