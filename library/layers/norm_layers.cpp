// nn.BatchNorm1d/2d/3d, nn.InstanceNorm1d/2d/3d, nn.GroupNorm, nn.LayerNorm,
// nn.LocalResponseNorm and nn.CrossMapLRN2d, composed of
// differentiable ops.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// What batch and instance normalization keep, registered as PyTorch's
// _NormBase does: weight and bias (affine), running_mean, running_var and
// num_batches_tracked (track_running_stats), each None when off.
struct RunningNorm : nnp::nn::Module {
  int64_t features;
  double eps;
  bool affine, track;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

  RunningNorm(const char* name, const Attrs& a)
      : Module(name),
        features(a.integer("num_features")),
        eps(a.real("eps")),
        affine(a.boolean("affine")),
        track(a.boolean("track_running_stats")) {
    if (affine) {
      weight = register_parameter("weight", nnp::ones({features}));
      bias = register_parameter("bias", nnp::zeros({features}));
    } else {
      register_parameter("weight", Tensor());
      register_parameter("bias", Tensor());
    }
    if (track) {
      running_mean = register_buffer("running_mean", nnp::zeros({features}));
      running_var = register_buffer("running_var", nnp::ones({features}));
      num_batches_tracked = register_buffer("num_batches_tracked", nnp::zeros({}, nnp::Dtype::i64));
    } else {
      register_buffer("running_mean", Tensor());
      register_buffer("running_var", Tensor());
      register_buffer("num_batches_tracked", Tensor());
    }
  }
  void count_batch() {
    NoGradGuard no_grad;
    num_batches_tracked.copy_(num_batches_tracked + num_batches_tracked.scalar_like(1));
  }
  std::string repr_with(const std::string& momentum_text) const {
    return std::to_string(features) + ", eps=" + nnp::nn::format_float(eps) + ", momentum=" + momentum_text +
           ", affine=" + nnp::nn::format_bool(affine) + ", track_running_stats=" + nnp::nn::format_bool(track);
  }
};

// Batch normalization over every dimension but the channels (dim 1).
struct BatchNorm : RunningNorm {
  bool has_momentum;
  double momentum;
  int32_t min_ndim, max_ndim;

  BatchNorm(const char* name, const Attrs& a, int32_t lo, int32_t hi)
      : RunningNorm(name, a),
        has_momentum(a.has("momentum")),
        momentum(has_momentum ? a.real("momentum") : 0.0),
        min_ndim(lo),
        max_ndim(hi) {}

  Tensor forward(const Tensor& x) override {
    const int32_t ndim = x.ndim();
    if (ndim < min_ndim || ndim > max_ndim || x.size(1) != features)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected input of " + std::to_string(min_ndim) +
                                          (min_ndim == max_ndim ? "" : " or " + std::to_string(max_ndim)) +
                                          " dimensions with " + std::to_string(features) +
                                          " channels in dimension 1, got " + shape_text(x.shape()));
    // PyTorch's exponential_average_factor: a cumulative average without momentum.
    const bool tracking = is_training() && track;
    const double factor =
        !tracking || has_momentum ? momentum : 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>() + 1);
    Tensor y = F::batch_norm(
        x, running_mean, running_var,
        F::BatchNormFuncOptions().weight(weight).bias(bias).training(is_training()).momentum(factor).eps(eps));
    if (tracking) count_batch();  // once the batch is through, so a failure changes nothing
    return y;
  }
  std::string extra_repr() const override { return repr_with(has_momentum ? nnp::nn::format_float(momentum) : "None"); }
};

struct BatchNorm1d : BatchNorm {
  explicit BatchNorm1d(const Attrs& a) : BatchNorm("BatchNorm1d", a, 2, 3) {}
};
struct BatchNorm2d : BatchNorm {
  explicit BatchNorm2d(const Attrs& a) : BatchNorm("BatchNorm2d", a, 4, 4) {}
};

struct BatchNorm3d : BatchNorm {
  explicit BatchNorm3d(const Attrs& a) : BatchNorm("BatchNorm3d", a, 5, 5) {}
};

// Instance normalization: per sample and channel over the D trailing
// dimensions; [C, *] (unbatched) is one sample.
struct InstanceNorm : RunningNorm {
  int32_t spatial;
  double momentum;

  InstanceNorm(const char* name, int32_t d, const Attrs& a)
      : RunningNorm(name, a), spatial(d), momentum(a.real("momentum")) {}
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != spatial + 1 && x.ndim() != spatial + 2)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected " + std::to_string(spatial + 1) + "-D (unbatched) or " +
                                          std::to_string(spatial + 2) + "-D (batched) input, got " +
                                          shape_text(x.shape()));
    const bool batched = x.ndim() == spatial + 2;
    const Tensor input = batched ? x : x.unsqueeze(0);
    if (input.size(1) != features)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": expected " + std::to_string(features) + " channels, got input " +
                                          shape_text(x.shape()));
    const bool use_input_stats = is_training() || !track;
    Tensor y = F::instance_norm(input, F::InstanceNormFuncOptions()
                                           .running_mean(running_mean)
                                           .running_var(running_var)
                                           .weight(weight)
                                           .bias(bias)
                                           .use_input_stats(use_input_stats)
                                           .momentum(momentum)
                                           .eps(eps));
    // PyTorch's instance norm leaves num_batches_tracked alone (always 0).
    return batched ? y : y.squeeze(0);
  }
  std::string extra_repr() const override { return repr_with(nnp::nn::format_float(momentum)); }
};
struct InstanceNorm1d : InstanceNorm {
  explicit InstanceNorm1d(const Attrs& a) : InstanceNorm("InstanceNorm1d", 1, a) {}
};
struct InstanceNorm2d : InstanceNorm {
  explicit InstanceNorm2d(const Attrs& a) : InstanceNorm("InstanceNorm2d", 2, a) {}
};
struct InstanceNorm3d : InstanceNorm {
  explicit InstanceNorm3d(const Attrs& a) : InstanceNorm("InstanceNorm3d", 3, a) {}
};

struct GroupNorm : nnp::nn::Module {
  int64_t groups, channels;
  double eps;
  bool affine;
  Tensor weight, bias;
  explicit GroupNorm(const Attrs& a)
      : Module("GroupNorm"),
        groups(a.integer("num_groups")),
        channels(a.integer("num_channels")),
        eps(a.real("eps")),
        affine(a.boolean("affine")) {
    if (groups <= 0 || channels % groups != 0)
      throw Error(NNP_INVALID_ARGUMENT, "GroupNorm: num_channels must be divisible by num_groups (" +
                                            std::to_string(channels) + " and " + std::to_string(groups) + ")");
    if (affine) {
      weight = register_parameter("weight", nnp::ones({channels}));
      bias = register_parameter("bias", nnp::zeros({channels}));
    } else {
      register_parameter("weight", Tensor());
      register_parameter("bias", Tensor());
    }
  }
  Tensor forward(const Tensor& x) override {
    if (x.ndim() < 2 || x.size(1) != channels)
      throw Error(NNP_SHAPE_MISMATCH,
                  "GroupNorm: expected [N, " + std::to_string(channels) + ", *], got " + shape_text(x.shape()));
    return F::group_norm(x, F::GroupNormFuncOptions(groups).weight(weight).bias(bias).eps(eps));
  }
  std::string extra_repr() const override {
    return std::to_string(groups) + ", " + std::to_string(channels) + ", eps=" + nnp::nn::format_float(eps) +
           ", affine=" + nnp::nn::format_bool(affine);
  }
};

struct LocalResponseNorm : nnp::nn::Module {
  F::LocalResponseNormFuncOptions options;
  explicit LocalResponseNorm(const Attrs& a, const char* name = "LocalResponseNorm")
      : Module(name), options(a.integer("size")) {
    options.alpha(a.real("alpha")).beta(a.real("beta")).k(a.real("k"));
    if (options.size() <= 0) throw Error(NNP_INVALID_ARGUMENT, type_name() + ": size must be > 0");
  }
  Tensor forward(const Tensor& x) override { return F::local_response_norm(x, options); }
  std::string extra_repr() const override {
    return std::to_string(options.size()) + ", alpha=" + nnp::nn::format_float(options.alpha()) +
           ", beta=" + nnp::nn::format_float(options.beta()) + ", k=" + nnp::nn::format_float(options.k());
  }
};

// Torch7's cross-channel LRN on [N, C, H, W], kept in PyTorch for old
// models: its running window sum as PyTorch computes it (which keeps the
// first channel in the window of channel pre_pad), so results match.
struct CrossMapLRN2d : nnp::nn::Module {
  int64_t size;
  double alpha, beta, k;
  explicit CrossMapLRN2d(const Attrs& a)
      : Module("CrossMapLRN2d"), size(a.integer("size")), alpha(a.real("alpha")), beta(a.real("beta")), k(a.real("k")) {
    if (size <= 0) throw Error(NNP_INVALID_ARGUMENT, "CrossMapLRN2d: size must be > 0");
  }
  Tensor forward(const Tensor& x) override {
    if (x.ndim() != 4)
      throw Error(NNP_SHAPE_MISMATCH, "CrossMapLRN2d: expected [N, C, H, W], got " + shape_text(x.shape()));
    const int64_t channels = x.size(1), pre_pad = (size - 1) / 2 + 1;
    const Tensor squares = x * x;
    std::vector<Tensor> scale;
    Tensor first = squares.narrow(1, 0, 1) * 0.0;
    for (int64_t c = 0; c < std::min(pre_pad, channels); ++c) first = first + squares.narrow(1, c, 1);
    scale.push_back(first);
    for (int64_t c = 1; c < channels; ++c) {
      Tensor current = scale.back();
      if (c < channels - pre_pad + 1) current = current + squares.narrow(1, c + pre_pad - 1, 1);
      if (c > pre_pad) current = current - squares.narrow(1, c - pre_pad, 1);
      scale.push_back(current);
    }
    return x * (nnp::cat(scale, 1) * (alpha / static_cast<double>(size)) + k).pow(-beta);
  }
  std::string extra_repr() const override {
    return std::to_string(size) + ", alpha=" + nnp::nn::format_float(alpha) + ", beta=" + nnp::nn::format_float(beta) +
           ", k=" +
           (k == std::floor(k) && std::fabs(k) < 1e15
                ? std::to_string(static_cast<int64_t>(k))  // PyTorch's int default
                : nnp::nn::format_float(k));
  }
};

struct LayerNorm : nnp::nn::Module {
  nnp::Shape normalized;
  double eps;
  bool affine;
  Tensor weight, bias;
  explicit LayerNorm(const Attrs& a)
      : Module("LayerNorm"),
        normalized(a.integers("normalized_shape")),
        eps(a.real("eps")),
        affine(a.boolean("elementwise_affine")) {
    if (normalized.empty()) throw Error(NNP_INVALID_ARGUMENT, "LayerNorm: normalized_shape is empty");
    if (affine) {
      weight = register_parameter("weight", nnp::ones(normalized));
      if (a.boolean("bias"))
        bias = register_parameter("bias", nnp::zeros(normalized));
      else
        register_parameter("bias", Tensor());
    }
  }
  Tensor forward(const Tensor& x) override {
    return F::layer_norm(x, F::LayerNormFuncOptions(normalized).weight(weight).bias(bias).eps(eps));
  }
  std::string extra_repr() const override {
    std::string dims = "(";
    for (size_t i = 0; i < normalized.size(); ++i)
      dims += std::to_string(normalized[i]) + (normalized.size() == 1 ? "," : (i + 1 < normalized.size() ? ", " : ""));
    return dims + "), eps=" + nnp::nn::format_float(eps) + ", elementwise_affine=" + nnp::nn::format_bool(affine);
  }
};

void register_norm_layers(nnp_plugin_host* host) {
  const std::vector<AttrDecl> batch_norm = {
      {"num_features", NNP_ATTR_INT, true, nullptr, "number of channels C"},
      {"eps", NNP_ATTR_FLOAT, false, "1e-05", "added to the variance"},
      {"momentum", NNP_ATTR_FLOAT, false, "0.1", "running statistics update factor (null: a cumulative average)"},
      {"affine", NNP_ATTR_BOOL, false, "true", "learn a per-channel scale and shift"},
      {"track_running_stats", NNP_ATTR_BOOL, false, "true", "keep running mean and variance for eval"}};
  add_builtin<BatchNorm1d>(host, "nn.BatchNorm1d", "batch normalization of [N, C] or [N, C, L]", batch_norm);
  add_builtin<BatchNorm2d>(host, "nn.BatchNorm2d", "batch normalization of [N, C, H, W]", batch_norm);
  add_builtin<BatchNorm3d>(host, "nn.BatchNorm3d", "batch normalization of [N, C, D, H, W]", batch_norm);
  const std::vector<AttrDecl> instance_norm = {
      {"num_features", NNP_ATTR_INT, true, nullptr, "number of channels C"},
      {"eps", NNP_ATTR_FLOAT, false, "1e-05", "added to the variance"},
      {"momentum", NNP_ATTR_FLOAT, false, "0.1", "running statistics update factor"},
      {"affine", NNP_ATTR_BOOL, false, "false", "learn a per-channel scale and shift"},
      {"track_running_stats", NNP_ATTR_BOOL, false, "false", "keep running mean and variance for eval"}};
  add_builtin<InstanceNorm1d>(host, "nn.InstanceNorm1d", "instance normalization of [N, C, L]", instance_norm);
  add_builtin<InstanceNorm2d>(host, "nn.InstanceNorm2d", "instance normalization of [N, C, H, W]", instance_norm);
  add_builtin<InstanceNorm3d>(host, "nn.InstanceNorm3d", "instance normalization of [N, C, D, H, W]",
                              instance_norm);
  add_builtin<GroupNorm>(host, "nn.GroupNorm", "normalization over groups of channels",
                         {{"num_groups", NNP_ATTR_INT, true, nullptr, "groups the channels fall in"},
                          {"num_channels", NNP_ATTR_INT, true, nullptr, "number of channels C"},
                          {"eps", NNP_ATTR_FLOAT, false, "1e-05", "added to the variance"},
                          {"affine", NNP_ATTR_BOOL, false, "true", "learn a per-channel scale and shift"}});
  const std::vector<AttrDecl> lrn = {{"size", NNP_ATTR_INT, true, nullptr, "neighbouring channels in the window"},
                                     {"alpha", NNP_ATTR_FLOAT, false, "0.0001", "multiplicative factor"},
                                     {"beta", NNP_ATTR_FLOAT, false, "0.75", "exponent"},
                                     {"k", NNP_ATTR_FLOAT, false, "1.0", "additive factor"}};
  add_builtin<LocalResponseNorm>(host, "nn.LocalResponseNorm", "normalization across neighbouring channels", lrn);
  add_builtin<CrossMapLRN2d>(host, "nn.CrossMapLRN2d", "Torch7's cross-channel normalization of [N, C, H, W]", lrn);
  add_builtin<LayerNorm>(host, "nn.LayerNorm", "normalization over the trailing normalized_shape dimensions",
                         {{"normalized_shape", NNP_ATTR_INTS, true, nullptr, "trailing dimensions to normalize"},
                          {"eps", NNP_ATTR_FLOAT, false, "1e-05", "added to the variance"},
                          {"elementwise_affine", NNP_ATTR_BOOL, false, "true", "learn weight and bias"},
                          {"bias", NNP_ATTR_BOOL, false, "true", "learn the bias (with elementwise_affine)"}});
}

}  // namespace nnp::library::layers
