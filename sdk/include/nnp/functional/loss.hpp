// nnp/functional/loss.hpp - losses as functions with PyTorch's options
// (torch.nn.functional.cross_entropy, ...). The loss layers call these, so a
// layer and its function are one implementation. Each is composed of
// differentiable ops: autograd comes for free.
#pragma once

#include <cmath>
#include <nnp/autocast.hpp>
#include <nnp/detail/format.hpp>
#include <nnp/functional/activation.hpp>
#include <nnp/functional/normalization.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn::functional {

namespace detail {

inline void check_reduction(const std::string& who, const std::string& reduction) {
  if (reduction != kNone && reduction != kMean && reduction != kSum)
    throw Error(NNP_INVALID_ARGUMENT, who + ": reduction must be 'none', 'mean' or 'sum', got '" + reduction + "'");
}
inline Tensor reduce_loss(const Tensor& elementwise, const std::string& reduction) {
  if (reduction == kNone) return elementwise;
  return reduction == kSum ? elementwise.sum() : elementwise.mean();
}
inline void same_shape(const std::string& who, const Tensor& input, const Tensor& target) {
  if (input.shape() != target.shape())
    throw Error(NNP_SHAPE_MISMATCH, who + ": target shape " + shape_text(target.shape()) + " must equal input shape " +
                                        shape_text(input.shape()));
}

// The options every class-index loss shares.
struct ClassLoss {
  Tensor weight;  // [C] or undefined
  int64_t ignore_index = -100;
  std::string reduction = kMean;
  double label_smoothing = 0;
};

// Cross entropy against probabilities: target has input's shape.
inline Tensor loss_of_probabilities(const std::string& who, const Tensor& logp, Tensor target, const ClassLoss& o) {
  same_shape(who, logp, target);
  const int32_t class_dim = logp.ndim() == 1 ? 0 : 1;
  const int64_t classes = logp.size(class_dim);
  if (o.label_smoothing > 0)
    target = target * (1.0 - o.label_smoothing) + o.label_smoothing / static_cast<double>(classes);
  Tensor weighted = logp * target;
  if (o.weight.defined()) {
    Shape view(static_cast<size_t>(logp.ndim()), 1);
    view[static_cast<size_t>(class_dim)] = classes;
    weighted = weighted * o.weight.reshape(view);
  }
  Tensor loss = weighted.sum(class_dim).neg();
  if (o.reduction == kNone) return loss;
  if (o.reduction == kSum) return loss.sum();
  return loss.sum() / static_cast<double>(classes > 0 ? logp.numel() / classes : 0);
}

// Negative log likelihood of log-probabilities [N, C, d...] (or [C]) at
// class indices [N, d...] (or []): ignore_index contributes nothing, class
// weights scale each sample and the mean is over the weights taken.
inline Tensor loss_of_indices(const std::string& who, Tensor logp, Tensor target, const ClassLoss& o) {
  const bool unbatched = logp.ndim() == 1;
  if (unbatched) {
    logp = logp.unsqueeze(0);
    target = target.reshape({1});
  }
  if (logp.ndim() < 2)
    throw Error(NNP_SHAPE_MISMATCH, who + ": input must be [N, C] or [C], got " + shape_text(logp.shape()));
  if (target.dtype() != Dtype::i64 && target.dtype() != Dtype::i32)
    throw Error(NNP_DTYPE_MISMATCH, who + ": target must hold class indices (i64), got " + dtype_name(target.dtype()));
  Shape expected = logp.shape();
  expected.erase(expected.begin() + 1);
  if (target.shape() != expected)
    throw Error(NNP_SHAPE_MISMATCH, who + ": target shape " + shape_text(target.shape()) +
                                        " does not match input shape " + shape_text(logp.shape()) + " (expected " +
                                        shape_text(expected) + ")");
  const int64_t classes = logp.size(1);
  if (o.weight.defined() && (o.weight.ndim() != 1 || o.weight.size(0) != classes))
    throw Error(NNP_SHAPE_MISMATCH, who + ": weight must have one value per class (" + std::to_string(classes) +
                                        "), got " + shape_text(o.weight.shape()));
  if (logp.ndim() > 2) {  // classes last, then one row per position
    std::vector<int32_t> order = {0};
    for (int32_t d = 2; d < logp.ndim(); ++d) order.push_back(d);
    order.push_back(1);
    logp = logp.permute(order).reshape({-1, classes});
  }
  target = target.to(Dtype::i64).reshape({-1});
  Tensor ignored = target.eq(target.scalar_like(static_cast<double>(o.ignore_index)));
  Tensor safe = where(ignored, target.scalar_like(0), target);
  // The count of indices out of range, read on the host: 0 for every valid
  // batch, so a captured step (nnp::compile_step) can check it again at
  // each replay and find the same value.
  if (safe.numel() > 0) {
    const int64_t out_of_range =
        safe.ne(safe.clamp(0.0, static_cast<double>(classes - 1))).to(Dtype::i64).sum().item<int64_t>();
    if (out_of_range > 0)
      throw Error(NNP_INVALID_ARGUMENT, who + ": " + std::to_string(out_of_range) + " target(s) outside [0, " +
                                            std::to_string(classes) + ") that are not ignore_index " +
                                            std::to_string(o.ignore_index));
  }
  Tensor keep = where(ignored, logp.scalar_like(0), logp.scalar_like(1));
  Tensor taken = o.weight.defined() ? o.weight.to(logp.dtype()).index_select(0, safe) * keep : keep;
  Tensor per_sample = logp.gather(1, safe.unsqueeze(1)).squeeze(1).neg() * taken;
  if (o.label_smoothing > 0) {
    Tensor all = o.weight.defined() ? logp * o.weight.to(logp.dtype()).reshape({1, classes}) : logp;
    Tensor smooth = all.sum({1}).neg() * keep * (1.0 / static_cast<double>(classes));
    per_sample = per_sample * (1.0 - o.label_smoothing) + smooth * o.label_smoothing;
  }
  if (o.reduction == kNone) return unbatched ? per_sample.reshape({}) : per_sample.reshape(expected);
  if (o.reduction == kSum) return per_sample.sum();
  return per_sample.sum() / taken.sum();
}

}  // namespace detail

#define NNP_LOSS_REDUCTION(Options)                                                 \
  Options() = default;                                                              \
  Options(const char* reduction) : reduction_(reduction) {}            /* NOLINT */ \
  Options(std::string reduction) : reduction_(std::move(reduction)) {} /* NOLINT */ \
  NNP_ARG(std::string, reduction) = kMean

struct MSELossFuncOptions {
  NNP_LOSS_REDUCTION(MSELossFuncOptions);
};
inline Tensor mse_loss(Tensor input, Tensor target, const MSELossFuncOptions& options = {}) {
  nnp::detail::autocast_args("mse_loss", {&input, &target});
  detail::check_reduction("mse_loss", options.reduction());
  detail::same_shape("MSELoss", input, target);
  Tensor d = input - target;
  return detail::reduce_loss(d * d, options.reduction());
}

struct L1LossFuncOptions {
  NNP_LOSS_REDUCTION(L1LossFuncOptions);
};
inline Tensor l1_loss(Tensor input, Tensor target, const L1LossFuncOptions& options = {}) {
  nnp::detail::autocast_args("l1_loss", {&input, &target});
  detail::check_reduction("l1_loss", options.reduction());
  detail::same_shape("L1Loss", input, target);
  return detail::reduce_loss((input - target).abs(), options.reduction());
}

struct NLLLossFuncOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(int64_t, ignore_index) = -100;
  NNP_ARG(std::string, reduction) = kMean;
};
// Log-probabilities [N, C, d...] or [C] at class indices [N, d...] or [].
inline Tensor nll_loss(Tensor input, Tensor target, const NLLLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("nll_loss", {&input, &target});
  detail::check_reduction("nll_loss", options.reduction());
  return detail::loss_of_indices("NLLLoss", input, target,
                                 {options.weight(), options.ignore_index(), options.reduction(), 0.0});
}

struct CrossEntropyFuncOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(int64_t, ignore_index) = -100;
  NNP_ARG(std::string, reduction) = kMean;
  NNP_ARG(double, label_smoothing) = 0.0;
};
// Logits [N, C, d...] or [C] against class indices [N, d...] or [], or
// against class probabilities (a floating target of the input's shape).
inline Tensor cross_entropy(Tensor input, Tensor target, const CrossEntropyFuncOptions& options = {}) {
  nnp::detail::autocast_args("cross_entropy_loss", {&input, &target});
  detail::check_reduction("cross_entropy", options.reduction());
  if (options.label_smoothing() < 0 || options.label_smoothing() > 1)
    throw Error(NNP_INVALID_ARGUMENT, "CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, got " +
                                          format_float(options.label_smoothing()));
  if (input.ndim() == 0)
    throw Error(NNP_SHAPE_MISMATCH, "CrossEntropyLoss: input must be [N, C] or [C], got a 0-d tensor");
  const detail::ClassLoss o{options.weight(), options.ignore_index(), options.reduction(), options.label_smoothing()};
  Tensor logp = input.log_softmax(input.ndim() == 1 ? 0 : 1);
  if (is_floating(target.dtype()) && target.shape() == input.shape())
    return detail::loss_of_probabilities("CrossEntropyLoss", logp, target, o);
  return detail::loss_of_indices("CrossEntropyLoss", logp, target, o);
}

struct BinaryCrossEntropyFuncOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(std::string, reduction) = kMean;
};
// Probabilities against targets in [0, 1]; each log is clamped to >= -100
// so that 0 and 1 stay finite, as PyTorch's.
inline Tensor binary_cross_entropy(Tensor input, Tensor target, const BinaryCrossEntropyFuncOptions& options = {}) {
  nnp::detail::autocast_args("binary_cross_entropy", {&input, &target});
  detail::check_reduction("binary_cross_entropy", options.reduction());
  detail::same_shape("BCELoss", input, target);
  Tensor floor = input.scalar_like(-100);
  Tensor log_p = input.log().maximum(floor);
  Tensor log_q = (1.0 - input).log().maximum(floor);
  Tensor loss = (target * log_p + (1.0 - target) * log_q).neg();
  if (options.weight().defined()) loss = loss * options.weight();
  return detail::reduce_loss(loss, options.reduction());
}

struct BinaryCrossEntropyWithLogitsFuncOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(std::string, reduction) = kMean;
  NNP_ARG(Tensor, pos_weight);  // weight of the positive class, per class
};
// Logits against targets in [0, 1], stable for any logit:
// (1 - y) x + (1 + (pos_weight - 1) y) softplus(-x).
inline Tensor binary_cross_entropy_with_logits(Tensor x, Tensor target,
                                               const BinaryCrossEntropyWithLogitsFuncOptions& options = {}) {
  nnp::detail::autocast_args("binary_cross_entropy_with_logits", {&x, &target});
  detail::check_reduction("binary_cross_entropy_with_logits", options.reduction());
  detail::same_shape("BCEWithLogitsLoss", x, target);
  // softplus(-x) = m + log(exp(-m) + exp(-x - m)) for any m; m = max(-x, 0)
  // keeps both exponents <= 0, and the gradient is exact even at x = 0.
  Tensor m = x.neg().relu();
  Tensor softplus_neg = m + (m.neg().exp() + (x.neg() - m).exp()).log();
  Tensor loss = options.pos_weight().defined()
                    ? (1.0 - target) * x + ((options.pos_weight() - 1.0) * target + 1.0) * softplus_neg
                    : (1.0 - target) * x + softplus_neg;
  if (options.weight().defined()) loss = loss * options.weight();
  return detail::reduce_loss(loss, options.reduction());
}

struct SmoothL1LossFuncOptions {
  NNP_LOSS_REDUCTION(SmoothL1LossFuncOptions);
  NNP_ARG(double, beta) = 1.0;
};
// 0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta.
inline Tensor smooth_l1_loss(Tensor input, Tensor target, const SmoothL1LossFuncOptions& options = {}) {
  nnp::detail::autocast_args("smooth_l1_loss", {&input, &target});
  detail::check_reduction("smooth_l1_loss", options.reduction());
  detail::same_shape("SmoothL1Loss", input, target);
  const double beta = options.beta();
  if (beta < 0) throw Error(NNP_INVALID_ARGUMENT, "smooth_l1_loss does not support negative values for beta.");
  Tensor d = (input - target).abs();
  if (beta == 0) return detail::reduce_loss(d, options.reduction());
  return detail::reduce_loss(where(d.lt(d.scalar_like(beta)), d * d * (0.5 / beta), d - 0.5 * beta),
                             options.reduction());
}

struct HuberLossFuncOptions {
  NNP_LOSS_REDUCTION(HuberLossFuncOptions);
  NNP_ARG(double, delta) = 1.0;
};
// 0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta).
inline Tensor huber_loss(Tensor input, Tensor target, const HuberLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("huber_loss", {&input, &target});
  detail::check_reduction("huber_loss", options.reduction());
  detail::same_shape("HuberLoss", input, target);
  const double delta = options.delta();
  if (!(delta > 0)) throw Error(NNP_INVALID_ARGUMENT, "huber_loss does not support non-positive values for delta.");
  Tensor d = (input - target).abs();
  return detail::reduce_loss(where(d.lt(d.scalar_like(delta)), d * d * 0.5, (d - 0.5 * delta) * delta),
                             options.reduction());
}

struct SoftMarginLossFuncOptions {
  NNP_LOSS_REDUCTION(SoftMarginLossFuncOptions);
};
// log(1 + exp(-target * input)) for targets 1 or -1.
inline Tensor soft_margin_loss(Tensor input, Tensor target, const SoftMarginLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("soft_margin_loss", {&input, &target});
  detail::check_reduction("soft_margin_loss", options.reduction());
  detail::same_shape("SoftMarginLoss", input, target);
  return detail::reduce_loss(softplus(-(target * input)), options.reduction());
}

struct KLDivFuncOptions {
  KLDivFuncOptions() = default;
  KLDivFuncOptions(const char* reduction) : reduction_(reduction) {}             // NOLINT
  KLDivFuncOptions(std::string reduction) : reduction_(std::move(reduction)) {}  // NOLINT
  NNP_ARG(std::string, reduction) = kMean;                                       // or "batchmean", "sum", "none"
  NNP_ARG(bool, log_target) = false;
};
// target * (log(target) - input) (0 where target is 0), input being
// log-probabilities; "batchmean" divides the sum by the batch size.
inline Tensor kl_div(Tensor input, Tensor target, const KLDivFuncOptions& options = {}) {
  nnp::detail::autocast_args("kl_div", {&input, &target});
  const std::string& reduction = options.reduction();
  if (reduction != "batchmean") detail::check_reduction("kl_div", reduction);
  Tensor pointwise;
  if (options.log_target()) {
    pointwise = target.exp() * (target - input);
  } else {
    Tensor positive = target.gt(target.scalar_like(0));
    Tensor safe = where(positive, target, target.scalar_like(1));
    pointwise = where(positive, target * safe.log(), target.scalar_like(0)) - target * input;
  }
  if (reduction != "batchmean") return detail::reduce_loss(pointwise, reduction);
  // The mean over the batch of each row's sum: the batch size stays an
  // axis of the computation, not a number (so an ONNX export keeps it).
  if (input.ndim() <= 1) return input.ndim() == 0 ? pointwise.sum() : pointwise.mean();
  std::vector<int32_t> row;
  for (int32_t d = 1; d < input.ndim(); ++d) row.push_back(d);
  return pointwise.sum(row).mean();
}

struct HingeEmbeddingLossFuncOptions {
  NNP_LOSS_REDUCTION(HingeEmbeddingLossFuncOptions);
  NNP_ARG(double, margin) = 1.0;
};
// input where target is 1, max(0, margin - input) where it is -1.
inline Tensor hinge_embedding_loss(Tensor input, Tensor target, const HingeEmbeddingLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("hinge_embedding_loss", {&input, &target});
  detail::check_reduction("hinge_embedding_loss", options.reduction());
  const Tensor zero = input.scalar_like(0);
  Tensor margin_side = (options.margin() - input).clamp(0.0, std::nullopt);
  Tensor loss = where(target.ne(target.scalar_like(1)), margin_side, zero) +
                where(target.ne(target.scalar_like(-1)), input, zero);
  return detail::reduce_loss(loss, options.reduction());
}

struct PoissonNLLLossFuncOptions {
  NNP_LOSS_REDUCTION(PoissonNLLLossFuncOptions);
  NNP_ARG(bool, log_input) = true;
  NNP_ARG(bool, full) = false;
  NNP_ARG(double, eps) = 1e-8;
};
// Negative log likelihood of target under Poisson(rate): exp(input) -
// target * input for log rates, input - target * log(input + eps) for
// rates; full adds Stirling's term where target > 1.
inline Tensor poisson_nll_loss(Tensor input, Tensor target, const PoissonNLLLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("poisson_nll_loss", {&input, &target});
  detail::check_reduction("poisson_nll_loss", options.reduction());
  Tensor loss = options.log_input() ? input.exp() - target * input : input - target * (input + options.eps()).log();
  if (options.full()) {
    Tensor over_one = target.gt(target.scalar_like(1));
    Tensor safe = where(over_one, target, target.scalar_like(2));
    Tensor stirling = safe * safe.log() - safe + (safe * (2 * M_PI)).log() * 0.5;
    loss = loss + where(over_one, stirling, target.scalar_like(0));
  }
  return detail::reduce_loss(loss, options.reduction());
}

struct MultiLabelSoftMarginLossFuncOptions {
  NNP_LOSS_REDUCTION(MultiLabelSoftMarginLossFuncOptions);
  NNP_ARG(Tensor, weight);  // [C], or undefined
};
// Per sample, the mean over classes of the binary cross entropy of the
// logits input [N, C] against targets in {0, 1}.
inline Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                          const MultiLabelSoftMarginLossFuncOptions& options = {}) {
  detail::check_reduction("multilabel_soft_margin_loss", options.reduction());
  detail::same_shape("MultiLabelSoftMarginLoss", input, target);
  Tensor loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input));
  if (options.weight().defined()) loss = loss * options.weight();
  const int32_t classes_dim = input.ndim() - 1;
  Tensor per_sample = loss.sum(classes_dim) / static_cast<double>(input.size(classes_dim));
  return detail::reduce_loss(per_sample, options.reduction());
}

struct MarginRankingLossFuncOptions {
  NNP_LOSS_REDUCTION(MarginRankingLossFuncOptions);
  NNP_ARG(double, margin) = 0.0;
};
// max(0, -target * (input1 - input2) + margin) for targets 1 or -1.
inline Tensor margin_ranking_loss(Tensor input1, Tensor input2, Tensor target,
                                  const MarginRankingLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("margin_ranking_loss", {&input1, &input2, &target});
  detail::check_reduction("margin_ranking_loss", options.reduction());
  Tensor loss = (-(target * (input1 - input2)) + options.margin()).clamp(0.0, std::nullopt);
  return detail::reduce_loss(loss, options.reduction());
}

}  // namespace nnp::nn::functional
