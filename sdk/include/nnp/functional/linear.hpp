// nnp/functional/linear.hpp - linear, dropout, embedding and one_hot as
// functions (PyTorch's torch.nn.functional); the layers call these.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <nnp/autocast.hpp>
#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>

namespace nnp::nn::functional {

using nnp::detail::shape_text;

// y = x W^T + b; bias may be undefined.
inline Tensor linear(Tensor input, Tensor weight, Tensor bias = {}) {
  nnp::detail::autocast_args("linear", {&input, &weight, &bias});
  Tensor y = input.matmul(weight.t());
  return bias.defined() ? y + bias : y;
}

// y = x1^T W x2 + b for each output feature: x1 [*, in1], x2 [*, in2],
// weight [out, in1, in2], bias [out] or undefined.
inline Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight, const Tensor& bias = {}) {
  if (weight.ndim() != 3 || x1.ndim() < 1 || x2.ndim() != x1.ndim() || x1.size(-1) != weight.size(1) ||
      x2.size(-1) != weight.size(2))
    throw Error(NNP_SHAPE_MISMATCH,
                "bilinear: expected x1 [*, " + std::to_string(weight.ndim() == 3 ? weight.size(1) : 0) +
                    "] and x2 [*, " + std::to_string(weight.ndim() == 3 ? weight.size(2) : 0) + "] for weight " +
                    nnp::detail::shape_text(weight.shape()) + ", got " + nnp::detail::shape_text(x1.shape()) + " and " +
                    nnp::detail::shape_text(x2.shape()));
  const int64_t out = weight.size(0), in1 = weight.size(1), in2 = weight.size(2);
  Shape lead = x1.shape();
  lead.pop_back();
  // x1 [B, in1] @ W as [in1, out * in2], then each output's row dotted with x2.
  const Tensor projected =
      x1.reshape({-1, in1}).matmul(weight.permute({1, 0, 2}).reshape({in1, out * in2})).reshape({-1, out, in2});
  Tensor y = (projected * x2.reshape({-1, 1, in2})).sum({2});
  if (bias.defined()) y = y + bias;
  Shape result = lead;
  result.push_back(out);
  return y.reshape(result);
}

struct DropoutFuncOptions {
  NNP_ARG(double, p) = 0.5;
  NNP_ARG(bool, training) = true;
};
// Zeroes each element with probability p and scales the rest by 1/(1 - p)
// while training; the identity otherwise.
inline Tensor dropout(const Tensor& x, const DropoutFuncOptions& options = {}) {
  const double p = options.p();
  if (p < 0 || p > 1)
    throw Error(NNP_INVALID_ARGUMENT, "dropout probability has to be between 0 and 1, but got " + format_float(p));
  if (!options.training() || p == 0) return x;
  if (p == 1) return x * 0.0;
  Tensor keep = rand(x.shape(), Dtype::f32, x.device()).ge(full({}, p, Dtype::f32, x.device()));
  return where(keep, x * (1.0 / (1.0 - p)), x.scalar_like(0));
}

struct EmbeddingFuncOptions {
  NNP_ARG(std::optional<int64_t>, padding_idx);
  NNP_ARG(std::optional<double>, max_norm);
  NNP_ARG(double, norm_type) = 2.0;
  NNP_ARG(bool, scale_grad_by_freq) = false;
  NNP_ARG(bool, sparse) = false;
};

namespace detail {

inline void check_indices(const char* who, const Tensor& indices, const Tensor& weight) {
  if (indices.dtype() != Dtype::i64 && indices.dtype() != Dtype::i32)
    throw Error(NNP_DTYPE_MISMATCH,
                std::string(who) + ": indices must be i64 or i32, got " + dtype_name(indices.dtype()));
  if (weight.ndim() != 2)
    throw Error(NNP_SHAPE_MISMATCH, std::string(who) + ": weight must be [num_embeddings, embedding_dim], got " +
                                        shape_text(weight.shape()));
}

inline int64_t padding_row(const char* who, const std::optional<int64_t>& padding_idx, int64_t rows) {
  if (!padding_idx) return -1;
  const int64_t padding = *padding_idx;
  if (padding < -rows || padding >= rows)
    throw Error(NNP_INVALID_ARGUMENT, std::string(who) + ": padding_idx must be within num_embeddings");
  return padding < 0 ? padding + rows : padding;
}

// max_norm: the rows that `indices` pick are scaled, in place and outside
// autograd, to a norm of at most max_norm (PyTorch's embedding_renorm_).
inline void renorm_rows(const Tensor& weight, const std::vector<int64_t>& indices, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  std::vector<int64_t> unique = indices;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  for (int64_t i : unique) {
    Tensor row = weight.slice(0, i, i + 1);
    const double norm = std::pow(row.abs().pow(norm_type).sum().item<double>(), 1.0 / norm_type);
    if (norm > max_norm) row.mul_(max_norm / (norm + 1e-7));
  }
}

// scale_grad_by_freq: the same rows, with the gradient of each divided by
// how often its index occurs in the batch.
inline Tensor scaled_by_frequency(const Tensor& rows, const std::vector<int64_t>& indices) {
  std::map<int64_t, int64_t> count;
  for (int64_t i : indices) ++count[i];
  std::vector<double> scale;
  scale.reserve(indices.size());
  for (int64_t i : indices) scale.push_back(1.0 / static_cast<double>(count[i]));
  const Tensor s = from_vector(scale, rows.device()).to(rows.dtype()).reshape({-1, 1});
  return rows * s + (rows * (1.0 - s)).detach();
}

inline std::vector<int64_t> host_indices(const char* who, const Tensor& indices, int64_t rows) {
  std::vector<int64_t> host = indices.to(Device::cpu(), Dtype::i64).contiguous().to_vector<int64_t>();
  for (int64_t i : host)
    if (i < 0 || i >= rows)
      throw Error(NNP_INVALID_ARGUMENT, std::string(who) + ": index " + std::to_string(i) + " is out of range for " +
                                            std::to_string(rows) + " embeddings");
  return host;
}

}  // namespace detail

// Rows of weight picked by integer indices; the padding_idx row is returned
// as it is but gets no gradient (PyTorch's rule).
inline Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& options = {}) {
  detail::check_indices("embedding", indices, weight);
  if (options.sparse())
    throw Error(NNP_UNIMPLEMENTED, "embedding: sparse gradients are not supported; use sparse=false");
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.size(1));
  const bool on_host = options.max_norm() || options.scale_grad_by_freq();
  const std::vector<int64_t> host =
      on_host ? detail::host_indices("embedding", indices, weight.size(0)) : std::vector<int64_t>();
  if (options.max_norm()) detail::renorm_rows(weight, host, *options.max_norm(), options.norm_type());
  Tensor rows = weight.index_select(0, indices.reshape({-1}));
  if (options.scale_grad_by_freq()) rows = detail::scaled_by_frequency(rows, host);
  const int64_t padding = detail::padding_row("embedding", options.padding_idx(), weight.size(0));
  if (padding >= 0) {
    Tensor learns = indices.reshape({-1, 1}).ne(indices.scalar_like(static_cast<double>(padding)));
    rows = where(learns, rows, rows.detach());
  }
  return rows.reshape(out_shape);
}

// Class indices to i64 rows of zeros with a one at the index; num_classes -1
// takes the largest index + 1.
inline Tensor one_hot(const Tensor& indices, int64_t num_classes = -1) {
  if (indices.dtype() != Dtype::i64)
    throw Error(NNP_DTYPE_MISMATCH,
                "one_hot: the indices must be an i64 tensor, got " + std::string(dtype_name(indices.dtype())));
  if (indices.numel() == 0 && num_classes < 0)
    throw Error(NNP_INVALID_ARGUMENT, "one_hot: can not infer the total number of classes from an empty tensor");
  if (indices.numel() > 0) {
    if (indices.amin().item<int64_t>() < 0)
      throw Error(NNP_INVALID_ARGUMENT, "one_hot: class values must be non-negative");
    const int64_t largest = indices.amax().item<int64_t>();
    if (num_classes < 0) num_classes = largest + 1;
    if (largest >= num_classes)
      throw Error(NNP_INVALID_ARGUMENT, "one_hot: class values must be smaller than num_classes");
  }
  Tensor classes = arange(0, static_cast<double>(num_classes), 1, Dtype::i64, indices.device());
  return indices.unsqueeze(-1).eq(classes).to(Dtype::i64);
}

}  // namespace nnp::nn::functional
