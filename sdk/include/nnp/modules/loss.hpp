// nnp/modules/loss.hpp - typed losses (libtorch's holders over the
// registry's nn.* layers): MSELoss, L1Loss, CrossEntropyLoss, NLLLoss,
// BCELoss, BCEWithLogitsLoss, SmoothL1Loss, HuberLoss, SoftMarginLoss,
// KLDivLoss, HingeEmbeddingLoss, PoissonNLLLoss, MultiLabelSoftMarginLoss,
// MultiMarginLoss, MultiLabelMarginLoss (forward(input, target)),
// MarginRankingLoss, CosineEmbeddingLoss, TripletMarginLoss,
// TripletMarginWithDistanceLoss, GaussianNLLLoss and CTCLoss (forward of
// the inputs PyTorch's takes).
#pragma once

#include <nnp/functional/ctc_loss.hpp>
#include <nnp/functional/loss.hpp>
#include <nnp/functional/margin_loss.hpp>
#include <nnp/module_holder.hpp>
#include <nnp/options.hpp>
#include <string>

namespace nnp::nn {

// A loss whose only option is its reduction.
#define NNP_REDUCTION_LOSS(Name)                                                                \
  struct Name##Options {                                                                        \
    Name##Options() = default;                                                                  \
    Name##Options(const char* reduction) : reduction_(reduction) {}            /* NOLINT */     \
    Name##Options(std::string reduction) : reduction_(std::move(reduction)) {} /* NOLINT */     \
    NNP_ARG(std::string, reduction) = kMean;                                                    \
  };                                                                                            \
  struct Name##Impl : Layer {                                                                   \
    explicit Name##Impl(const Name##Options& o = {})                                            \
        : Layer("nn." #Name, Attrs().set("reduction", o.reduction())), options(o) {}            \
    Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); } \
    Name##Options options;                                                                      \
  };                                                                                            \
  NNP_MODULE(Name)

NNP_REDUCTION_LOSS(MSELoss);
NNP_REDUCTION_LOSS(L1Loss);
NNP_REDUCTION_LOSS(SoftMarginLoss);
NNP_REDUCTION_LOSS(MultiLabelMarginLoss);
#undef NNP_REDUCTION_LOSS

namespace detail {
// A weight tensor as the layer's attribute (its buffer is made from the
// numbers, in the default dtype); an undefined one is None.
inline Attrs& set_weight(Attrs& a, const char* name, const Tensor& weight) {
  if (!weight.defined()) return a.set(name, std::nullopt);
  return a.set(name, weight.detach().reshape({-1}).to(Dtype::f64).to(Device::cpu()).to_vector<double>());
}
}  // namespace detail

// Losses whose options are a weight and the reduction.
#define NNP_WEIGHTED_LOSS(Name)                                                                    \
  struct Name##Options {                                                                           \
    NNP_ARG(Tensor, weight);                                                                       \
    NNP_ARG(std::string, reduction) = kMean;                                                       \
  };                                                                                               \
  struct Name##Impl : Layer {                                                                      \
    explicit Name##Impl(const Name##Options& o = {}) : Layer("nn." #Name, attrs(o)), options(o) {} \
    static Attrs attrs(const Name##Options& o) {                                                   \
      Attrs a;                                                                                     \
      detail::set_weight(a, "weight", o.weight()).set("reduction", o.reduction());                 \
      return a;                                                                                    \
    }                                                                                              \
    Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }    \
    Name##Options options;                                                                         \
  };                                                                                               \
  NNP_MODULE(Name)
NNP_WEIGHTED_LOSS(BCELoss);
NNP_WEIGHTED_LOSS(MultiLabelSoftMarginLoss);
#undef NNP_WEIGHTED_LOSS

struct BCEWithLogitsLossOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(std::string, reduction) = kMean;
  NNP_ARG(Tensor, pos_weight);
};
struct BCEWithLogitsLossImpl : Layer {
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& o = {})
      : Layer("nn.BCEWithLogitsLoss", attrs(o)), options(o) {}
  static Attrs attrs(const BCEWithLogitsLossOptions& o) {
    Attrs a;
    detail::set_weight(a, "weight", o.weight()).set("reduction", o.reduction());
    detail::set_weight(a, "pos_weight", o.pos_weight());
    return a;
  }
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  BCEWithLogitsLossOptions options;
};
NNP_MODULE(BCEWithLogitsLoss);

using SmoothL1LossOptions = functional::SmoothL1LossFuncOptions;
struct SmoothL1LossImpl : Layer {
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& o = {})
      : Layer("nn.SmoothL1Loss", Attrs().set("reduction", o.reduction()).set("beta", o.beta())), options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  SmoothL1LossOptions options;
};
NNP_MODULE(SmoothL1Loss);

using HuberLossOptions = functional::HuberLossFuncOptions;
struct HuberLossImpl : Layer {
  explicit HuberLossImpl(const HuberLossOptions& o = {})
      : Layer("nn.HuberLoss", Attrs().set("reduction", o.reduction()).set("delta", o.delta())), options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  HuberLossOptions options;
};
NNP_MODULE(HuberLoss);

using KLDivLossOptions = functional::KLDivFuncOptions;
struct KLDivLossImpl : Layer {
  explicit KLDivLossImpl(const KLDivLossOptions& o = {})
      : Layer("nn.KLDivLoss", Attrs().set("reduction", o.reduction()).set("log_target", o.log_target())), options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  KLDivLossOptions options;
};
NNP_MODULE(KLDivLoss);

using HingeEmbeddingLossOptions = functional::HingeEmbeddingLossFuncOptions;
struct HingeEmbeddingLossImpl : Layer {
  explicit HingeEmbeddingLossImpl(const HingeEmbeddingLossOptions& o = {})
      : Layer("nn.HingeEmbeddingLoss", Attrs().set("margin", o.margin()).set("reduction", o.reduction())), options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  HingeEmbeddingLossOptions options;
};
NNP_MODULE(HingeEmbeddingLoss);

using PoissonNLLLossOptions = functional::PoissonNLLLossFuncOptions;
struct PoissonNLLLossImpl : Layer {
  explicit PoissonNLLLossImpl(const PoissonNLLLossOptions& o = {})
      : Layer("nn.PoissonNLLLoss", Attrs()
                                       .set("log_input", o.log_input())
                                       .set("full", o.full())
                                       .set("eps", o.eps())
                                       .set("reduction", o.reduction())),
        options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  PoissonNLLLossOptions options;
};
NNP_MODULE(PoissonNLLLoss);

using MarginRankingLossOptions = functional::MarginRankingLossFuncOptions;
struct MarginRankingLossImpl : Layer {
  explicit MarginRankingLossImpl(const MarginRankingLossOptions& o = {})
      : Layer("nn.MarginRankingLoss", Attrs().set("margin", o.margin()).set("reduction", o.reduction())), options(o) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
    return call({input1, input2, target});
  }
  MarginRankingLossOptions options;
};
NNP_MODULE(MarginRankingLoss);

using CosineEmbeddingLossOptions = functional::CosineEmbeddingLossFuncOptions;
struct CosineEmbeddingLossImpl : Layer {
  explicit CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& o = {})
      : Layer("nn.CosineEmbeddingLoss", Attrs().set("margin", o.margin()).set("reduction", o.reduction())),
        options(o) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
    return call({input1, input2, target});
  }
  CosineEmbeddingLossOptions options;
};
NNP_MODULE(CosineEmbeddingLoss);

struct MultiMarginLossOptions {
  NNP_ARG(int64_t, p) = 1;
  NNP_ARG(double, margin) = 1.0;
  NNP_ARG(Tensor, weight);
  NNP_ARG(std::string, reduction) = kMean;
};
struct MultiMarginLossImpl : Layer {
  explicit MultiMarginLossImpl(const MultiMarginLossOptions& o = {})
      : Layer("nn.MultiMarginLoss", attrs(o)), options(o) {}
  static Attrs attrs(const MultiMarginLossOptions& o) {
    Attrs a;
    a.set("p", o.p()).set("margin", o.margin()).set("reduction", o.reduction());
    detail::set_weight(a, "weight", o.weight());
    return a;
  }
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  MultiMarginLossOptions options;
};
NNP_MODULE(MultiMarginLoss);

using TripletMarginLossOptions = functional::TripletMarginLossFuncOptions;
struct TripletMarginLossImpl : Layer {
  explicit TripletMarginLossImpl(const TripletMarginLossOptions& o = {})
      : Layer("nn.TripletMarginLoss", Attrs()
                                          .set("margin", o.margin())
                                          .set("p", o.p())
                                          .set("eps", o.eps())
                                          .set("swap", o.swap())
                                          .set("reduction", o.reduction())),
        options(o) {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
    return call({anchor, positive, negative});
  }
  TripletMarginLossOptions options;
};
NNP_MODULE(TripletMarginLoss);

// With pairwise_distance (F::triplet_margin_with_distance_loss takes any
// distance function).
struct TripletMarginWithDistanceLossOptions {
  NNP_ARG(double, margin) = 1.0;
  NNP_ARG(bool, swap) = false;
  NNP_ARG(std::string, reduction) = kMean;
};
struct TripletMarginWithDistanceLossImpl : Layer {
  explicit TripletMarginWithDistanceLossImpl(const TripletMarginWithDistanceLossOptions& o = {})
      : Layer("nn.TripletMarginWithDistanceLoss",
              Attrs().set("margin", o.margin()).set("swap", o.swap()).set("reduction", o.reduction())),
        options(o) {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
    return call({anchor, positive, negative});
  }
  TripletMarginWithDistanceLossOptions options;
};
NNP_MODULE(TripletMarginWithDistanceLoss);

using GaussianNLLLossOptions = functional::GaussianNLLLossFuncOptions;
struct GaussianNLLLossImpl : Layer {
  explicit GaussianNLLLossImpl(const GaussianNLLLossOptions& o = {})
      : Layer("nn.GaussianNLLLoss", Attrs().set("full", o.full()).set("eps", o.eps()).set("reduction", o.reduction())),
        options(o) {}
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var) { return call({input, target, var}); }
  GaussianNLLLossOptions options;
};
NNP_MODULE(GaussianNLLLoss);

using CTCLossOptions = functional::CTCLossFuncOptions;
struct CTCLossImpl : Layer {
  explicit CTCLossImpl(const CTCLossOptions& o = {})
      : Layer("nn.CTCLoss",
              Attrs().set("blank", o.blank()).set("reduction", o.reduction()).set("zero_infinity", o.zero_infinity())),
        options(o) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) {
    return call({log_probs, targets, input_lengths, target_lengths});
  }
  CTCLossOptions options;
};
NNP_MODULE(CTCLoss);

struct CrossEntropyLossOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(int64_t, ignore_index) = -100;
  NNP_ARG(std::string, reduction) = kMean;
  NNP_ARG(double, label_smoothing) = 0.0;
};
struct CrossEntropyLossImpl : Layer {
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& o = {})
      : Layer("nn.CrossEntropyLoss", attrs(o)), options(o) {}
  static Attrs attrs(const CrossEntropyLossOptions& o) {
    Attrs a;
    detail::set_weight(a, "weight", o.weight())
        .set("ignore_index", o.ignore_index())
        .set("reduction", o.reduction())
        .set("label_smoothing", o.label_smoothing());
    return a;
  }
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  CrossEntropyLossOptions options;
};
NNP_MODULE(CrossEntropyLoss);

struct NLLLossOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(int64_t, ignore_index) = -100;
  NNP_ARG(std::string, reduction) = kMean;
};
struct NLLLossImpl : Layer {
  explicit NLLLossImpl(const NLLLossOptions& o = {}) : Layer("nn.NLLLoss", attrs(o)), options(o) {}
  static Attrs attrs(const NLLLossOptions& o) {
    Attrs a;
    detail::set_weight(a, "weight", o.weight()).set("ignore_index", o.ignore_index()).set("reduction", o.reduction());
    return a;
  }
  Tensor forward(const Tensor& input, const Tensor& target) { return call({input, target}); }
  NLLLossOptions options;
};
NNP_MODULE(NLLLoss);

}  // namespace nnp::nn
