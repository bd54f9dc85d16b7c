// nnp/functional/embedding_bag.hpp - embedding_bag (PyTorch's
// F.embedding_bag): the sums, means or maxima of bags of embeddings without
// the [bags, items, dim] tensor in between. Bags are the rows of a 2-D input,
// or runs of a 1-D input starting at `offsets`; padding_idx entries belong to
// no bag (a mean does not count them; an empty bag is zeros).
#pragma once

#include <nnp/functional/linear.hpp>

namespace nnp::nn::functional {

inline constexpr const char* kMax = "max";

struct EmbeddingBagFuncOptions {
  NNP_ARG(Tensor, offsets);
  NNP_ARG(std::optional<double>, max_norm);
  NNP_ARG(double, norm_type) = 2.0;
  NNP_ARG(bool, scale_grad_by_freq) = false;
  NNP_ARG(std::string, mode) = kMean;  // kSum, kMean or kMax
  NNP_ARG(bool, sparse) = false;
  NNP_ARG(Tensor, per_sample_weights);  // mode kSum only
  NNP_ARG(bool, include_last_offset) = false;
  NNP_ARG(std::optional<int64_t>, padding_idx);
};

namespace detail {

// The bag of each entry of the flattened input (-1: in none), and the count.
inline std::pair<std::vector<int64_t>, int64_t> bags_of(const Tensor& input, const EmbeddingBagFuncOptions& o) {
  const int64_t total = input.numel();
  std::vector<int64_t> bag(static_cast<size_t>(total), -1);
  if (input.ndim() == 2) {
    if (o.offsets().defined())
      throw Error(NNP_INVALID_ARGUMENT,
                  "embedding_bag: if input is 2-D, then offsets has to be None, as input is "
                  "treated as a mini-batch of fixed length sequences");
    const int64_t per_bag = input.size(1);
    for (int64_t i = 0; i < total; ++i) bag[static_cast<size_t>(i)] = i / per_bag;
    return {bag, input.size(0)};
  }
  if (input.ndim() != 1)
    throw Error(NNP_SHAPE_MISMATCH, "embedding_bag: input has to be 1-D or 2-D, got " + shape_text(input.shape()));
  if (!o.offsets().defined() || o.offsets().ndim() != 1)
    throw Error(NNP_INVALID_ARGUMENT, "embedding_bag: offsets has to be a 1-D tensor when input is 1-D");
  if (o.offsets().dtype() != Dtype::i64 && o.offsets().dtype() != Dtype::i32)
    throw Error(NNP_DTYPE_MISMATCH, "embedding_bag: offsets must be i64 or i32");
  const std::vector<int64_t> starts = o.offsets().to(Device::cpu(), Dtype::i64).contiguous().to_vector<int64_t>();
  if (starts.empty() || (o.include_last_offset() && starts.size() < 2)) return {bag, 0};
  if (starts[0] != 0)
    throw Error(NNP_INVALID_ARGUMENT,
                "embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the "
                "mini-batch has to start from position 0");
  const int64_t bags = static_cast<int64_t>(starts.size()) - (o.include_last_offset() ? 1 : 0);
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t begin = starts[static_cast<size_t>(b)];
    const int64_t end = b + 1 < static_cast<int64_t>(starts.size()) ? starts[static_cast<size_t>(b + 1)] : total;
    if (end < begin || end > total)
      throw Error(NNP_INVALID_ARGUMENT, "embedding_bag: offsets must be non-decreasing and at most the input's " +
                                            std::to_string(total) + " entries, got " + shape_text(starts));
    for (int64_t i = begin; i < end; ++i) bag[static_cast<size_t>(i)] = b;
  }
  return {bag, bags};
}

}  // namespace detail

// [bags, embedding_dim].
inline Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o = {}) {
  detail::check_indices("embedding_bag", input, weight);
  const std::string& mode = o.mode();
  if (mode != kSum && mode != kMean && mode != kMax)
    throw Error(NNP_INVALID_ARGUMENT, "embedding_bag: mode has to be one of sum, mean or max, got '" + mode + "'");
  if (o.sparse()) throw Error(NNP_UNIMPLEMENTED, "embedding_bag: sparse gradients are not supported; use sparse=false");
  const Tensor& psw = o.per_sample_weights();
  if (psw.defined() && mode != kSum)
    throw Error(NNP_INVALID_ARGUMENT,
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                "supported for mode='sum' (got mode='" +
                    mode + "'). Please open a feature request on GitHub.");
  if (psw.defined() && psw.shape() != input.shape())
    throw Error(NNP_SHAPE_MISMATCH, "embedding_bag: per_sample_weights " + shape_text(psw.shape()) +
                                        " must have the input's shape " + shape_text(input.shape()));
  const std::vector<int64_t> index = detail::host_indices("embedding_bag", input, weight.size(0));
  auto [bag, bags] = detail::bags_of(input, o);
  const int64_t padding = detail::padding_row("embedding_bag", o.padding_idx(), weight.size(0));
  if (o.max_norm()) detail::renorm_rows(weight, index, *o.max_norm(), o.norm_type());

  // The entries that count, their bags, and how many each bag holds.
  std::vector<int64_t> kept, target, count(static_cast<size_t>(bags), 0);
  for (size_t i = 0; i < index.size(); ++i)
    if (bag[i] >= 0 && index[i] != padding) {
      kept.push_back(static_cast<int64_t>(i));
      target.push_back(bag[i]);
      ++count[static_cast<size_t>(bag[i])];
    }
  const int64_t dim = weight.size(1);
  Tensor out = zeros({bags, dim}, weight.dtype(), weight.device());
  if (kept.empty()) return out + weight.sum() * 0.0;  // every bag empty: zeros, still in the graph
  const Tensor positions = from_vector(kept, weight.device());
  Tensor rows = weight.index_select(0, input.reshape({-1}).index_select(0, positions));
  if (o.scale_grad_by_freq()) {
    std::vector<int64_t> picked;
    for (int64_t i : kept) picked.push_back(index[static_cast<size_t>(i)]);
    rows = detail::scaled_by_frequency(rows, picked);
  }
  if (psw.defined()) rows = rows * psw.reshape({-1}).index_select(0, positions).reshape({-1, 1});
  if (mode == kMax) {
    // One maximum per non-empty bag; its gradient goes to the first maximum.
    std::vector<Tensor> maxima;
    size_t at = 0;
    for (int64_t b = 0; b < bags; ++b) {
      const int64_t n = count[static_cast<size_t>(b)];
      if (n == 0) {
        maxima.push_back(zeros({1, dim}, weight.dtype(), weight.device()));
        continue;
      }
      const Tensor members = rows.slice(0, static_cast<int64_t>(at), static_cast<int64_t>(at) + n);
      maxima.push_back(members.gather(0, members.argmax(0, true)));
      at += static_cast<size_t>(n);
    }
    return cat(maxima, 0);
  }
  const Tensor into = from_vector(target, weight.device()).reshape({-1, 1}).expand({rows.size(0), dim});
  out = out.scatter_add(0, into, rows);
  if (mode == kSum) return out;
  std::vector<double> divisor;
  for (int64_t n : count) divisor.push_back(static_cast<double>(std::max<int64_t>(n, 1)));
  return out / from_vector(divisor, weight.device()).to(weight.dtype()).reshape({-1, 1});
}

}  // namespace nnp::nn::functional
