// nnp/modules/dropout.hpp - typed Dropout1d, Dropout2d, Dropout3d,
// AlphaDropout and FeatureAlphaDropout (libtorch's holders over the
// registry's nn.* layers; Dropout is in nnp/modules/linear.hpp).
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>

namespace nnp::nn {

struct FeatureDropoutOptions {
  FeatureDropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, p);
  NNP_ARG(bool, inplace) = false;
};

template <const char* Type>
struct FeatureDropoutImpl : Layer {
  explicit FeatureDropoutImpl(const FeatureDropoutOptions& o = {})
      : Layer(Type, Attrs().set("p", o.p()).set("inplace", o.inplace())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  FeatureDropoutOptions options;
};

#define NNP_DROPOUT_LAYER(Name)                         \
  inline constexpr char k##Name##Type[] = "nn." #Name;  \
  using Name##Options = FeatureDropoutOptions;          \
  using Name##Impl = FeatureDropoutImpl<k##Name##Type>; \
  NNP_MODULE(Name)
NNP_DROPOUT_LAYER(Dropout1d);
NNP_DROPOUT_LAYER(Dropout2d);
NNP_DROPOUT_LAYER(Dropout3d);
NNP_DROPOUT_LAYER(AlphaDropout);
NNP_DROPOUT_LAYER(FeatureAlphaDropout);
#undef NNP_DROPOUT_LAYER

}  // namespace nnp::nn
