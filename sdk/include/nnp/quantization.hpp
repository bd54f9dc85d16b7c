// nnp/quantization.hpp - quantized tensors as PyTorch computes them (ABI 1.7).
//
//   auto q = nnp::quantize_per_tensor(x, 0.05, 10, nnp::kQUInt8);
//   q.int_repr();     // the u8 values: clamp(round(x / 0.05) + 10, 0, 255)
//   q.dequantize();   // (q - 10) * 0.05, f32
//   auto w = nnp::quantize_per_channel(weight, scales, zero_points, 0, nnp::kQInt8);
//
// A QTensor is its integer values (u8 for quint8, i8 for qint8) with the
// scale and zero point (one per tensor, or one per index of an axis), as
// torch's quantized tensors hold them. Rounding is to nearest, ties to even,
// of x * (1.0f / float(scale)), as fbgemm computes it, so the integers equal
// PyTorch's.
#pragma once

#include <algorithm>
#include <cmath>
#include <nnp/tensor.hpp>
#include <nnp/tensor_creation.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nnp {

// torch.quint8 and torch.qint8: the dtype of the integer values.
constexpr Dtype kQUInt8 = Dtype::u8, kQInt8 = Dtype::i8;

enum class QScheme { per_tensor_affine, per_channel_affine };

class QTensor {
 public:
  QTensor() = default;
  static QTensor per_tensor(Tensor values, double scale, int64_t zero_point) {
    QTensor q;
    q.values_ = std::move(values);
    q.scale_ = scale;
    q.zero_point_ = zero_point;
    return q;
  }
  static QTensor per_channel(Tensor values, Tensor scales, Tensor zero_points, int64_t axis) {
    QTensor q;
    q.values_ = std::move(values);
    q.scheme_ = QScheme::per_channel_affine;
    q.scales_ = std::move(scales);
    q.zero_points_ = std::move(zero_points);
    q.axis_ = axis;
    return q;
  }

  bool defined() const { return values_.defined(); }
  QScheme qscheme() const { return scheme_; }
  // kQUInt8 (u8) or kQInt8 (i8).
  Dtype dtype() const { return values_.dtype(); }
  Shape shape() const { return values_.shape(); }
  Device device() const { return values_.device(); }
  const Tensor& int_repr() const { return values_; }
  double q_scale() const { return per_tensor_only("q_scale"), scale_; }
  int64_t q_zero_point() const { return per_tensor_only("q_zero_point"), zero_point_; }
  const Tensor& q_per_channel_scales() const { return per_channel_only("q_per_channel_scales"), scales_; }
  const Tensor& q_per_channel_zero_points() const {
    return per_channel_only("q_per_channel_zero_points"), zero_points_;
  }
  int64_t q_per_channel_axis() const { return per_channel_only("q_per_channel_axis"), axis_; }

  // The f32 values: (q - zero_point) * scale.
  Tensor dequantize() const {
    if (scheme_ == QScheme::per_tensor_affine)
      return Tensor::call(api().dequantize_per_tensor, values_.get(), scale_, zero_point_);
    return Tensor::call(api().dequantize_per_channel, values_.get(), scales_.get(), zero_points_.get(), axis_);
  }

 private:
  int per_tensor_only(const char* what) const {
    if (scheme_ != QScheme::per_tensor_affine)
      throw Error(NNP_INVALID_ARGUMENT, std::string(what) + ": the tensor is quantized per channel");
    return 0;
  }
  int per_channel_only(const char* what) const {
    if (scheme_ != QScheme::per_channel_affine)
      throw Error(NNP_INVALID_ARGUMENT, std::string(what) + ": the tensor is quantized per tensor");
    return 0;
  }

  Tensor values_;
  QScheme scheme_ = QScheme::per_tensor_affine;
  double scale_ = 1.0;
  int64_t zero_point_ = 0;
  Tensor scales_, zero_points_;
  int64_t axis_ = 0;
};

inline QTensor quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, Dtype dtype) {
  return QTensor::per_tensor(
      Tensor::call(api().quantize_per_tensor, x.get(), scale, zero_point, static_cast<nnp_dtype>(dtype)), scale,
      zero_point);
}

inline QTensor quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                    Dtype dtype) {
  Tensor values = Tensor::call(api().quantize_per_channel, x.get(), scales.get(), zero_points.get(), axis,
                               static_cast<nnp_dtype>(dtype));
  const int64_t ndim = x.ndim();
  return QTensor::per_channel(std::move(values), scales, zero_points, axis < 0 ? axis + ndim : axis);
}

inline Tensor dequantize(const QTensor& q) { return q.dequantize(); }

// torch.fake_quantize_per_tensor_affine / _per_channel_affine: quantize and
// dequantize in one step; the gradient passes where nothing was clamped.
inline Tensor fake_quantize_per_tensor_affine(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                              int64_t quant_max) {
  return Tensor::call(api().fake_quantize_per_tensor, x.get(), scale, zero_point, quant_min, quant_max);
}
inline Tensor fake_quantize_per_channel_affine(const Tensor& x, const Tensor& scales, const Tensor& zero_points,
                                               int64_t axis, int64_t quant_min, int64_t quant_max) {
  return Tensor::call(api().fake_quantize_per_channel, x.get(), scales.get(), zero_points.get(), axis, quant_min,
                      quant_max);
}

// ---- what observers compute (torch.ao.quantization's _ObserverBase) ----

// The integer range of an observer: PyTorch's calculate_qmin_qmax. A
// customized range (quant_min and quant_max given) is kept, halved under
// reduce_range; otherwise the dtype's full range, or its lower half.
struct QRange {
  int64_t quant_min = 0, quant_max = 255;
  bool customized = false;
};
inline QRange observer_range(Dtype dtype, bool reduce_range, std::optional<int64_t> quant_min = std::nullopt,
                             std::optional<int64_t> quant_max = std::nullopt) {
  if (dtype != kQUInt8 && dtype != kQInt8)
    throw Error(NNP_DTYPE_MISMATCH, "observer: dtype must be quint8 (u8) or qint8 (i8)");
  QRange r;
  if (quant_min.has_value() != quant_max.has_value())
    throw Error(NNP_INVALID_ARGUMENT, "observer: give both quant_min and quant_max, or neither");
  if (quant_min) {
    if (*quant_min > 0 || *quant_max < 0 || *quant_min < -256 || *quant_max > 255 || *quant_max - *quant_min + 1 > 256)
      throw Error(NNP_INVALID_ARGUMENT, "observer: quant_min " + std::to_string(*quant_min) + " and quant_max " +
                                            std::to_string(*quant_max) + " must include 0 and span at most 256 values");
    r.customized = true;
    r.quant_min = *quant_min;
    r.quant_max = *quant_max;
    if (reduce_range) {  // Python's floor division
      r.quant_min = r.quant_min >= 0 ? r.quant_min / 2 : -((-r.quant_min + 1) / 2);
      r.quant_max /= 2;
    }
  } else if (dtype == kQInt8) {
    r.quant_min = reduce_range ? -64 : -128;
    r.quant_max = reduce_range ? 63 : 127;
  } else {
    r.quant_min = 0;
    r.quant_max = reduce_range ? 127 : 255;
  }
  return r;
}

// Scale and zero point from the observed minimum and maximum (one per
// tensor, or one per channel), computed in float as PyTorch's
// _calculate_qparams does: the range is widened to include 0; symmetric
// schemes center it (zero point 0 for qint8, 128 for quint8, or the
// customized range's midpoint); scales are at least eps.
struct QParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
};
inline QParams qparams_from_range(const std::vector<float>& min_val, const std::vector<float>& max_val, float eps,
                                  Dtype dtype, bool symmetric, const QRange& range) {
  QParams p;
  const auto qmin = static_cast<float>(range.quant_min), qmax = static_cast<float>(range.quant_max);
  for (size_t i = 0; i < min_val.size(); ++i) {
    const float min_neg = std::fmin(min_val[i], 0.0f), max_pos = std::fmax(max_val[i], 0.0f);
    float scale = 1.0f;
    int64_t zero_point = 0;
    if (symmetric) {
      scale = std::fmax(-min_neg, max_pos) / ((qmax - qmin) / 2.0f);
      scale = std::fmax(scale, eps);
      if (dtype == kQUInt8) zero_point = range.customized ? (range.quant_min + range.quant_max) / 2 : 128;
    } else {
      scale = std::fmax((max_pos - min_neg) / (qmax - qmin), eps);
      zero_point = range.quant_min - static_cast<int64_t>(std::nearbyint(min_neg / scale));
      zero_point = std::min(std::max(zero_point, range.quant_min), range.quant_max);
    }
    p.scale.push_back(scale);
    p.zero_point.push_back(zero_point);
  }
  return p;
}

// i8 a [M, K] times i8 b [N, K] transposed, in exact int32: the backend's
// int8 GEMM kernel, or its floating gemm where it has none.
inline Tensor matmul_i8(const Tensor& a, const Tensor& b) { return Tensor::call(api().matmul_i8, a.get(), b.get()); }

// The quantized layers' GEMM in one call (1.19): f32 x [M, K] quantized to
// offsets max(quantize_per_tensor(x, scale, 0, qint8), -zero_point), times
// i8 w [N, K] transposed in exact int32, each column's sum then times
// col_scale[n] plus bias[n] (f32 [N]; bias may be undefined): f32 [M, N].
// One pass on a backend with the quantized_gemm kernel (the cpu backend's
// quantizes the activations as it packs them and rescales as it stores).
inline Tensor quantized_matmul(const Tensor& x, double scale, int64_t zero_point, const Tensor& w,
                               const Tensor& col_scale, const Tensor& bias = Tensor()) {
  return Tensor::call(api().quantized_matmul, x.get(), scale, zero_point, w.get(), col_scale.get(),
                      bias.defined() ? bias.get() : nullptr);
}

}  // namespace nnp
