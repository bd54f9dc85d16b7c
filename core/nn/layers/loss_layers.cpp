// Losses with PyTorch's arguments: nn.MSELoss, nn.L1Loss, nn.CrossEntropyLoss
// (class indices or probabilities, ignore_index, label_smoothing), nn.NLLLoss,
// nn.BCELoss, nn.BCEWithLogitsLoss, nn.SmoothL1Loss, nn.HuberLoss,
// nn.SoftMarginLoss, nn.KLDivLoss, nn.HingeEmbeddingLoss, nn.PoissonNLLLoss,
// nn.MultiLabelSoftMarginLoss, nn.MarginRankingLoss. Each is a module called
// with (input, target) - (input1, input2, target) for MarginRankingLoss -
// that calls its function in nnp::nn::functional. As PyTorch's, they print
// as "MSELoss()" whatever their options.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct Loss : nnp::nn::Module {
  std::string reduction;
  Loss(const char* name, const Attrs& a, bool batchmean = false) : Module(name), reduction(a.string("reduction")) {
    if (!(batchmean && reduction == "batchmean")) F::detail::check_reduction(name, reduction);
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  type_name() + ": expects (input, target), got " + std::to_string(inputs.size()) + " tensors");
    return loss(inputs[0], inputs[1]);
  }
  virtual Tensor loss(const Tensor& input, const Tensor& target) = 0;
};

struct MSELoss : Loss {
  explicit MSELoss(const Attrs& a) : Loss("MSELoss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override { return F::mse_loss(input, target, reduction); }
};

struct L1Loss : Loss {
  explicit L1Loss(const Attrs& a) : Loss("L1Loss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override { return F::l1_loss(input, target, reduction); }
};

struct CrossEntropyLoss : Loss {
  int64_t ignore_index;
  double label_smoothing;
  explicit CrossEntropyLoss(const Attrs& a)
      : Loss("CrossEntropyLoss", a),
        ignore_index(a.integer("ignore_index")),
        label_smoothing(a.real("label_smoothing")) {
    if (label_smoothing < 0 || label_smoothing > 1)
      throw Error(NNP_INVALID_ARGUMENT, "CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, got " +
                                            nnp::nn::format_float(label_smoothing));
  }
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return F::cross_entropy(
        input, target,
        F::CrossEntropyFuncOptions().ignore_index(ignore_index).reduction(reduction).label_smoothing(label_smoothing));
  }
};

struct NLLLoss : Loss {
  int64_t ignore_index;
  explicit NLLLoss(const Attrs& a) : Loss("NLLLoss", a), ignore_index(a.integer("ignore_index")) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return F::nll_loss(input, target, F::NLLLossFuncOptions().ignore_index(ignore_index).reduction(reduction));
  }
};

struct BCELoss : Loss {
  explicit BCELoss(const Attrs& a) : Loss("BCELoss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return F::binary_cross_entropy(input, target, F::BinaryCrossEntropyFuncOptions().reduction(reduction));
  }
};

struct BCEWithLogitsLoss : Loss {
  explicit BCEWithLogitsLoss(const Attrs& a) : Loss("BCEWithLogitsLoss", a) {}
  Tensor loss(const Tensor& x, const Tensor& target) override {
    return F::binary_cross_entropy_with_logits(x, target,
                                               F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(reduction));
  }
};

struct SmoothL1Loss : Loss {
  double beta;
  explicit SmoothL1Loss(const Attrs& a) : Loss("SmoothL1Loss", a), beta(a.real("beta")) {
    if (beta < 0) throw Error(NNP_INVALID_ARGUMENT, "SmoothL1Loss does not support negative values for beta.");
  }
  Tensor loss(const Tensor& x, const Tensor& t) override {
    return F::smooth_l1_loss(x, t, F::SmoothL1LossFuncOptions(reduction).beta(beta));
  }
};

struct HuberLoss : Loss {
  double delta;
  explicit HuberLoss(const Attrs& a) : Loss("HuberLoss", a), delta(a.real("delta")) {
    if (!(delta > 0)) throw Error(NNP_INVALID_ARGUMENT, "HuberLoss does not support non-positive values for delta.");
  }
  Tensor loss(const Tensor& x, const Tensor& t) override {
    return F::huber_loss(x, t, F::HuberLossFuncOptions(reduction).delta(delta));
  }
};

struct SoftMarginLoss : Loss {
  explicit SoftMarginLoss(const Attrs& a) : Loss("SoftMarginLoss", a) {}
  Tensor loss(const Tensor& x, const Tensor& t) override { return F::soft_margin_loss(x, t, reduction); }
};

struct KLDivLoss : Loss {
  bool log_target;
  explicit KLDivLoss(const Attrs& a) : Loss("KLDivLoss", a, true), log_target(a.boolean("log_target")) {}
  Tensor loss(const Tensor& x, const Tensor& t) override {
    return F::kl_div(x, t, F::KLDivFuncOptions(reduction).log_target(log_target));
  }
};

struct HingeEmbeddingLoss : Loss {
  double margin;
  explicit HingeEmbeddingLoss(const Attrs& a) : Loss("HingeEmbeddingLoss", a), margin(a.real("margin")) {}
  Tensor loss(const Tensor& x, const Tensor& t) override {
    return F::hinge_embedding_loss(x, t, F::HingeEmbeddingLossFuncOptions(reduction).margin(margin));
  }
};

struct PoissonNLLLoss : Loss {
  F::PoissonNLLLossFuncOptions options;
  explicit PoissonNLLLoss(const Attrs& a) : Loss("PoissonNLLLoss", a) {
    options.reduction(reduction).log_input(a.boolean("log_input")).full(a.boolean("full")).eps(a.real("eps"));
  }
  Tensor loss(const Tensor& x, const Tensor& t) override { return F::poisson_nll_loss(x, t, options); }
};

struct MultiLabelSoftMarginLoss : Loss {
  explicit MultiLabelSoftMarginLoss(const Attrs& a) : Loss("MultiLabelSoftMarginLoss", a) {}
  Tensor loss(const Tensor& x, const Tensor& t) override { return F::multilabel_soft_margin_loss(x, t, reduction); }
};

struct MarginRankingLoss : nnp::nn::Module {
  F::MarginRankingLossFuncOptions options;
  explicit MarginRankingLoss(const Attrs& a) : Module("MarginRankingLoss") {
    options.reduction(a.string("reduction")).margin(a.real("margin"));
    F::detail::check_reduction("MarginRankingLoss", options.reduction());
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 3)
      throw Error(NNP_INVALID_ARGUMENT, "MarginRankingLoss: expects (input1, input2, target), got " +
                                            std::to_string(inputs.size()) + " tensors");
    return F::margin_ranking_loss(inputs[0], inputs[1], inputs[2], options);
  }
};

void register_loss_layers(LayerRegistry& registry) {
  const AttrDecl reduction{"reduction", NNP_ATTR_STRING, false, "\"mean\"", "'none', 'mean' or 'sum'"};
  add_builtin<MSELoss>(registry, "nn.MSELoss", "mean squared error between input and target", {reduction});
  add_builtin<L1Loss>(registry, "nn.L1Loss", "mean absolute error between input and target", {reduction});
  add_builtin<CrossEntropyLoss>(
      registry, "nn.CrossEntropyLoss", "cross entropy of logits [N, C, ...] against class indices or probabilities",
      {{"ignore_index", NNP_ATTR_INT, false, "-100", "target value that contributes nothing"},
       reduction,
       {"label_smoothing", NNP_ATTR_FLOAT, false, "0.0", "share of the target mass spread over all classes"}});
  add_builtin<NLLLoss>(
      registry, "nn.NLLLoss", "negative log likelihood of log-probabilities [N, C, ...]",
      {{"ignore_index", NNP_ATTR_INT, false, "-100", "target value that contributes nothing"}, reduction});
  add_builtin<BCELoss>(registry, "nn.BCELoss", "binary cross entropy of probabilities", {reduction});
  add_builtin<BCEWithLogitsLoss>(registry, "nn.BCEWithLogitsLoss", "binary cross entropy of logits (stable)",
                                 {reduction});
  add_builtin<SmoothL1Loss>(registry, "nn.SmoothL1Loss", "squared error below beta, absolute error above",
                            {reduction, {"beta", NNP_ATTR_FLOAT, false, "1.0", "where the loss turns linear (>= 0)"}});
  add_builtin<HuberLoss>(registry, "nn.HuberLoss", "squared error below delta, delta-scaled absolute error above",
                         {reduction, {"delta", NNP_ATTR_FLOAT, false, "1.0", "where the loss turns linear (> 0)"}});
  add_builtin<SoftMarginLoss>(registry, "nn.SoftMarginLoss", "log(1 + exp(-target * input)), targets 1 or -1",
                              {reduction});
  add_builtin<KLDivLoss>(registry, "nn.KLDivLoss", "Kullback-Leibler divergence of log-probabilities input",
                         {{"reduction", NNP_ATTR_STRING, false, "\"mean\"", "'none', 'batchmean', 'mean' or 'sum'"},
                          {"log_target", NNP_ATTR_BOOL, false, "false", "the target is given as log-probabilities"}});
  add_builtin<HingeEmbeddingLoss>(registry, "nn.HingeEmbeddingLoss",
                                  "input for target 1, max(0, margin - input) for target -1",
                                  {{"margin", NNP_ATTR_FLOAT, false, "1.0", "margin for the -1 targets"}, reduction});
  add_builtin<PoissonNLLLoss>(registry, "nn.PoissonNLLLoss", "negative log likelihood under a Poisson distribution",
                              {{"log_input", NNP_ATTR_BOOL, false, "true", "input is the log of the rate"},
                               {"full", NNP_ATTR_BOOL, false, "false", "add Stirling's approximation term"},
                               {"eps", NNP_ATTR_FLOAT, false, "1e-08", "added to the rate before its log"},
                               reduction});
  add_builtin<MultiLabelSoftMarginLoss>(registry, "nn.MultiLabelSoftMarginLoss",
                                        "per-class binary cross entropy of logits [N, C], averaged over classes",
                                        {reduction});
  add_builtin<MarginRankingLoss>(registry, "nn.MarginRankingLoss",
                                 "max(0, -target * (input1 - input2) + margin), called with (input1, input2, target)",
                                 {{"margin", NNP_ATTR_FLOAT, false, "0.0", "the margin"}, reduction});
}

}  // namespace nnp::core::nn::layers
