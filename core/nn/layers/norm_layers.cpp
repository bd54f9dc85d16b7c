// nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm and nn.Embedding, composed of
// differentiable ops.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

// Batch normalization over every dimension but the channels (dim 1).
struct BatchNorm : nnp::nn::Module {
  int64_t features;
  double eps;
  bool has_momentum;
  double momentum;
  bool affine, track;
  int32_t min_ndim, max_ndim;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

  BatchNorm(const char* name, const Attrs& a, int32_t lo, int32_t hi)
      : Module(name),
        features(a.integer("num_features")),
        eps(a.real("eps")),
        has_momentum(a.has("momentum")),
        momentum(has_momentum ? a.real("momentum") : 0.0),
        affine(a.boolean("affine")),
        track(a.boolean("track_running_stats")),
        min_ndim(lo),
        max_ndim(hi) {
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
    if (tracking) {  // counted once the batch is through, so a failure changes nothing
      NoGradGuard no_grad;
      num_batches_tracked.copy_(num_batches_tracked + num_batches_tracked.scalar_like(1));
    }
    return y;
  }
  std::string extra_repr() const override {
    return std::to_string(features) + ", eps=" + nnp::nn::format_float(eps) +
           ", momentum=" + (has_momentum ? nnp::nn::format_float(momentum) : "None") +
           ", affine=" + nnp::nn::format_bool(affine) + ", track_running_stats=" + nnp::nn::format_bool(track);
  }
};

struct BatchNorm1d : BatchNorm {
  explicit BatchNorm1d(const Attrs& a) : BatchNorm("BatchNorm1d", a, 2, 3) {}
};
struct BatchNorm2d : BatchNorm {
  explicit BatchNorm2d(const Attrs& a) : BatchNorm("BatchNorm2d", a, 4, 4) {}
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

struct Embedding : nnp::nn::Module {
  int64_t count, dim;
  bool has_padding;
  int64_t padding_idx;
  Tensor weight;
  explicit Embedding(const Attrs& a)
      : Module("Embedding"),
        count(a.integer("num_embeddings")),
        dim(a.integer("embedding_dim")),
        has_padding(a.has("padding_idx")),
        padding_idx(has_padding ? a.integer("padding_idx") : 0) {
    if (has_padding) {
      if (padding_idx < -count || padding_idx >= count)
        throw Error(NNP_INVALID_ARGUMENT, "Embedding: padding_idx must be within num_embeddings");
      if (padding_idx < 0) padding_idx += count;
    }
    weight = register_parameter("weight", nnp::empty({count, dim}));
    nnp::nn::init::normal_(weight);
    if (has_padding) {
      NoGradGuard no_grad;
      weight.slice(0, padding_idx, padding_idx + 1).copy_(weight.scalar_like(0));
    }
  }
  Tensor forward(const Tensor& indices) override {
    F::EmbeddingFuncOptions options;
    if (has_padding) options.padding_idx(padding_idx);
    return F::embedding(indices, weight, options);
  }
  std::string extra_repr() const override {
    return std::to_string(count) + ", " + std::to_string(dim) +
           (has_padding ? ", padding_idx=" + std::to_string(padding_idx) : "");
  }
};

void register_norm_layers(LayerRegistry& registry) {
  const std::vector<AttrDecl> batch_norm = {
      {"num_features", NNP_ATTR_INT, true, nullptr, "number of channels C"},
      {"eps", NNP_ATTR_FLOAT, false, "1e-05", "added to the variance"},
      {"momentum", NNP_ATTR_FLOAT, false, "0.1", "running statistics update factor (absent: cumulative average)"},
      {"affine", NNP_ATTR_BOOL, false, "true", "learn a per-channel scale and shift"},
      {"track_running_stats", NNP_ATTR_BOOL, false, "true", "keep running mean and variance for eval"}};
  add_builtin<BatchNorm1d>(registry, "nn.BatchNorm1d", "batch normalization of [N, C] or [N, C, L]", batch_norm);
  add_builtin<BatchNorm2d>(registry, "nn.BatchNorm2d", "batch normalization of [N, C, H, W]", batch_norm);
  add_builtin<LayerNorm>(registry, "nn.LayerNorm", "normalization over the trailing normalized_shape dimensions",
                         {{"normalized_shape", NNP_ATTR_INTS, true, nullptr, "trailing dimensions to normalize"},
                          {"eps", NNP_ATTR_FLOAT, false, "1e-05", "added to the variance"},
                          {"elementwise_affine", NNP_ATTR_BOOL, false, "true", "learn weight and bias"},
                          {"bias", NNP_ATTR_BOOL, false, "true", "learn the bias (with elementwise_affine)"}});
  add_builtin<Embedding>(registry, "nn.Embedding", "a lookup table of num_embeddings vectors",
                         {{"num_embeddings", NNP_ATTR_INT, true, nullptr, "size of the table"},
                          {"embedding_dim", NNP_ATTR_INT, true, nullptr, "size of each vector"},
                          {"padding_idx", NNP_ATTR_INT, false, nullptr, "an index whose vector stays zero"}});
}

}  // namespace nnp::core::nn::layers
