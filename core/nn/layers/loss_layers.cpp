// Losses with PyTorch's arguments: nn.MSELoss, nn.L1Loss, nn.CrossEntropyLoss
// (class indices or probabilities, ignore_index, label_smoothing), nn.NLLLoss,
// nn.BCELoss, nn.BCEWithLogitsLoss. Each is a module called with (input,
// target) that calls its function in nnp::nn::functional.
#include <nnp/nnp.hpp>

#include "builtin.hpp"

namespace nnp::core::nn::layers {

using nnp::Tensor;
using nnp::nn::Attrs;
namespace F = nnp::nn::functional;

struct Loss : nnp::nn::Module {
  std::string reduction;
  Loss(const char* name, const Attrs& a) : Module(name), reduction(a.string("reduction")) {
    F::detail::check_reduction(name, reduction);
  }
  Tensor forward(const std::vector<Tensor>& inputs) override {
    if (inputs.size() != 2)
      throw Error(NNP_INVALID_ARGUMENT,
                  type_name() + ": expects (input, target), got " + std::to_string(inputs.size()) + " tensors");
    return loss(inputs[0], inputs[1]);
  }
  virtual Tensor loss(const Tensor& input, const Tensor& target) = 0;
  std::string extra_repr() const override { return reduction == "mean" ? "" : "reduction='" + reduction + "'"; }
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
}

}  // namespace nnp::core::nn::layers
