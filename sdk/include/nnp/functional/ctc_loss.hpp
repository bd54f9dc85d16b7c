// nnp/functional/ctc_loss.hpp - ctc_loss (PyTorch's
// torch.nn.functional.ctc_loss): the negative log-likelihood of target
// sequences under every alignment with the input, by the forward (alpha)
// recursion of Graves et al. in log space. Composed of differentiable ops,
// one step per time step; the label bookkeeping is done on the host.
#pragma once

#include <algorithm>
#include <limits>
#include <nnp/functional/loss.hpp>
#include <vector>

namespace nnp::nn::functional {

struct CTCLossFuncOptions {
  NNP_ARG(int64_t, blank) = 0;
  NNP_ARG(std::string, reduction) = kMean;
  NNP_ARG(bool, zero_infinity) = false;
};

namespace detail {

// A finite stand-in for log(0): exp of it underflows to 0 while its
// gradients stay finite (a true -inf makes 0 * inf = NaN in the backward).
constexpr double kLogZero = -1e30;

inline Tensor log_sum_exp(const std::vector<Tensor>& terms) {
  Tensor top = terms[0].detach();
  for (size_t i = 1; i < terms.size(); ++i) top = top.maximum(terms[i].detach());
  Tensor sum = (terms[0] - top).exp();
  for (size_t i = 1; i < terms.size(); ++i) sum = sum + (terms[i] - top).exp();
  return top + sum.log();
}

inline std::vector<int64_t> host_integers(const char* what, const Tensor& t) {
  if (t.dtype() != Dtype::i64 && t.dtype() != Dtype::i32)
    throw Error(NNP_DTYPE_MISMATCH,
                std::string("ctc_loss: ") + what + " must be an integer tensor, got " + dtype_name(t.dtype()));
  return t.to(Dtype::i64).reshape({-1}).to_vector<int64_t>();
}

}  // namespace detail

// log_probs [T, N, C] (or [T, C]) of log_softmax outputs; targets [N, S]
// padded, or 1-D holding every target back to back; input_lengths and
// target_lengths [N]. mean divides each loss by its target length, then
// averages over the batch, as PyTorch's.
inline Tensor ctc_loss(Tensor log_probs, const Tensor& targets, const Tensor& input_lengths,
                       const Tensor& target_lengths, const CTCLossFuncOptions& options = {}) {
  nnp::detail::autocast_args("ctc_loss", {&log_probs});
  detail::check_reduction("ctc_loss", options.reduction());
  const bool batched = log_probs.ndim() == 3;
  if (log_probs.ndim() != 2 && !batched)
    throw Error(NNP_SHAPE_MISMATCH,
                "ctc_loss: log_probs must be [T, N, C] or [T, C], got " + detail::shape_text(log_probs.shape()));
  const Tensor lp_all = batched ? log_probs : log_probs.unsqueeze(1);
  const int64_t steps = lp_all.size(0), batch = lp_all.size(1), classes = lp_all.size(2), blank = options.blank();
  if (blank < 0 || blank >= classes)
    throw Error(NNP_INVALID_ARGUMENT, "ctc_loss: blank must be in 0 to " + std::to_string(classes - 1));
  const std::vector<int64_t> in_len = detail::host_integers("input_lengths", input_lengths);
  const std::vector<int64_t> tgt_len = detail::host_integers("target_lengths", target_lengths);
  const std::vector<int64_t> flat = detail::host_integers("targets", targets);
  if (static_cast<int64_t>(in_len.size()) != batch || static_cast<int64_t>(tgt_len.size()) != batch)
    throw Error(NNP_SHAPE_MISMATCH, "ctc_loss: input_lengths and target_lengths must have one entry per sequence (" +
                                        std::to_string(batch) + ")");
  // Each sequence's labels, from the padded or the concatenated form.
  const bool padded = batched && targets.ndim() == 2;
  const int64_t row = padded ? targets.size(1) : 0;
  std::vector<std::vector<int64_t>> labels(static_cast<size_t>(batch));
  int64_t offset = 0, longest = 0;
  for (int64_t n = 0; n < batch; ++n) {
    const int64_t len = tgt_len[static_cast<size_t>(n)], input = in_len[static_cast<size_t>(n)];
    if (input < 0 || input > steps)
      throw Error(NNP_INVALID_ARGUMENT, "ctc_loss: input length " + std::to_string(input) + " of sequence " +
                                            std::to_string(n) + " must be in 0 to " + std::to_string(steps));
    const int64_t start = padded ? n * row : offset;
    if (len < 0 || (padded && len > row) || start + len > static_cast<int64_t>(flat.size()))
      throw Error(NNP_INVALID_ARGUMENT, "ctc_loss: target length " + std::to_string(len) + " of sequence " +
                                            std::to_string(n) + " does not fit the targets given");
    for (int64_t i = 0; i < len; ++i) {
      const int64_t label = flat[static_cast<size_t>(start + i)];
      if (label < 0 || label >= classes || label == blank)
        throw Error(NNP_INVALID_ARGUMENT, "ctc_loss: target " + std::to_string(label) + " of sequence " +
                                              std::to_string(n) + " is not a class other than blank");
      labels[static_cast<size_t>(n)].push_back(label);
    }
    offset += len;
    longest = std::max(longest, len);
  }
  // The extended labels (blank, l1, blank, l2, ..., blank), where a step
  // may skip a blank, and where the recursion starts.
  const int64_t width = 2 * longest + 1;
  std::vector<int64_t> extended(static_cast<size_t>(batch * width), blank);
  std::vector<uint8_t> skip(static_cast<size_t>(batch * width), 0), start(static_cast<size_t>(batch * width), 0);
  std::vector<int64_t> last_blank(static_cast<size_t>(batch)), last_label(static_cast<size_t>(batch));
  for (int64_t n = 0; n < batch; ++n) {
    const std::vector<int64_t>& l = labels[static_cast<size_t>(n)];
    const int64_t len = static_cast<int64_t>(l.size());
    for (int64_t i = 0; i < len; ++i) extended[static_cast<size_t>(n * width + 2 * i + 1)] = l[static_cast<size_t>(i)];
    for (int64_t s = 2; s < width; ++s)
      skip[static_cast<size_t>(n * width + s)] = s % 2 == 1 && (s - 2) / 2 < len && s / 2 < len &&
                                                 l[static_cast<size_t>(s / 2)] != l[static_cast<size_t>(s / 2 - 1)];
    start[static_cast<size_t>(n * width)] = 1;
    if (len > 0 && in_len[static_cast<size_t>(n)] > 0) start[static_cast<size_t>(n * width + 1)] = 1;
    last_blank[static_cast<size_t>(n)] = 2 * len;
    last_label[static_cast<size_t>(n)] = len > 0 ? 2 * len - 1 : 2 * len;  // len 0: the blank again
  }
  const Device device = log_probs.device();
  const Tensor ext = from_vector(extended, {batch, width}, device);
  const Tensor lp = lp_all.gather(2, ext.unsqueeze(0).expand({steps, batch, width}));  // [T, N, L]
  const Tensor log_zero = full({}, detail::kLogZero, lp.dtype(), device);
  const Tensor skip_mask = from_vector(skip, {batch, width}, device).to(Dtype::boolean);
  Tensor alpha = where(from_vector(start, {batch, width}, device).to(Dtype::boolean),
                       steps > 0 ? lp.select(0, 0) : zeros({batch, width}, lp.dtype(), device), log_zero);
  std::vector<uint8_t> no_input(static_cast<size_t>(batch));
  for (int64_t n = 0; n < batch; ++n) no_input[static_cast<size_t>(n)] = in_len[static_cast<size_t>(n)] == 0;
  const Tensor lengths = from_vector(in_len, {batch, 1}, device);
  auto shifted = [&](const Tensor& a, int64_t by) {
    if (by >= width) return log_zero.expand({batch, width});
    return cat({log_zero.expand({batch, by}), a.narrow(1, 0, width - by)}, 1);
  };
  for (int64_t t = 1; t < steps; ++t) {
    const Tensor next = detail::log_sum_exp({alpha, shifted(alpha, 1), where(skip_mask, shifted(alpha, 2), log_zero)}) +
                        lp.select(0, t);
    alpha = where(lengths.gt(full({}, static_cast<double>(t), Dtype::i64, device)), next, alpha);
  }
  const Tensor ends_blank = alpha.gather(1, from_vector(last_blank, {batch, 1}, device)).reshape({batch});
  Tensor ends_label = alpha.gather(1, from_vector(last_label, {batch, 1}, device)).reshape({batch});
  std::vector<uint8_t> empty_target(static_cast<size_t>(batch));
  for (int64_t n = 0; n < batch; ++n) empty_target[static_cast<size_t>(n)] = labels[static_cast<size_t>(n)].empty();
  ends_label = where(from_vector(empty_target, {batch}, device).to(Dtype::boolean), log_zero, ends_label);
  Tensor loss = detail::log_sum_exp({ends_blank, ends_label}).neg();
  // An empty input aligns with the empty target only.
  const Tensor empty_input = from_vector(no_input, {batch}, device).to(Dtype::boolean);
  loss = where(empty_input,
               where(from_vector(empty_target, {batch}, device).to(Dtype::boolean), loss.scalar_like(0),
                     loss.scalar_like(-detail::kLogZero)),
               loss);
  const Tensor impossible = loss.ge(loss.scalar_like(-detail::kLogZero / 2));
  loss = where(impossible, loss.scalar_like(options.zero_infinity() ? 0.0 : std::numeric_limits<double>::infinity()),
               loss);
  if (options.reduction() == kMean) {
    std::vector<double> divisor(static_cast<size_t>(batch));
    for (int64_t n = 0; n < batch; ++n)
      divisor[static_cast<size_t>(n)] = static_cast<double>(std::max<int64_t>(tgt_len[static_cast<size_t>(n)], 1));
    return (loss / from_vector(divisor, {batch}, device).to(loss.dtype())).mean();
  }
  if (options.reduction() == kSum) return loss.sum();
  return batched ? loss : loss.reshape({});
}

}  // namespace nnp::nn::functional
