// nnp/modules/normalization.hpp - typed BatchNorm1d, BatchNorm2d and
// LayerNorm (libtorch's holders over the registry's nn.* layers).
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <optional>
#include <vector>

namespace nnp::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, num_features);
  NNP_ARG(double, eps) = 1e-5;
  NNP_ARG(std::optional<double>, momentum) = 0.1;  // nullopt: a cumulative average
  NNP_ARG(bool, affine) = true;
  NNP_ARG(bool, track_running_stats) = true;
};

// BatchNorm1d and BatchNorm2d: the same fields over different layer types.
template <const char* Type>
struct BatchNormImpl : Layer {
  BatchNormImpl(int64_t num_features) : BatchNormImpl(BatchNormOptions(num_features)) {}  // NOLINT
  explicit BatchNormImpl(const BatchNormOptions& o)
      : Layer(Type, attrs_of(o)),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")),
        running_mean(tensor_named("running_mean")),
        running_var(tensor_named("running_var")),
        num_batches_tracked(tensor_named("num_batches_tracked")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  static Attrs attrs_of(const BatchNormOptions& o) {
    Attrs a;
    a.set("num_features", o.num_features()).set("eps", o.eps()).set("affine", o.affine());
    a.set("track_running_stats", o.track_running_stats());
    if (o.momentum()) a.set("momentum", *o.momentum());
    return a;
  }
};
inline constexpr char kBatchNorm1dType[] = "nn.BatchNorm1d";
inline constexpr char kBatchNorm2dType[] = "nn.BatchNorm2d";
using BatchNorm1dImpl = BatchNormImpl<kBatchNorm1dType>;
using BatchNorm2dImpl = BatchNormImpl<kBatchNorm2dType>;
NNP_MODULE(BatchNorm1d);
NNP_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit, as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  NNP_ARG(std::vector<int64_t>, normalized_shape);
  NNP_ARG(double, eps) = 1e-5;
  NNP_ARG(bool, elementwise_affine) = true;
  NNP_ARG(bool, bias) = true;
};
struct LayerNormImpl : Layer {
  explicit LayerNormImpl(const LayerNormOptions& o)
      : Layer("nn.LayerNorm", Attrs()
                                  .set("normalized_shape", o.normalized_shape())
                                  .set("eps", o.eps())
                                  .set("elementwise_affine", o.elementwise_affine())
                                  .set("bias", o.bias())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LayerNormOptions options;
  Tensor weight, bias;
};
NNP_MODULE(LayerNorm);

}  // namespace nnp::nn
