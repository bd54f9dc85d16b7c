// nnp/functional/upsampling.hpp - interpolate (PyTorch's F.interpolate):
// nearest, nearest-exact, linear, bilinear, bicubic and trilinear resizing
// of [N, C, *sizes]. Every mode is separable, so each spatial dimension is
// resampled in turn: each output position is a weighted sum of 1, 2 or 4
// input positions (index_select and multiply-add, differentiable), with
// PyTorch's source-index rules (align_corners, half-pixel centres, the
// cubic kernel with A = -0.75 and clamped borders).
#pragma once

#include <cmath>
#include <nnp/detail/format.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnp::nn::functional {

inline constexpr const char* kNearest = "nearest";
inline constexpr const char* kNearestExact = "nearest-exact";
inline constexpr const char* kLinear = "linear";
inline constexpr const char* kBilinear = "bilinear";
inline constexpr const char* kBicubic = "bicubic";
inline constexpr const char* kTrilinear = "trilinear";

struct InterpolateFuncOptions {
  NNP_ARG(std::optional<std::vector<int64_t>>, size);
  NNP_ARG(std::optional<std::vector<double>>, scale_factor);
  NNP_ARG(std::string, mode) = kNearest;
  NNP_ARG(std::optional<bool>, align_corners);
  NNP_ARG(std::optional<bool>, recompute_scale_factor);
};

namespace detail {

// The taps of one output position: input indices and their weights.
struct Taps {
  std::vector<std::vector<int64_t>> index;  // [taps][out]
  std::vector<std::vector<double>> weight;  // [taps][out]
};

inline Taps resampling_taps(const std::string& mode, int64_t in, int64_t out, bool align_corners,
                            std::optional<double> scale_factor) {
  // PyTorch's scale: input size per output size, or 1 / scale_factor when
  // one was given and is not recomputed.
  const double ratio = scale_factor ? 1.0 / *scale_factor : static_cast<double>(in) / static_cast<double>(out);
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  Taps t;
  if (mode == kNearest || mode == kNearestExact) {
    t.index.assign(1, {});
    t.weight.assign(1, std::vector<double>(static_cast<size_t>(out), 1.0));
    for (int64_t o = 0; o < out; ++o) {
      const double src = mode == kNearest ? std::floor(static_cast<double>(o) * ratio)
                                          : std::floor((static_cast<double>(o) + 0.5) * ratio);
      t.index[0].push_back(std::min(static_cast<int64_t>(src), in - 1));
    }
    return t;
  }
  const bool cubic = mode == kBicubic;
  const size_t taps = cubic ? 4 : 2;
  t.index.assign(taps, {});
  t.weight.assign(taps, {});
  const double corner_scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  for (int64_t o = 0; o < out; ++o) {
    double src = align_corners ? corner_scale * static_cast<double>(o) : ratio * (static_cast<double>(o) + 0.5) - 0.5;
    if (!cubic && !align_corners && src < 0) src = 0;
    const double floor = std::floor(src);
    const int64_t i = static_cast<int64_t>(floor);
    const double f = src - floor;
    if (!cubic) {
      t.index[0].push_back(clamp(i));
      t.index[1].push_back(clamp(i + 1));
      t.weight[0].push_back(1 - f);
      t.weight[1].push_back(f);
      continue;
    }
    constexpr double A = -0.75;
    auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };       // |x| <= 1
    auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
    const double w[4] = {far(f + 1), near(f), near(1 - f), far(2 - f)};
    for (size_t k = 0; k < 4; ++k) {
      t.index[k].push_back(clamp(i - 1 + static_cast<int64_t>(k)));
      t.weight[k].push_back(w[k]);
    }
  }
  return t;
}

// x resampled along dim to `out` positions.
inline Tensor resample_dim(const Tensor& x, int32_t dim, int64_t out, const std::string& mode, bool align_corners,
                           std::optional<double> scale_factor) {
  const Taps t = resampling_taps(mode, x.size(dim), out, align_corners, scale_factor);
  Shape along(static_cast<size_t>(x.ndim()), 1);
  along[static_cast<size_t>(dim)] = out;
  Tensor y;
  for (size_t k = 0; k < t.index.size(); ++k) {
    Tensor picked = x.index_select(dim, from_vector(t.index[k], x.device()));
    if (mode != kNearest && mode != kNearestExact)
      picked = picked * from_vector(t.weight[k], x.device()).to(x.dtype()).reshape(along);
    y = y.defined() ? y + picked : picked;
  }
  return y;
}

}  // namespace detail

inline Tensor interpolate(const Tensor& x, const InterpolateFuncOptions& o = {}) {
  const std::string& mode = o.mode();
  const int32_t dims = x.ndim() - 2;
  const bool interpolating = mode == kLinear || mode == kBilinear || mode == kBicubic || mode == kTrilinear;
  if (!interpolating && mode != kNearest && mode != kNearestExact)
    throw Error(NNP_INVALID_ARGUMENT,
                "interpolate: mode must be nearest, nearest-exact, linear, bilinear, bicubic "
                "or trilinear, got '" +
                    mode + "'");
  if (dims < 1 || dims > 3)
    throw Error(NNP_SHAPE_MISMATCH,
                "interpolate: expected [N, C, *sizes] with 1 to 3 sizes, got " + nnp::detail::shape_text(x.shape()));
  const int32_t wanted = mode == kLinear ? 1 : (mode == kBilinear || mode == kBicubic) ? 2 : mode == kTrilinear ? 3 : 0;
  if (wanted != 0 && wanted != dims)
    throw Error(NNP_SHAPE_MISMATCH, "interpolate: mode '" + mode + "' takes " + std::to_string(wanted + 2) +
                                        "-D input, got " + nnp::detail::shape_text(x.shape()));
  if (o.align_corners() && !interpolating)
    throw Error(NNP_INVALID_ARGUMENT,
                "interpolate: align_corners option can only be set with the interpolating "
                "modes: linear | bilinear | bicubic | trilinear");
  if (o.size().has_value() == o.scale_factor().has_value())
    throw Error(NNP_INVALID_ARGUMENT, "interpolate: give exactly one of size and scale_factor");
  if (o.recompute_scale_factor().value_or(false) && o.size())
    throw Error(NNP_INVALID_ARGUMENT, "interpolate: recompute_scale_factor is not meaningful with an explicit size");
  auto per_dim = [&](const auto& v, const char* name) {
    if (v.size() != 1 && v.size() != static_cast<size_t>(dims))
      throw Error(NNP_INVALID_ARGUMENT, std::string("interpolate: ") + name + " takes one value or " +
                                            std::to_string(dims) + ", got " + std::to_string(v.size()));
    return [&v](int32_t i) { return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]; };
  };
  Tensor y = x;
  for (int32_t i = 0; i < dims; ++i) {
    const int64_t in = x.size(2 + i);
    int64_t out;
    std::optional<double> scale;
    if (o.size()) {
      out = per_dim(*o.size(), "size")(i);
    } else {
      const double s = per_dim(*o.scale_factor(), "scale_factor")(i);
      if (!(s > 0) || !std::isfinite(s))
        throw Error(NNP_INVALID_ARGUMENT, "interpolate: scale_factor must be positive and finite");
      const double size = std::floor(static_cast<double>(in) * s);
      if (size > static_cast<double>(int64_t{1} << 31))
        throw Error(NNP_INVALID_ARGUMENT, "interpolate: scale_factor makes an output longer than 2^31");
      out = static_cast<int64_t>(size);
      if (!o.recompute_scale_factor().value_or(false)) scale = s;
    }
    if (out < 1 || in < 1)
      throw Error(NNP_INVALID_ARGUMENT,
                  "interpolate: input and output sizes should be greater than 0, but got "
                  "input " +
                      std::to_string(in) + " and output " + std::to_string(out));
    y = detail::resample_dim(y, 2 + i, out, mode, o.align_corners().value_or(false), scale);
  }
  return y;
}

}  // namespace nnp::nn::functional
