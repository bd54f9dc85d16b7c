// ONNX's loss operators (opset 12 and later): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, written with the SDK's tensor ops so that a
// training graph imported from ONNX differentiates through them.
#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

// input [N, C, d1...] (log-probabilities), target [N, d1...]: each target's
// -input times its class weight, 0 where the target is ignore_index; then
// the reduction (mean divides by the weights of the targets counted).
Tensor nll(const Tensor& input, const Tensor& target, const Tensor* weight, const Node& a, const char* op) {
  if (input.ndim() < 2 || target.ndim() != input.ndim() - 1)
    invalid(std::string(op) + ": needs input [N, C, ...] and target [N, ...]");
  const Tensor t = target.to(Dtype::i64);
  Tensor ignored = nnp::full(t.shape(), 0, Dtype::boolean, t.device());
  if (has(a, "ignore_index")) ignored = t.eq(t.scalar_like(static_cast<double>(attr_int(a, "ignore_index", 0))));
  const Tensor safe = nnp::where(ignored, t.scalar_like(0), t);
  const Tensor picked = input.gather(1, safe.unsqueeze(1)).squeeze(1);
  Tensor w = weight ? weight->index_select(0, safe.reshape({-1})).reshape(t.shape()).to(input.dtype())
                    : nnp::full(t.shape(), 1, input.dtype(), input.device());
  w = nnp::where(ignored, w.scalar_like(0), w);
  const Tensor loss = -(picked * w);
  const std::string reduction = attr_string(a, "reduction", "mean");
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum();
  if (reduction == "mean") return loss.sum() / w.sum();
  invalid(std::string(op) + ": reduction '" + reduction + "' is not none, sum or mean");
}

Tensors negative_log_likelihood(const Tensors& in, const Node& a) {
  const char* op = "NegativeLogLikelihoodLoss";
  return {nll(need(in, 0, op), need(in, 1, op), given(in, 2) ? &in[2] : nullptr, a, op)};
}

Tensors softmax_cross_entropy(const Tensors& in, const Node& a) {
  const char* op = "SoftmaxCrossEntropyLoss";
  const Tensor& scores = need(in, 0, op);
  if (scores.ndim() < 2) invalid(std::string(op) + ": scores need [N, C, ...]");
  const Tensor log_prob = scores.log_softmax(1);
  return {nll(log_prob, need(in, 1, op), given(in, 2) ? &in[2] : nullptr, a, op), log_prob};
}

}  // namespace

void add_loss_ops(OpTable& t) {
  t.insert({{"NegativeLogLikelihoodLoss", negative_log_likelihood}, {"SoftmaxCrossEntropyLoss", softmax_cross_entropy}});
}

}  // namespace nnp::library::onnx
