// activations.hpp - typed holders for the nnplug.activations plugin's layers,
// for applications (the plugin itself needs none of this):
//
//   act::Swish swish(act::SwishOptions().beta(2.0));
//   nnp::Tensor y = swish(x);
//
// They create the plugin's registered types (act.Swish, act.Mish), so the
// plugin must be loaded; a missing plugin is a clear error naming the type.
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>

namespace act {

struct SwishOptions {
  NNP_ARG(double, beta) = 1.0;
};
struct SwishImpl : nnp::nn::Layer {
  explicit SwishImpl(const SwishOptions& o = {})
      : Layer("act.Swish", nnp::nn::Attrs().set("beta", o.beta())), options(o) {}
  nnp::Tensor forward(const nnp::Tensor& x) { return call({x}); }
  SwishOptions options;
};
NNP_MODULE(Swish);

struct MishImpl : nnp::nn::Layer {
  MishImpl() : Layer("act.Mish", nnp::nn::Attrs()) {}
  nnp::Tensor forward(const nnp::Tensor& x) { return call({x}); }
};
NNP_MODULE(Mish);

}  // namespace act
