// nnp/modules/normalization.hpp - typed BatchNorm1d/2d/3d,
// InstanceNorm1d/2d/3d, GroupNorm, LayerNorm, LocalResponseNorm and
// CrossMapLRN2d (libtorch's holders over the registry's nn.* layers).
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
    a.set("momentum", o.momentum());  // None: a cumulative average
    return a;
  }
};
inline constexpr char kBatchNorm1dType[] = "nn.BatchNorm1d";
inline constexpr char kBatchNorm2dType[] = "nn.BatchNorm2d";
inline constexpr char kBatchNorm3dType[] = "nn.BatchNorm3d";
using BatchNorm1dImpl = BatchNormImpl<kBatchNorm1dType>;
using BatchNorm2dImpl = BatchNormImpl<kBatchNorm2dType>;
using BatchNorm3dImpl = BatchNormImpl<kBatchNorm3dType>;
NNP_MODULE(BatchNorm1d);
NNP_MODULE(BatchNorm2d);
NNP_MODULE(BatchNorm3d);

struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, num_features);
  NNP_ARG(double, eps) = 1e-5;
  NNP_ARG(double, momentum) = 0.1;
  NNP_ARG(bool, affine) = false;
  NNP_ARG(bool, track_running_stats) = false;
};
template <const char* Type>
struct InstanceNormImpl : Layer {
  InstanceNormImpl(int64_t num_features) : InstanceNormImpl(InstanceNormOptions(num_features)) {}  // NOLINT
  explicit InstanceNormImpl(const InstanceNormOptions& o)
      : Layer(Type, Attrs()
                        .set("num_features", o.num_features())
                        .set("eps", o.eps())
                        .set("momentum", o.momentum())
                        .set("affine", o.affine())
                        .set("track_running_stats", o.track_running_stats())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")),
        running_mean(tensor_named("running_mean")),
        running_var(tensor_named("running_var")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  InstanceNormOptions options;
  Tensor weight, bias, running_mean, running_var;
};
inline constexpr char kInstanceNorm1dType[] = "nn.InstanceNorm1d";
inline constexpr char kInstanceNorm2dType[] = "nn.InstanceNorm2d";
inline constexpr char kInstanceNorm3dType[] = "nn.InstanceNorm3d";
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;
using InstanceNorm1dImpl = InstanceNormImpl<kInstanceNorm1dType>;
using InstanceNorm2dImpl = InstanceNormImpl<kInstanceNorm2dType>;
using InstanceNorm3dImpl = InstanceNormImpl<kInstanceNorm3dType>;
NNP_MODULE(InstanceNorm1d);
NNP_MODULE(InstanceNorm2d);
NNP_MODULE(InstanceNorm3d);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  NNP_ARG(int64_t, num_groups);
  NNP_ARG(int64_t, num_channels);
  NNP_ARG(double, eps) = 1e-5;
  NNP_ARG(bool, affine) = true;
};
struct GroupNormImpl : Layer {
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& o)
      : Layer("nn.GroupNorm", Attrs()
                                  .set("num_groups", o.num_groups())
                                  .set("num_channels", o.num_channels())
                                  .set("eps", o.eps())
                                  .set("affine", o.affine())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  GroupNormOptions options;
  Tensor weight, bias;
};
NNP_MODULE(GroupNorm);

struct LocalResponseNormOptions {
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, size);
  NNP_ARG(double, alpha) = 1e-4;
  NNP_ARG(double, beta) = 0.75;
  NNP_ARG(double, k) = 1.0;
};
using CrossMapLRN2dOptions = LocalResponseNormOptions;
template <const char* Type>
struct ResponseNormImpl : Layer {
  ResponseNormImpl(int64_t size) : ResponseNormImpl(LocalResponseNormOptions(size)) {}  // NOLINT
  explicit ResponseNormImpl(const LocalResponseNormOptions& o)
      : Layer(Type, Attrs().set("size", o.size()).set("alpha", o.alpha()).set("beta", o.beta()).set("k", o.k())),
        options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LocalResponseNormOptions options;
};
inline constexpr char kLocalResponseNormType[] = "nn.LocalResponseNorm";
inline constexpr char kCrossMapLRN2dType[] = "nn.CrossMapLRN2d";
using LocalResponseNormImpl = ResponseNormImpl<kLocalResponseNormType>;
using CrossMapLRN2dImpl = ResponseNormImpl<kCrossMapLRN2dType>;
NNP_MODULE(LocalResponseNorm);
NNP_MODULE(CrossMapLRN2d);

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
