// nnp/functional/linear.hpp - linear, dropout, embedding and one_hot as
// functions (PyTorch's torch.nn.functional); the layers call these.
#pragma once

#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>

namespace nnp::nn::functional {

// y = x W^T + b; bias may be undefined.
inline Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}) {
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
};
// Rows of weight picked by integer indices; the padding_idx row is returned
// as it is but gets no gradient (PyTorch's rule).
inline Tensor embedding(const Tensor& indices, const Tensor& weight, const EmbeddingFuncOptions& options = {}) {
  if (indices.dtype() != Dtype::i64 && indices.dtype() != Dtype::i32)
    throw Error(NNP_DTYPE_MISMATCH,
                "embedding: indices must be i64 or i32, got " + std::string(dtype_name(indices.dtype())));
  if (weight.ndim() != 2) throw Error(NNP_SHAPE_MISMATCH, "embedding: weight must be [num_embeddings, embedding_dim]");
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.size(1));
  Tensor rows = weight.index_select(0, indices.reshape({-1}));
  if (options.padding_idx()) {
    int64_t padding = *options.padding_idx();
    if (padding < -weight.size(0) || padding >= weight.size(0))
      throw Error(NNP_INVALID_ARGUMENT, "embedding: padding_idx must be within num_embeddings");
    if (padding < 0) padding += weight.size(0);
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
