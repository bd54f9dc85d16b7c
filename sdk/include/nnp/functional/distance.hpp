// nnp/functional/distance.hpp - cosine_similarity and pairwise_distance
// (PyTorch's torch.nn.functional); the layers call these.
#pragma once

#include <limits>
#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>

namespace nnp::nn::functional {

struct CosineSimilarityFuncOptions {
  NNP_ARG(int64_t, dim) = 1;
  NNP_ARG(double, eps) = 1e-8;
};

// sum(x1 * x2) / sqrt(max(|x1|^2 * |x2|^2, eps^2)) along dim, the operands
// broadcast (PyTorch 1.13's formula).
inline Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& o = {}) {
  const int32_t dim = static_cast<int32_t>(o.dim());
  const Tensor w12 = (x1 * x2).sum(dim), w1 = (x1 * x1).sum(dim), w2 = (x2 * x2).sum(dim);
  const Tensor product = w1 * w2;
  return w12 / product.maximum(product.scalar_like(o.eps() * o.eps())).sqrt();
}

struct PairwiseDistanceFuncOptions {
  NNP_ARG(double, p) = 2.0;
  NNP_ARG(double, eps) = 1e-6;
  NNP_ARG(bool, keepdim) = false;
};

// ||x1 - x2 + eps||_p along the last dimension.
inline Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& o = {}) {
  const Tensor d = (x1 - x2 + o.eps()).abs();
  const int32_t last = std::max(d.ndim(), 1) - 1;
  if (o.p() == std::numeric_limits<double>::infinity()) return d.amax({last}, o.keepdim());
  if (o.p() == 0) return d.ne(d.scalar_like(0)).to(d.dtype()).sum({last}, o.keepdim());
  if (o.p() < 0) throw Error(NNP_INVALID_ARGUMENT, "pairwise_distance: p must be >= 0, got " + format_float(o.p()));
  if (o.p() == 1) return d.sum({last}, o.keepdim());
  return d.pow(o.p()).sum({last}, o.keepdim()).pow(1.0 / o.p());
}

}  // namespace nnp::nn::functional
