// nnp/functional/margin_loss.hpp - the embedding and margin losses beyond
// nnp/functional/loss.hpp, with PyTorch's options: cosine_embedding_loss,
// multi_margin_loss, multilabel_margin_loss, triplet_margin_loss,
// triplet_margin_with_distance_loss and gaussian_nll_loss. Composed of
// differentiable ops; the loss layers call these.
#pragma once

#include <cmath>
#include <functional>
#include <nnp/functional/distance.hpp>
#include <nnp/functional/loss.hpp>

namespace nnp::nn::functional {

namespace detail {
// Class indices: [N] for input [N, C], a scalar for input [C].
inline Tensor class_rows(const char* who, const Tensor& input, const Tensor& target) {
  if (target.dtype() != Dtype::i64)
    throw Error(NNP_DTYPE_MISMATCH,
                std::string(who) + ": target must be i64 class indices, got " + dtype_name(target.dtype()));
  if (input.ndim() == 1 ? target.numel() != 1
                        : (input.ndim() != 2 || target.ndim() != 1 || target.size(0) != input.size(0)))
    throw Error(NNP_SHAPE_MISMATCH, std::string(who) +
                                        ": expected input [N, C] and target [N], or [C] and one index; got " +
                                        shape_text(input.shape()) + " and " + shape_text(target.shape()));
  const int64_t classes = input.size(-1);
  if (target.numel() > 0 && (target.amin().item<int64_t>() < 0 || target.amax().item<int64_t>() >= classes))
    throw Error(NNP_INVALID_ARGUMENT,
                std::string(who) + ": target out of range (classes 0 to " + std::to_string(classes - 1) + ")");
  return target.reshape({-1, 1});
}
// Boolean and / not, broadcasting.
inline Tensor both(const Tensor& a, const Tensor& b) { return where(a, b, b.scalar_like(0)); }
inline Tensor negated(const Tensor& a) { return a.eq(a.scalar_like(0)); }
}  // namespace detail

struct CosineEmbeddingLossFuncOptions {
  NNP_LOSS_REDUCTION(CosineEmbeddingLossFuncOptions);
  NNP_ARG(double, margin) = 0.0;
};
// 1 - cos(x1, x2) where target is 1; max(0, cos - margin) where it is -1.
inline Tensor cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target,
                                    const CosineEmbeddingLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("cosine_embedding_loss", {&input1, &input2, &target});
  detail::check_reduction("cosine_embedding_loss", options.reduction());
  if (input1.shape() != input2.shape() || input1.ndim() < 1 || input1.ndim() > 2)
    throw Error(NNP_SHAPE_MISMATCH, "cosine_embedding_loss: expected two [N, D] or [D] inputs of one shape, got " +
                                        detail::shape_text(input1.shape()) + " and " +
                                        detail::shape_text(input2.shape()));
  const int32_t dim = input1.ndim() == 1 ? 0 : 1;
  constexpr double kEpsilon = 1e-12;  // ATen's, added to each squared norm
  const Tensor product = (input1 * input2).sum({dim});
  const Tensor norms = (((input1 * input1).sum({dim}) + kEpsilon) * ((input2 * input2).sum({dim}) + kEpsilon)).sqrt();
  const Tensor cos = product / norms;
  const Tensor y = target.to(cos.dtype());
  const Tensor zero = cos.scalar_like(0);
  const Tensor loss = where(y.eq(y.scalar_like(1)), 1.0 - cos, zero) +
                      where(y.eq(y.scalar_like(-1)), (cos - options.margin()).clamp_min(0.0), zero);
  return detail::reduce_loss(loss, options.reduction());
}

struct MultiMarginLossFuncOptions {
  NNP_LOSS_REDUCTION(MultiMarginLossFuncOptions);
  NNP_ARG(int64_t, p) = 1;
  NNP_ARG(double, margin) = 1.0;
  NNP_ARG(Tensor, weight);  // [C] or undefined
};
// Per sample: sum over classes i != y of max(0, margin - x[y] + x[i])^p,
// times weight[y], over C.
inline Tensor multi_margin_loss(Tensor input, Tensor target, const MultiMarginLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("multi_margin_loss", {&input, &target});
  detail::check_reduction("multi_margin_loss", options.reduction());
  if (options.p() != 1 && options.p() != 2)
    throw Error(NNP_INVALID_ARGUMENT,
                "multi_margin_loss: only p == 1 and p == 2 supported, got " + std::to_string(options.p()));
  const Tensor rows = input.ndim() == 1 ? input.reshape({1, -1}) : input;
  const Tensor index = detail::class_rows("multi_margin_loss", input, target);
  const int64_t classes = rows.size(1);
  Tensor z = (rows - rows.gather(1, index) + options.margin()).clamp_min(0.0);
  if (options.p() == 2) z = z * z;
  if (options.weight().defined()) z = z * options.weight().index_select(0, index.reshape({-1})).reshape({-1, 1});
  const Tensor others =
      arange(0, static_cast<double>(classes), 1, Dtype::i64, input.device()).reshape({1, -1}).ne(index);
  Tensor loss = where(others, z, z.scalar_like(0)).sum({1}) / static_cast<double>(classes);
  if (input.ndim() == 1) loss = loss.reshape({});
  return detail::reduce_loss(loss, options.reduction());
}

using MultilabelMarginLossFuncOptions = MSELossFuncOptions;
// Per sample: sum over its target classes j and the other classes i of
// max(0, 1 - (x[j] - x[i])), over C. target [N, C] (or [C]) lists the
// target classes first and ends them with -1.
inline Tensor multilabel_margin_loss(Tensor input, Tensor target, const MultilabelMarginLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("multilabel_margin_loss", {&input, &target});
  detail::check_reduction("multilabel_margin_loss", options.reduction());
  if (target.dtype() != Dtype::i64 || target.shape() != input.shape() || input.ndim() < 1 || input.ndim() > 2)
    throw Error(NNP_SHAPE_MISMATCH,
                "multilabel_margin_loss: expected input [N, C] or [C] and an i64 target of its "
                "shape, got " +
                    detail::shape_text(input.shape()) + " and " + detail::shape_text(target.shape()));
  const Tensor x = input.ndim() == 1 ? input.reshape({1, -1}) : input;
  const Tensor t = target.reshape(x.shape());
  const int64_t classes = x.size(1);
  if (t.numel() > 0 && (t.amin().item<int64_t>() < -1 || t.amax().item<int64_t>() >= classes))
    throw Error(NNP_INVALID_ARGUMENT,
                "multilabel_margin_loss: target values must be -1 or classes 0 to " + std::to_string(classes - 1));
  // The listed targets: the entries before the first -1.
  const Tensor listed = t.eq(t.scalar_like(-1)).to(Dtype::i64).cumsum(1).eq(t.scalar_like(0));
  const Tensor safe = where(listed, t, t.scalar_like(0));
  const Tensor classes_row = arange(0, static_cast<double>(classes), 1, Dtype::i64, x.device()).reshape({1, 1, -1});
  const Tensor is_target = detail::both(safe.unsqueeze(2).eq(classes_row), listed.unsqueeze(2))
                               .to(Dtype::i64)
                               .amax({1})
                               .gt(t.scalar_like(0));
  const Tensor x_target = x.gather(1, safe);  // [N, C]: x at each listed target
  const Tensor hinge = (1.0 - (x_target.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0.0);  // [N, j, i]
  const Tensor counted = detail::both(listed.unsqueeze(2), detail::negated(is_target).unsqueeze(1));
  Tensor loss = where(counted, hinge, hinge.scalar_like(0)).sum({1, 2}) / static_cast<double>(classes);
  if (input.ndim() == 1) loss = loss.reshape({});
  return detail::reduce_loss(loss, options.reduction());
}

struct TripletMarginLossFuncOptions {
  NNP_LOSS_REDUCTION(TripletMarginLossFuncOptions);
  NNP_ARG(double, margin) = 1.0;
  NNP_ARG(double, p) = 2.0;
  NNP_ARG(double, eps) = 1e-6;
  NNP_ARG(bool, swap) = false;
};
// max(0, d(a, p) - d(a, n) + margin) with d the p-norm pairwise distance;
// swap uses min(d(a, n), d(p, n)).
inline Tensor triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative,
                                  const TripletMarginLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("triplet_margin_loss", {&anchor, &positive, &negative});
  detail::check_reduction("triplet_margin_loss", options.reduction());
  const auto distance = PairwiseDistanceFuncOptions().p(options.p()).eps(options.eps());
  const Tensor d_ap = pairwise_distance(anchor, positive, distance);
  Tensor d_an = pairwise_distance(anchor, negative, distance);
  if (options.swap()) d_an = d_an.minimum(pairwise_distance(positive, negative, distance));
  return detail::reduce_loss((d_ap - d_an + options.margin()).clamp_min(0.0), options.reduction());
}

struct TripletMarginWithDistanceLossFuncOptions {
  using DistanceFunction = std::function<Tensor(const Tensor&, const Tensor&)>;
  NNP_LOSS_REDUCTION(TripletMarginWithDistanceLossFuncOptions);
  NNP_ARG(DistanceFunction, distance_function);  // empty: pairwise_distance
  NNP_ARG(double, margin) = 1.0;
  NNP_ARG(bool, swap) = false;
};
inline Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                                const TripletMarginWithDistanceLossFuncOptions& options = {}) {
  detail::check_reduction("triplet_margin_with_distance_loss", options.reduction());
  if (!(options.margin() > 0))
    throw Error(NNP_INVALID_ARGUMENT, "triplet_margin_with_distance_loss: margin must be greater than 0, got " +
                                          format_float(options.margin()));
  auto distance = [&](const Tensor& a, const Tensor& b) {
    return options.distance_function() ? options.distance_function()(a, b) : pairwise_distance(a, b);
  };
  const Tensor d_ap = distance(anchor, positive);
  Tensor d_an = distance(anchor, negative);
  if (options.swap()) d_an = d_an.minimum(distance(positive, negative));
  return detail::reduce_loss((d_ap - d_an + options.margin()).clamp_min(0.0), options.reduction());
}

struct GaussianNLLLossFuncOptions {
  NNP_LOSS_REDUCTION(GaussianNLLLossFuncOptions);
  NNP_ARG(bool, full) = false;
  NNP_ARG(double, eps) = 1e-6;
};
// 0.5 * (log(var) + (input - target)^2 / var) [+ 0.5 log(2 pi)], var
// clamped to eps for the value only (its gradient passes as PyTorch's).
inline Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, Tensor var,
                                const GaussianNLLLossFuncOptions& options = {}) {
  detail::check_reduction("gaussian_nll_loss", options.reduction());
  if (var.shape() != input.shape()) {
    Shape lead = input.shape();
    if (!lead.empty()) lead.pop_back();
    Shape var_lead = var.shape();
    if (!var_lead.empty()) var_lead.pop_back();
    if (var.shape() == lead)
      var = var.unsqueeze(-1);
    else if (!(var_lead == lead && var.ndim() == input.ndim() && var.size(-1) == 1))
      throw Error(NNP_SHAPE_MISMATCH, "gaussian_nll_loss: var is of incorrect size " + detail::shape_text(var.shape()) +
                                          " for input " + detail::shape_text(input.shape()));
  }
  if (var.numel() > 0 && var.amin().item<double>() < 0)
    throw Error(NNP_INVALID_ARGUMENT, "gaussian_nll_loss: var has negative entry/entries");
  var = var + (var.clamp_min(options.eps()) - var).detach();
  Tensor loss = (var.log() + (input - target) * (input - target) / var) * 0.5;
  if (options.full()) loss = loss + 0.5 * std::log(2 * M_PI);
  return detail::reduce_loss(loss, options.reduction());
}

}  // namespace nnp::nn::functional
