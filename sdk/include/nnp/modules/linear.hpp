// nnp/modules/linear.hpp - typed Linear, Identity, Flatten, Unflatten,
// Dropout, Embedding and EmbeddingBag (libtorch's holders over the registry's nn.* layers).
#pragma once

#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <optional>
#include <vector>

namespace nnp::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  NNP_ARG(int64_t, in_features);
  NNP_ARG(int64_t, out_features);
  NNP_ARG(bool, bias) = true;
};
struct LinearImpl : Layer {
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& o)
      : Layer("nn.Linear",
              Attrs().set("in_features", o.in_features()).set("out_features", o.out_features()).set("bias", o.bias())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LinearOptions options;
  Tensor weight, bias;  // bias undefined with bias(false)
};
NNP_MODULE(Linear);

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  NNP_ARG(int64_t, in1_features);
  NNP_ARG(int64_t, in2_features);
  NNP_ARG(int64_t, out_features);
  NNP_ARG(bool, bias) = true;
};
struct BilinearImpl : Layer {
  BilinearImpl(int64_t in1, int64_t in2, int64_t out) : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  explicit BilinearImpl(const BilinearOptions& o)
      : Layer("nn.Bilinear", Attrs()
                                 .set("in1_features", o.in1_features())
                                 .set("in2_features", o.in2_features())
                                 .set("out_features", o.out_features())
                                 .set("bias", o.bias())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return call({x1, x2}); }
  BilinearOptions options;
  Tensor weight, bias;
};
NNP_MODULE(Bilinear);

// MultiheadAttention's out_proj: a Linear under the name PyTorch gives it.
struct NonDynamicallyQuantizableLinearImpl : Layer {
  NonDynamicallyQuantizableLinearImpl(int64_t in_features, int64_t out_features)
      : NonDynamicallyQuantizableLinearImpl(LinearOptions(in_features, out_features)) {}
  explicit NonDynamicallyQuantizableLinearImpl(const LinearOptions& o)
      : Layer("nn.NonDynamicallyQuantizableLinear",
              Attrs().set("in_features", o.in_features()).set("out_features", o.out_features()).set("bias", o.bias())),
        options(o),
        weight(tensor_named("weight")),
        bias(tensor_named("bias")) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  LinearOptions options;
  Tensor weight, bias;
};
NNP_MODULE(NonDynamicallyQuantizableLinear);

struct IdentityImpl : Layer {
  IdentityImpl() : Layer("nn.Identity", Attrs()) {}
  Tensor forward(const Tensor& x) { return call({x}); }
};
NNP_MODULE(Identity);

struct FlattenOptions {
  NNP_ARG(int64_t, start_dim) = 1;
  NNP_ARG(int64_t, end_dim) = -1;
};
struct FlattenImpl : Layer {
  explicit FlattenImpl(const FlattenOptions& o = {})
      : Layer("nn.Flatten", Attrs().set("start_dim", o.start_dim()).set("end_dim", o.end_dim())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  FlattenOptions options;
};
NNP_MODULE(Flatten);

struct UnflattenOptions {
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  NNP_ARG(int64_t, dim);
  NNP_ARG(std::vector<int64_t>, sizes);
};
struct UnflattenImpl : Layer {
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
  explicit UnflattenImpl(const UnflattenOptions& o)
      : Layer("nn.Unflatten", Attrs().set("dim", o.dim()).set("unflattened_size", o.sizes())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  UnflattenOptions options;
};
NNP_MODULE(Unflatten);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, p);
};
struct DropoutImpl : Layer {
  explicit DropoutImpl(const DropoutOptions& o = {}) : Layer("nn.Dropout", Attrs().set("p", o.p())), options(o) {}
  Tensor forward(const Tensor& x) { return call({x}); }
  DropoutOptions options;
};
NNP_MODULE(Dropout);

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  NNP_ARG(int64_t, num_embeddings);
  NNP_ARG(int64_t, embedding_dim);
  NNP_ARG(std::optional<int64_t>, padding_idx);
  NNP_ARG(std::optional<double>, max_norm);
  NNP_ARG(double, norm_type) = 2.0;
  NNP_ARG(bool, scale_grad_by_freq) = false;
  NNP_ARG(bool, sparse) = false;
};

namespace detail {
template <typename TableOptions>
Attrs embedding_attrs(const TableOptions& o) {
  Attrs a;
  a.set("num_embeddings", o.num_embeddings()).set("embedding_dim", o.embedding_dim());
  if (o.padding_idx()) a.set("padding_idx", *o.padding_idx());
  if (o.max_norm()) a.set("max_norm", *o.max_norm());
  a.set("norm_type", o.norm_type()).set("scale_grad_by_freq", o.scale_grad_by_freq()).set("sparse", o.sparse());
  return a;
}
}  // namespace detail

struct EmbeddingImpl : Layer {
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& o)
      : Layer("nn.Embedding", detail::embedding_attrs(o)), options(o), weight(tensor_named("weight")) {}
  Tensor forward(const Tensor& indices) { return call({indices}); }
  EmbeddingOptions options;
  Tensor weight;
};
NNP_MODULE(Embedding);

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  NNP_ARG(int64_t, num_embeddings);
  NNP_ARG(int64_t, embedding_dim);
  NNP_ARG(std::optional<double>, max_norm);
  NNP_ARG(double, norm_type) = 2.0;
  NNP_ARG(bool, scale_grad_by_freq) = false;
  NNP_ARG(std::string, mode) = kMean;  // kSum, kMean or "max"
  NNP_ARG(bool, sparse) = false;
  NNP_ARG(bool, include_last_offset) = false;
  NNP_ARG(std::optional<int64_t>, padding_idx);
};
struct EmbeddingBagImpl : Layer {
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& o)
      : Layer(
            "nn.EmbeddingBag",
            std::move(
                detail::embedding_attrs(o).set("mode", o.mode()).set("include_last_offset", o.include_last_offset()))),
        options(o),
        weight(tensor_named("weight")) {}
  // Bags are the rows of a 2-D input, or runs of a 1-D one from offsets.
  Tensor forward(const Tensor& input, const Tensor& offsets = {}, const Tensor& per_sample_weights = {}) {
    return call_values({input, offsets, per_sample_weights});
  }
  EmbeddingBagOptions options;
  Tensor weight;
};
NNP_MODULE(EmbeddingBag);

}  // namespace nnp::nn
