// nnp/modules/activation.hpp - typed ReLU, LeakyReLU, GELU, SiLU, Sigmoid,
// Tanh, Softmax and LogSoftmax (libtorch's holders over the registry's
// nn.* layers).
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
#undef NNP_PLAIN_LAYER

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

}  // namespace nnp::nn
