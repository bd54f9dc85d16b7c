// nnp/functional/dropout.hpp - the dropouts beyond F::dropout (PyTorch's
// torch.nn.functional): whole channels (dropout1d/2d/3d, feature dropout)
// and the self-normalising alpha dropouts; the layers call these.
#pragma once

#include <cmath>
#include <nnp/detail/format.hpp>
#include <nnp/functional/linear.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <string>

namespace nnp::nn::functional {

namespace detail {

inline void check_probability(const char* op, double p) {
  if (!(p >= 0 && p <= 1))
    throw Error(NNP_INVALID_ARGUMENT,
                std::string(op) + ": dropout probability has to be between 0 and 1, but got " + format_float(p));
}

// The shape of a per-channel mask: the input's, with the `spatial` trailing
// dimensions set to 1 (so one draw zeroes a whole channel).
inline Shape channel_mask_shape(const char* op, const Tensor& x, int32_t spatial) {
  if (x.ndim() != spatial + 1 && x.ndim() != spatial + 2)
    throw Error(NNP_SHAPE_MISMATCH, std::string(op) + ": expected " + std::to_string(spatial + 1) +
                                        "-D (unbatched) or " + std::to_string(spatial + 2) +
                                        "-D (batched) input, got " + nnp::detail::shape_text(x.shape()));
  Shape shape = x.shape();
  for (int32_t i = 0; i < spatial; ++i) shape[shape.size() - 1 - static_cast<size_t>(i)] = 1;
  return shape;
}

// 1 where an element (or channel) is kept, with probability 1 - p.
inline Tensor keep_mask(const Shape& shape, double p, const Tensor& like) {
  return rand(shape, Dtype::f32, like.device()).ge(full({}, p, Dtype::f32, like.device()));
}

// Zeroes whole channels with probability p, scaling the rest by 1/(1 - p).
inline Tensor feature_dropout(const char* op, const Tensor& x, int32_t spatial, double p, bool training) {
  check_probability(op, p);
  const Shape shape = channel_mask_shape(op, x, spatial);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  return x * keep_mask(shape, p, x).to(x.dtype()) * (1.0 / (1.0 - p));
}

// Alpha dropout keeps the mean and variance of SELU activations: dropped
// elements take SELU's negative saturation, then an affine map restores the
// moments (PyTorch's _dropout_impl with alpha).
inline Tensor alpha_dropout(const char* op, const Tensor& x, const Shape& mask_shape, double p, bool training) {
  check_probability(op, p);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  constexpr double kAlpha = 1.7580993408473766;  // SELU's lambda * alpha
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  const Tensor keep = keep_mask(mask_shape, p, x).to(x.dtype());
  return x * keep * a + ((keep - 1.0) * (kAlpha * a) + kAlpha * a * p);
}

}  // namespace detail

struct FeatureDropoutFuncOptions {
  FeatureDropoutFuncOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(double, p);
  NNP_ARG(bool, training) = true;
};
using Dropout1dFuncOptions = FeatureDropoutFuncOptions;
using Dropout2dFuncOptions = FeatureDropoutFuncOptions;
using Dropout3dFuncOptions = FeatureDropoutFuncOptions;
using AlphaDropoutFuncOptions = FeatureDropoutFuncOptions;
using FeatureAlphaDropoutFuncOptions = FeatureDropoutFuncOptions;

// Zeroes whole channels of [N, C, L] or [C, L] (1d), [N, C, H, W] or
// [C, H, W] (2d), [N, C, D, H, W] or [C, D, H, W] (3d).
inline Tensor dropout1d(const Tensor& x, const Dropout1dFuncOptions& o = {}) {
  return detail::feature_dropout("dropout1d", x, 1, o.p(), o.training());
}
inline Tensor dropout2d(const Tensor& x, const Dropout2dFuncOptions& o = {}) {
  return detail::feature_dropout("dropout2d", x, 2, o.p(), o.training());
}
inline Tensor dropout3d(const Tensor& x, const Dropout3dFuncOptions& o = {}) {
  return detail::feature_dropout("dropout3d", x, 3, o.p(), o.training());
}
// Element-wise alpha dropout, and its per-channel form (any [N, C, ...]).
inline Tensor alpha_dropout(const Tensor& x, const AlphaDropoutFuncOptions& o = {}) {
  return detail::alpha_dropout("alpha_dropout", x, x.shape(), o.p(), o.training());
}
inline Tensor feature_alpha_dropout(const Tensor& x, const FeatureAlphaDropoutFuncOptions& o = {}) {
  if (x.ndim() < 2)
    throw Error(NNP_SHAPE_MISMATCH,
                "feature_alpha_dropout: expected [N, C, ...], got " + nnp::detail::shape_text(x.shape()));
  Shape shape(static_cast<size_t>(x.ndim()), 1);
  shape[0] = x.size(0);
  shape[1] = x.size(1);
  return detail::alpha_dropout("feature_alpha_dropout", x, shape, o.p(), o.training());
}

}  // namespace nnp::nn::functional
