// Losses with PyTorch's arguments: nn.MSELoss, nn.L1Loss, nn.CrossEntropyLoss
// (class indices, ignore_index, label_smoothing), nn.NLLLoss, nn.BCELoss,
// nn.BCEWithLogitsLoss. Each is a module called with (input, target) and is
// composed of differentiable ops, so autograd comes for free.
#include <cmath>
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;

struct Loss : nnp::nn::Module {
  std::string reduction;
  Loss(const char* name, const Attrs& a) : Module(name), reduction(a.string("reduction")) {
    if (reduction != "none" && reduction != "mean" && reduction != "sum")
      throw Error(NNP_INVALID_ARGUMENT,
                  std::string(name) + ": reduction must be 'none', 'mean' or 'sum', got '" + reduction + "'");
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  type_name() + ": expects (input, target), got " + std::to_string(inputs.size()) + " tensors");
    return loss(inputs[0], inputs[1]);
  }
  virtual Tensor loss(const Tensor& input, const Tensor& target) = 0;
  Tensor reduce(const Tensor& elementwise) const {
    if (reduction == "none") return elementwise;
    return reduction == "sum" ? elementwise.sum() : elementwise.mean();
  }
  void same_shape(const Tensor& input, const Tensor& target) const {
    if (input.shape() != target.shape())
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": target shape " + shape_text(target.shape()) +
                                          " must equal input shape " + shape_text(input.shape()));
  }
  std::string extra_repr() const override { return reduction == "mean" ? "" : "reduction='" + reduction + "'"; }
};

struct MSELoss : Loss {
  explicit MSELoss(const Attrs& a) : Loss("MSELoss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    same_shape(input, target);
    Tensor d = input - target;
    return reduce(d * d);
  }
};

struct L1Loss : Loss {
  explicit L1Loss(const Attrs& a) : Loss("L1Loss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    same_shape(input, target);
    return reduce((input - target).abs());
  }
};

// Shared by CrossEntropyLoss and NLLLoss: log-probabilities [N, C] (or [C])
// and class indices [N] (or []).
struct ClassIndexLoss : Loss {
  int64_t ignore_index;
  double label_smoothing;
  ClassIndexLoss(const char* name, const Attrs& a, double smoothing)
      : Loss(name, a), ignore_index(a.integer("ignore_index")), label_smoothing(smoothing) {
    if (label_smoothing < 0 || label_smoothing > 1)
      throw Error(NNP_INVALID_ARGUMENT, std::string(name) + ": label_smoothing must be between 0.0 and 1.0, got " +
                                            nnp::nn::format_float(label_smoothing));
  }
  Tensor from_log_probs(Tensor logp, Tensor target) {
    const bool unbatched = logp.ndim() == 1;
    if (unbatched) {
      logp = logp.unsqueeze(0);
      target = target.reshape({1});
    }
    if (logp.ndim() != 2)
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": input must be [N, C] or [C], got " + shape_text(logp.shape()));
    if (target.dtype() != nnp::Dtype::i64 && target.dtype() != nnp::Dtype::i32)
      throw Error(NNP_DTYPE_MISMATCH,
                  type_name() + ": target must hold class indices (i64), got " + nnp::dtype_name(target.dtype()));
    target = target.to(nnp::Dtype::i64);
    if (target.ndim() != 1 || target.size(0) != logp.size(0))
      throw Error(NNP_SHAPE_MISMATCH, type_name() + ": target shape " + shape_text(target.shape()) +
                                          " does not match input shape " + shape_text(logp.shape()) + " (expected [" +
                                          std::to_string(logp.size(0)) + "])");
    const int64_t classes = logp.size(1);
    Tensor ignored = target.eq(target.scalar_like(static_cast<double>(ignore_index)));
    Tensor safe = where(ignored, target.scalar_like(0), target);
    const int64_t out_of_range = (safe.lt(safe.scalar_like(0)).to(nnp::Dtype::i64).sum() +
                                  safe.ge(safe.scalar_like(static_cast<double>(classes))).to(nnp::Dtype::i64).sum())
                                     .item<int64_t>();
    if (out_of_range > 0)
      throw Error(NNP_INVALID_ARGUMENT, type_name() + ": " + std::to_string(out_of_range) + " target(s) outside [0, " +
                                            std::to_string(classes) + ") that are not ignore_index " +
                                            std::to_string(ignore_index));
    Tensor keep = where(ignored, logp.scalar_like(0), logp.scalar_like(1));
    Tensor nll = logp.gather(1, safe.unsqueeze(1)).squeeze(1).neg() * keep;
    Tensor per_sample = nll;
    if (label_smoothing > 0) {
      Tensor smooth = logp.sum({1}).neg() * (1.0 / static_cast<double>(classes)) * keep;
      per_sample = nll * (1.0 - label_smoothing) + smooth * label_smoothing;
    }
    if (reduction == "none") return unbatched ? per_sample.squeeze(0) : per_sample;
    if (reduction == "sum") return per_sample.sum();
    return per_sample.sum() / keep.sum();  // mean over the samples not ignored
  }
  std::string extra_repr() const override { return Loss::extra_repr(); }
};

struct CrossEntropyLoss : ClassIndexLoss {
  explicit CrossEntropyLoss(const Attrs& a) : ClassIndexLoss("CrossEntropyLoss", a, a.real("label_smoothing")) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    return from_log_probs(input.log_softmax(input.ndim() == 1 ? 0 : 1), target);
  }
};

struct NLLLoss : ClassIndexLoss {
  explicit NLLLoss(const Attrs& a) : ClassIndexLoss("NLLLoss", a, 0.0) {}
  Tensor loss(const Tensor& input, const Tensor& target) override { return from_log_probs(input, target); }
};

struct BCELoss : Loss {
  explicit BCELoss(const Attrs& a) : Loss("BCELoss", a) {}
  Tensor loss(const Tensor& input, const Tensor& target) override {
    same_shape(input, target);
    // PyTorch clamps each log to >= -100 so that 0 and 1 stay finite.
    Tensor floor = input.scalar_like(-100);
    Tensor log_p = input.log().maximum(floor);
    Tensor log_q = (1.0 - input).log().maximum(floor);
    return reduce((target * log_p + (1.0 - target) * log_q).neg());
  }
};

struct BCEWithLogitsLoss : Loss {
  explicit BCEWithLogitsLoss(const Attrs& a) : Loss("BCEWithLogitsLoss", a) {}
  Tensor loss(const Tensor& x, const Tensor& target) override {
    same_shape(x, target);
    // max(x, 0) - x y + log(1 + exp(-|x|)): stable for any x.
    Tensor positive = x.relu();
    Tensor softplus = ((x.abs().neg()).exp() + 1.0).log();
    return reduce(positive - x * target + softplus);
  }
};

void register_loss_layers(LayerRegistry& registry) {
  const AttrDecl reduction{"reduction", NNP_ATTR_STRING, false, "\"mean\"", "'none', 'mean' or 'sum'"};
  add_builtin<MSELoss>(registry, "nn.MSELoss", "mean squared error between input and target", {reduction});
  add_builtin<L1Loss>(registry, "nn.L1Loss", "mean absolute error between input and target", {reduction});
  add_builtin<CrossEntropyLoss>(
      registry, "nn.CrossEntropyLoss", "cross entropy of logits [N, C] against class indices [N]",
      {{"ignore_index", NNP_ATTR_INT, false, "-100", "target value that contributes nothing"},
       reduction,
       {"label_smoothing", NNP_ATTR_FLOAT, false, "0.0", "share of the target mass spread over all classes"}});
  add_builtin<NLLLoss>(
      registry, "nn.NLLLoss", "negative log likelihood of log-probabilities [N, C]",
      {{"ignore_index", NNP_ATTR_INT, false, "-100", "target value that contributes nothing"}, reduction});
  add_builtin<BCELoss>(registry, "nn.BCELoss", "binary cross entropy of probabilities", {reduction});
  add_builtin<BCEWithLogitsLoss>(registry, "nn.BCEWithLogitsLoss", "binary cross entropy of logits (stable)",
                                 {reduction});
}

}  // namespace nnp::core::nn::layers
