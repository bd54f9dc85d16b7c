// Losses with PyTorch's arguments: nn.MSELoss, nn.L1Loss, nn.CrossEntropyLoss
// (class indices or probabilities, ignore_index, label_smoothing), nn.NLLLoss,
// nn.BCELoss, nn.BCEWithLogitsLoss, nn.SmoothL1Loss, nn.HuberLoss,
// nn.SoftMarginLoss, nn.KLDivLoss, nn.HingeEmbeddingLoss, nn.PoissonNLLLoss,
// nn.MultiLabelSoftMarginLoss, nn.MultiMarginLoss, nn.MultiLabelMarginLoss,
// and those of more inputs: nn.MarginRankingLoss, nn.CosineEmbeddingLoss,
// nn.TripletMarginLoss, nn.TripletMarginWithDistanceLoss,
// nn.GaussianNLLLoss, nn.CTCLoss. Each is a module called with (input,
// target) or the inputs PyTorch's forward takes, that calls its function in
// nnp::nn::functional. As PyTorch's, they print as "MSELoss()" whatever
// their options.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::library::layers {

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

// PyTorch's _WeightedLoss: a `weight` buffer of per-class (or per-element)
// weights from the attribute's numbers, None (no state-dict entry) when
// not given.
struct WeightedLoss : Loss {
  Tensor weight;
  WeightedLoss(const char* name, const Attrs& a) : Loss(name, a), weight(optional_buffer(a, "weight")) {}
  Tensor optional_buffer(const Attrs& a, const char* key) {
    Tensor values;
    if (a.has(key)) {
      const std::vector<double> numbers = a.reals(key);
      values = nnp::from_vector(numbers, {static_cast<int64_t>(numbers.size())}).to(nnp::Dtype::f32);
    }
    return register_buffer(key, values);
  }
};

struct MSELoss : Loss {
  explicit MSELoss(const Attrs& a) : Loss("MSELoss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override { return F::mse_loss(input, target, reduction); }
};

struct L1Loss : Loss {
  explicit L1Loss(const Attrs& a) : Loss("L1Loss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override { return F::l1_loss(input, target, reduction); }
};

struct CrossEntropyLoss : WeightedLoss {
  int64_t ignore_index;
  double label_smoothing;
  explicit CrossEntropyLoss(const Attrs& a)
      : WeightedLoss("CrossEntropyLoss", a),
        ignore_index(a.integer("ignore_index")),
        label_smoothing(a.real("label_smoothing")) {
    if (label_smoothing < 0 || label_smoothing > 1)
      throw Error(NNP_INVALID_ARGUMENT, "CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, got " +
                                            nnp::nn::format_float(label_smoothing));
  }
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return F::cross_entropy(input, target,
                            F::CrossEntropyFuncOptions()
                                .weight(weight)
                                .ignore_index(ignore_index)
                                .reduction(reduction)
                                .label_smoothing(label_smoothing));
  }
};

struct NLLLoss : WeightedLoss {
  int64_t ignore_index;
  explicit NLLLoss(const Attrs& a) : WeightedLoss("NLLLoss", a), ignore_index(a.integer("ignore_index")) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return F::nll_loss(input, target,
                       F::NLLLossFuncOptions().weight(weight).ignore_index(ignore_index).reduction(reduction));
  }
};

struct BCELoss : WeightedLoss {
  explicit BCELoss(const Attrs& a) : WeightedLoss("BCELoss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return F::binary_cross_entropy(input, target,
                                   F::BinaryCrossEntropyFuncOptions().weight(weight).reduction(reduction));
  }
};

// weight (per element, broadcast) and pos_weight (per class) are buffers.
struct BCEWithLogitsLoss : WeightedLoss {
  Tensor pos_weight;
  explicit BCEWithLogitsLoss(const Attrs& a)
      : WeightedLoss("BCEWithLogitsLoss", a), pos_weight(optional_buffer(a, "pos_weight")) {}
  Tensor loss(const Tensor& x, const Tensor& target) override {
    return F::binary_cross_entropy_with_logits(
        x, target,
        F::BinaryCrossEntropyWithLogitsFuncOptions().weight(weight).pos_weight(pos_weight).reduction(reduction));
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

struct MultiLabelSoftMarginLoss : WeightedLoss {
  explicit MultiLabelSoftMarginLoss(const Attrs& a) : WeightedLoss("MultiLabelSoftMarginLoss", a) {}
  Tensor loss(const Tensor& x, const Tensor& t) override {
    return F::multilabel_soft_margin_loss(x, t,
                                          F::MultiLabelSoftMarginLossFuncOptions().weight(weight).reduction(reduction));
  }
};

// A loss of more than (input, target): the inputs by name, for messages.
struct MultiInputLoss : nnp::nn::Module {
  std::vector<const char*> names;
  MultiInputLoss(const char* type, std::vector<const char*> inputs) : Module(type), names(std::move(inputs)) {}
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != names.size()) {
      std::string form;
      for (size_t i = 0; i < names.size(); ++i) form += (i ? ", " : "") + std::string(names[i]);
      throw Error(NNP_INVALID_ARGUMENT,
                  type_name() + ": expects (" + form + "), got " + std::to_string(inputs.size()) + " tensors");
    }
    return loss(inputs);
  }
  virtual Tensor loss(const std::vector<Tensor>& in) = 0;
};

struct MarginRankingLoss : MultiInputLoss {
  F::MarginRankingLossFuncOptions options;
  explicit MarginRankingLoss(const Attrs& a) : MultiInputLoss("MarginRankingLoss", {"input1", "input2", "target"}) {
    options.reduction(a.string("reduction")).margin(a.real("margin"));
    F::detail::check_reduction("MarginRankingLoss", options.reduction());
  }
  Tensor loss(const std::vector<Tensor>& in) override { return F::margin_ranking_loss(in[0], in[1], in[2], options); }
};

struct CosineEmbeddingLoss : MultiInputLoss {
  F::CosineEmbeddingLossFuncOptions options;
  explicit CosineEmbeddingLoss(const Attrs& a) : MultiInputLoss("CosineEmbeddingLoss", {"input1", "input2", "target"}) {
    options.reduction(a.string("reduction")).margin(a.real("margin"));
    F::detail::check_reduction("CosineEmbeddingLoss", options.reduction());
  }
  Tensor loss(const std::vector<Tensor>& in) override { return F::cosine_embedding_loss(in[0], in[1], in[2], options); }
};

struct MultiMarginLoss : WeightedLoss {
  F::MultiMarginLossFuncOptions options;
  explicit MultiMarginLoss(const Attrs& a) : WeightedLoss("MultiMarginLoss", a) {
    options.reduction(reduction).p(a.integer("p")).margin(a.real("margin"));
    if (options.p() != 1 && options.p() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  "MultiMarginLoss: only p == 1 and p == 2 supported, got " + std::to_string(options.p()));
  }
  Tensor loss(const Tensor& x, const Tensor& t) override {
    return F::multi_margin_loss(x, t, F::MultiMarginLossFuncOptions(options).weight(weight));
  }
};

struct MultiLabelMarginLoss : Loss {
  explicit MultiLabelMarginLoss(const Attrs& a) : Loss("MultiLabelMarginLoss", a) {}
  Tensor loss(const Tensor& x, const Tensor& t) override { return F::multilabel_margin_loss(x, t, reduction); }
};

struct TripletMarginLoss : MultiInputLoss {
  F::TripletMarginLossFuncOptions options;
  explicit TripletMarginLoss(const Attrs& a) : MultiInputLoss("TripletMarginLoss", {"anchor", "positive", "negative"}) {
    options.reduction(a.string("reduction")).margin(a.real("margin")).p(a.real("p")).eps(a.real("eps"));
    options.swap(a.boolean("swap"));
    F::detail::check_reduction("TripletMarginLoss", options.reduction());
  }
  Tensor loss(const std::vector<Tensor>& in) override { return F::triplet_margin_loss(in[0], in[1], in[2], options); }
};

// The distance is a PairwiseDistance child, as PyTorch's default (a model
// spec cannot name a function; the C++ option distance_function takes one).
struct TripletMarginWithDistanceLoss : MultiInputLoss {
  F::TripletMarginWithDistanceLossFuncOptions options;
  nnp::nn::ModuleHandle distance_function;
  explicit TripletMarginWithDistanceLoss(const Attrs& a)
      : MultiInputLoss("TripletMarginWithDistanceLoss", {"anchor", "positive", "negative"}) {
    distance_function = register_module("distance_function", nnp::nn::create_layer("nn.PairwiseDistance"));
    options.distance_function([this](const Tensor& x, const Tensor& y) { return distance_function.call({x, y}); });
    options.reduction(a.string("reduction")).margin(a.real("margin")).swap(a.boolean("swap"));
    F::detail::check_reduction("TripletMarginWithDistanceLoss", options.reduction());
    if (!(options.margin() > 0))
      throw Error(NNP_INVALID_ARGUMENT, "TripletMarginWithDistanceLoss: margin must be greater than 0, got " +
                                            nnp::nn::format_float(options.margin()));
  }
  Tensor loss(const std::vector<Tensor>& in) override {
    return F::triplet_margin_with_distance_loss(in[0], in[1], in[2], options);
  }
};

struct GaussianNLLLoss : MultiInputLoss {
  F::GaussianNLLLossFuncOptions options;
  explicit GaussianNLLLoss(const Attrs& a) : MultiInputLoss("GaussianNLLLoss", {"input", "target", "var"}) {
    options.reduction(a.string("reduction")).full(a.boolean("full")).eps(a.real("eps"));
    F::detail::check_reduction("GaussianNLLLoss", options.reduction());
  }
  Tensor loss(const std::vector<Tensor>& in) override { return F::gaussian_nll_loss(in[0], in[1], in[2], options); }
};

struct CTCLoss : MultiInputLoss {
  F::CTCLossFuncOptions options;
  explicit CTCLoss(const Attrs& a)
      : MultiInputLoss("CTCLoss", {"log_probs", "targets", "input_lengths", "target_lengths"}) {
    options.blank(a.integer("blank")).reduction(a.string("reduction")).zero_infinity(a.boolean("zero_infinity"));
    F::detail::check_reduction("CTCLoss", options.reduction());
  }
  Tensor loss(const std::vector<Tensor>& in) override { return F::ctc_loss(in[0], in[1], in[2], in[3], options); }
};

void register_loss_layers(nnp_plugin_host* host) {
  const AttrDecl reduction{"reduction", NNP_ATTR_STRING, false, "\"mean\"", "'none', 'mean' or 'sum'"};
  const AttrDecl weight{"weight", NNP_ATTR_FLOATS, false, nullptr, "a weight per class (a buffer; null: none)"};
  add_builtin<MSELoss>(host, "nn.MSELoss", "mean squared error between input and target", {reduction});
  add_builtin<L1Loss>(host, "nn.L1Loss", "mean absolute error between input and target", {reduction});
  add_builtin<CrossEntropyLoss>(
      host, "nn.CrossEntropyLoss", "cross entropy of logits [N, C, ...] against class indices or probabilities",
      {weight,
       {"ignore_index", NNP_ATTR_INT, false, "-100", "target value that contributes nothing"},
       reduction,
       {"label_smoothing", NNP_ATTR_FLOAT, false, "0.0", "share of the target mass spread over all classes"}});
  add_builtin<NLLLoss>(
      host, "nn.NLLLoss", "negative log likelihood of log-probabilities [N, C, ...]",
      {weight, {"ignore_index", NNP_ATTR_INT, false, "-100", "target value that contributes nothing"}, reduction});
  const AttrDecl element_weight{"weight", NNP_ATTR_FLOATS, false, nullptr,
                                "weights broadcast over the last dimension (a buffer; null: none)"};
  add_builtin<BCELoss>(host, "nn.BCELoss", "binary cross entropy of probabilities", {element_weight, reduction});
  add_builtin<BCEWithLogitsLoss>(
      host, "nn.BCEWithLogitsLoss", "binary cross entropy of logits (stable)",
      {element_weight,
       reduction,
       {"pos_weight", NNP_ATTR_FLOATS, false, nullptr, "weight of positive examples per class (a buffer)"}});
  add_builtin<SmoothL1Loss>(host, "nn.SmoothL1Loss", "squared error below beta, absolute error above",
                            {reduction, {"beta", NNP_ATTR_FLOAT, false, "1.0", "where the loss turns linear (>= 0)"}});
  add_builtin<HuberLoss>(host, "nn.HuberLoss", "squared error below delta, delta-scaled absolute error above",
                         {reduction, {"delta", NNP_ATTR_FLOAT, false, "1.0", "where the loss turns linear (> 0)"}});
  add_builtin<SoftMarginLoss>(host, "nn.SoftMarginLoss", "log(1 + exp(-target * input)), targets 1 or -1",
                              {reduction});
  add_builtin<KLDivLoss>(host, "nn.KLDivLoss", "Kullback-Leibler divergence of log-probabilities input",
                         {{"reduction", NNP_ATTR_STRING, false, "\"mean\"", "'none', 'batchmean', 'mean' or 'sum'"},
                          {"log_target", NNP_ATTR_BOOL, false, "false", "the target is given as log-probabilities"}});
  add_builtin<HingeEmbeddingLoss>(host, "nn.HingeEmbeddingLoss",
                                  "input for target 1, max(0, margin - input) for target -1",
                                  {{"margin", NNP_ATTR_FLOAT, false, "1.0", "margin for the -1 targets"}, reduction});
  add_builtin<PoissonNLLLoss>(host, "nn.PoissonNLLLoss", "negative log likelihood under a Poisson distribution",
                              {{"log_input", NNP_ATTR_BOOL, false, "true", "input is the log of the rate"},
                               {"full", NNP_ATTR_BOOL, false, "false", "add Stirling's approximation term"},
                               {"eps", NNP_ATTR_FLOAT, false, "1e-08", "added to the rate before its log"},
                               reduction});
  add_builtin<MultiLabelSoftMarginLoss>(host, "nn.MultiLabelSoftMarginLoss",
                                        "per-class binary cross entropy of logits [N, C], averaged over classes",
                                        {weight, reduction});
  add_builtin<CosineEmbeddingLoss>(
      host, "nn.CosineEmbeddingLoss",
      "1 - cos(x1, x2) for target 1, max(0, cos - margin) for -1; (input1, input2, target)",
      {reduction, {"margin", NNP_ATTR_FLOAT, false, "0.0", "margin for dissimilar pairs"}});
  add_builtin<MultiMarginLoss>(host, "nn.MultiMarginLoss", "multi-class hinge loss of class scores",
                               {{"p", NNP_ATTR_INT, false, "1", "1 or 2: the hinge's power"},
                                {"margin", NNP_ATTR_FLOAT, false, "1.0", "the margin"},
                                weight,
                                reduction});
  add_builtin<MultiLabelMarginLoss>(host, "nn.MultiLabelMarginLoss",
                                    "multi-label hinge loss; targets list class indices ending in -1", {reduction});
  add_builtin<TripletMarginLoss>(host, "nn.TripletMarginLoss",
                                 "max(0, d(a, p) - d(a, n) + margin); (anchor, positive, negative)",
                                 {{"margin", NNP_ATTR_FLOAT, false, "1.0", "the margin"},
                                  {"p", NNP_ATTR_FLOAT, false, "2.0", "the distance's norm degree"},
                                  {"eps", NNP_ATTR_FLOAT, false, "1e-06", "added to the differences"},
                                  {"swap", NNP_ATTR_BOOL, false, "false", "use min(d(a, n), d(p, n))"},
                                  reduction});
  add_builtin<TripletMarginWithDistanceLoss>(host, "nn.TripletMarginWithDistanceLoss",
                                             "the triplet loss with a distance (pairwise_distance in specs)",
                                             {{"margin", NNP_ATTR_FLOAT, false, "1.0", "the margin"},
                                              {"swap", NNP_ATTR_BOOL, false, "false", "use min(d(a, n), d(p, n))"},
                                              reduction});
  add_builtin<GaussianNLLLoss>(host, "nn.GaussianNLLLoss",
                               "negative log likelihood under a Gaussian; (input, target, var)",
                               {{"full", NNP_ATTR_BOOL, false, "false", "add the constant 0.5 log(2 pi)"},
                                {"eps", NNP_ATTR_FLOAT, false, "1e-06", "the variance's floor"},
                                reduction});
  add_builtin<CTCLoss>(host, "nn.CTCLoss",
                       "connectionist temporal classification; (log_probs, targets, input_lengths, target_lengths)",
                       {{"blank", NNP_ATTR_INT, false, "0", "the blank label"},
                        reduction,
                        {"zero_infinity", NNP_ATTR_BOOL, false, "false", "impossible alignments give 0, not inf"}});
  add_builtin<MarginRankingLoss>(host, "nn.MarginRankingLoss",
                                 "max(0, -target * (input1 - input2) + margin), called with (input1, input2, target)",
                                 {{"margin", NNP_ATTR_FLOAT, false, "0.0", "the margin"}, reduction});
}

}  // namespace nnp::library::layers
