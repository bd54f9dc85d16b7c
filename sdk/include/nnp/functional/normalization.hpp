// nnp/functional/normalization.hpp - batch_norm, layer_norm and normalize as
// functions (PyTorch's torch.nn.functional); the norm layers call these.
#pragma once

#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn::functional {

namespace detail {
using nnp::detail::shape_text;
}  // namespace detail

struct BatchNormFuncOptions {
  NNP_ARG(Tensor, weight);
  NNP_ARG(Tensor, bias);
  NNP_ARG(bool, training) = false;
  // The running statistics' update factor while training.
  NNP_ARG(double, momentum) = 0.1;
  NNP_ARG(double, eps) = 1e-5;
};

// Normalizes over every dimension but the channels (dim 1): with the batch's
// statistics while training (updating running_mean and running_var when
// given, the variance unbiased as PyTorch's), with the running ones otherwise.
inline Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                         const BatchNormFuncOptions& options = {}) {
  const int32_t ndim = x.ndim();
  if (ndim < 2)
    throw Error(NNP_SHAPE_MISMATCH, "batch_norm: expected [N, C, ...], got " + detail::shape_text(x.shape()));
  const int64_t features = x.size(1);
  for (const Tensor* stat : {&running_mean, &running_var, &options.weight(), &options.bias()})
    if (stat->defined() && stat->numel() != features)
      throw Error(NNP_SHAPE_MISMATCH, "batch_norm: per-channel tensors must have " + std::to_string(features) +
                                          " elements (the input's dimension 1), got " +
                                          detail::shape_text(stat->shape()));
  std::vector<int32_t> dims = {0};
  Shape stat_shape(static_cast<size_t>(ndim), 1);
  stat_shape[1] = features;
  for (int32_t d = 2; d < ndim; ++d) dims.push_back(d);
  Tensor mean, var;
  if (options.training() || !running_mean.defined() || !running_var.defined()) {
    const int64_t count = features > 0 ? x.numel() / features : 0;
    if (options.training() && count <= 1)
      throw Error(NNP_INVALID_ARGUMENT,
                  "batch_norm: expected more than 1 value per channel when training, got input size " +
                      detail::shape_text(x.shape()));
    mean = x.mean(dims);
    var = x.var(dims, 0);
    if (options.training() && running_mean.defined() && running_var.defined()) {
      NoGradGuard no_grad;
      const double m = options.momentum();
      Tensor unbiased = var.detach() * (static_cast<double>(count) / static_cast<double>(count - 1));
      Tensor(running_mean).copy_(running_mean * (1 - m) + mean.detach().to(running_mean.dtype()) * m);
      Tensor(running_var).copy_(running_var * (1 - m) + unbiased.to(running_var.dtype()) * m);
    }
  } else {
    mean = running_mean;
    var = running_var;
  }
  Tensor y = (x - mean.reshape(stat_shape)) * (var.reshape(stat_shape) + options.eps()).rsqrt();
  if (options.weight().defined()) y = y * options.weight().reshape(stat_shape);
  if (options.bias().defined()) y = y + options.bias().reshape(stat_shape);
  return y;
}

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit, as libtorch's
      : normalized_shape_(std::move(normalized_shape)) {}
  NNP_ARG(std::vector<int64_t>, normalized_shape);
  NNP_ARG(Tensor, weight);
  NNP_ARG(Tensor, bias);
  NNP_ARG(double, eps) = 1e-5;
};

// Normalizes over the trailing normalized_shape dimensions.
inline Tensor layer_norm(const Tensor& x, const LayerNormFuncOptions& options) {
  const Shape& normalized = options.normalized_shape();
  const int32_t k = static_cast<int32_t>(normalized.size());
  if (k == 0) throw Error(NNP_INVALID_ARGUMENT, "layer_norm: normalized_shape is empty");
  const Shape shape = x.shape();
  bool fits = x.ndim() >= k;
  for (int32_t i = 0; fits && i < k; ++i)
    fits = shape[shape.size() - static_cast<size_t>(k) + static_cast<size_t>(i)] == normalized[static_cast<size_t>(i)];
  if (!fits)
    throw Error(NNP_SHAPE_MISMATCH, "LayerNorm: normalized_shape " + detail::shape_text(normalized) +
                                        " does not match the trailing dimensions of input " +
                                        detail::shape_text(shape));
  // The backend's fused kernel (nnp_api.layer_norm_fused, 1.18) where one
  // applies (f32, no gradient wanted), else the composition.
  const Tensor& weight = options.weight();
  const Tensor& bias = options.bias();
  if (Tensor fused = Tensor::call(api().layer_norm_fused, x.get(), weight.defined() ? weight.get() : nullptr,
                                  bias.defined() ? bias.get() : nullptr, k, options.eps());
      fused.defined())
    return fused;
  std::vector<int32_t> dims;
  for (int32_t i = 0; i < k; ++i) dims.push_back(x.ndim() - k + i);
  Tensor y = (x - x.mean(dims, true)) * (x.var(dims, 0, true) + options.eps()).rsqrt();
  if (options.weight().defined()) y = y * options.weight();
  if (options.bias().defined()) y = y + options.bias();
  return y;
}

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, num_groups);
  NNP_ARG(Tensor, weight);
  NNP_ARG(Tensor, bias);
  NNP_ARG(double, eps) = 1e-5;
};

// Normalizes [N, C, *] over each group of C / num_groups channels and the
// trailing dimensions, then scales and shifts per channel.
inline Tensor group_norm(const Tensor& x, const GroupNormFuncOptions& options) {
  const int64_t groups = options.num_groups();
  if (x.ndim() < 2 || groups <= 0 || x.size(1) % groups != 0)
    throw Error(NNP_SHAPE_MISMATCH, "group_norm: expected [N, C, *] with C divisible by num_groups = " +
                                        std::to_string(groups) + ", got " + detail::shape_text(x.shape()));
  const Shape shape = x.shape();
  const Tensor grouped = x.reshape({x.size(0), groups, -1});
  Tensor y = ((grouped - grouped.mean({2}, true)) * (grouped.var({2}, 0, true) + options.eps()).rsqrt()).reshape(shape);
  Shape channel(shape.size(), 1);
  channel[1] = x.size(1);
  if (options.weight().defined()) y = y * options.weight().reshape(channel);
  if (options.bias().defined()) y = y + options.bias().reshape(channel);
  return y;
}

struct InstanceNormFuncOptions {
  NNP_ARG(Tensor, running_mean);
  NNP_ARG(Tensor, running_var);
  NNP_ARG(Tensor, weight);
  NNP_ARG(Tensor, bias);
  NNP_ARG(bool, use_input_stats) = true;
  NNP_ARG(double, momentum) = 0.1;
  NNP_ARG(double, eps) = 1e-5;
};

// Normalizes [N, C, *] over the trailing dimensions of each sample and
// channel. With running statistics and use_input_stats, they move toward
// the batch's mean over the samples, as PyTorch's (batch norm over
// [1, N * C, *]); without use_input_stats they are used instead.
inline Tensor instance_norm(const Tensor& x, const InstanceNormFuncOptions& o = {}) {
  if (x.ndim() < 3)
    throw Error(NNP_SHAPE_MISMATCH, "instance_norm: expected [N, C, *] with at least one dimension after C, got " +
                                        detail::shape_text(x.shape()));
  const int64_t n = x.size(0), c = x.size(1);
  const Tensor &rm = o.running_mean(), &rv = o.running_var();
  Shape folded = x.shape();
  folded[0] = 1;
  folded[1] = n * c;
  Tensor repeated_mean, repeated_var;
  if (rm.defined()) repeated_mean = rm.reshape({1, c}).expand({n, c}).contiguous().reshape({n * c});
  if (rv.defined()) repeated_var = rv.reshape({1, c}).expand({n, c}).contiguous().reshape({n * c});
  Tensor y = batch_norm(x.reshape(folded), repeated_mean, repeated_var,
                        BatchNormFuncOptions().training(o.use_input_stats()).momentum(o.momentum()).eps(o.eps()))
                 .reshape(x.shape());
  if (o.use_input_stats()) {
    NoGradGuard no_grad;
    if (rm.defined()) Tensor(rm).copy_(repeated_mean.reshape({n, c}).mean({0}));
    if (rv.defined()) Tensor(rv).copy_(repeated_var.reshape({n, c}).mean({0}));
  }
  Shape channel(static_cast<size_t>(x.ndim()), 1);
  channel[1] = c;
  if (o.weight().defined()) y = y * o.weight().reshape(channel);
  if (o.bias().defined()) y = y + o.bias().reshape(channel);
  return y;
}

struct LocalResponseNormFuncOptions {
  LocalResponseNormFuncOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, size);
  NNP_ARG(double, alpha) = 1e-4;
  NNP_ARG(double, beta) = 0.75;
  NNP_ARG(double, k) = 1.0;
};

// x / (k + alpha / size * sum of x^2 over `size` neighbouring channels)^beta,
// the window from c - size/2 to c + (size - 1)/2, zero outside.
inline Tensor local_response_norm(const Tensor& x, const LocalResponseNormFuncOptions& o) {
  if (x.ndim() < 3)
    throw Error(NNP_SHAPE_MISMATCH,
                "local_response_norm: expected 3 or more dimensions, got " + detail::shape_text(x.shape()));
  if (o.size() <= 0) throw Error(NNP_INVALID_ARGUMENT, "local_response_norm: size must be > 0");
  const int64_t c = x.size(1), before = o.size() / 2, after = (o.size() - 1) / 2;
  const Tensor squares = x * x;
  Shape pad_shape = x.shape();
  std::vector<Tensor> parts;
  if (before > 0) {
    pad_shape[1] = before;
    parts.push_back(zeros(pad_shape, x.dtype(), x.device()));
  }
  parts.push_back(squares);
  if (after > 0) {
    pad_shape[1] = after;
    parts.push_back(zeros(pad_shape, x.dtype(), x.device()));
  }
  const Tensor padded = parts.size() == 1 ? squares : cat(parts, 1);
  Tensor window = padded.narrow(1, 0, c);
  for (int64_t i = 1; i < o.size(); ++i) window = window + padded.narrow(1, i, c);
  return x / (window * (o.alpha() / static_cast<double>(o.size())) + o.k()).pow(o.beta());
}

struct NormalizeFuncOptions {
  NNP_ARG(double, p) = 2.0;
  NNP_ARG(int64_t, dim) = 1;
  NNP_ARG(double, eps) = 1e-12;
};

// x / max(||x||_p along dim, eps). A zero vector stays zero with a zero
// gradient through its norm, as PyTorch's.
inline Tensor normalize(const Tensor& x, const NormalizeFuncOptions& options = {}) {
  const double p = options.p();
  if (!(p > 0)) throw Error(NNP_INVALID_ARGUMENT, "normalize: p must be positive, got " + format_float(p));
  const int32_t dim = static_cast<int32_t>(options.dim());
  Tensor powered = x.abs().pow(p).sum(dim, true);
  Tensor nonzero = powered.gt(powered.scalar_like(0));
  // The root only where it is differentiable; 0 elsewhere.
  Tensor safe = where(nonzero, powered, powered.scalar_like(1));
  Tensor norm = where(nonzero, safe.pow(1.0 / p), powered.scalar_like(0));
  return x / norm.maximum(norm.scalar_like(options.eps()));
}

}  // namespace nnp::nn::functional
