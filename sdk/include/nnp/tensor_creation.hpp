// Creating tensors as libtorch writes it: nnp::tensor({{1, 2}, {3, 4}}) from
// nested braces (dtype inferred as PyTorch's torch.tensor does: a floating
// value makes f32, integers i64, bools bool), the *_like family, linspace and
// eye. Built on the core's creation ops (from_host, full, arange).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "tensor.hpp"

namespace nnp {

// A scalar or a nested list of them, written with braces.
class TensorLiteral {
 public:
  TensorLiteral(double v) : value_(v), kind_(Kind::floating) {}           // NOLINT: braces are the point
  TensorLiteral(float v) : value_(v), kind_(Kind::floating) {}            // NOLINT
  TensorLiteral(int v) : value_(v), integer_(v), kind_(Kind::integer) {}  // NOLINT
  TensorLiteral(long v) : value_(static_cast<double>(v)), integer_(v), kind_(Kind::integer) {}       // NOLINT
  TensorLiteral(long long v) : value_(static_cast<double>(v)), integer_(v), kind_(Kind::integer) {}  // NOLINT
  TensorLiteral(bool v) : value_(v), integer_(v), kind_(Kind::boolean) {}                            // NOLINT
  TensorLiteral(std::initializer_list<TensorLiteral> items) : items_(items), kind_(Kind::list) {}

  // The shape, checked rectangular ("expected sequence of length 2 at dim 1
  // (got 3)", PyTorch's words).
  Shape shape() const {
    Shape s;
    shape_into(0, s);
    return s;
  }
  // The dtype torch.tensor infers: any floating value -> f32; else any
  // integer -> i64; else bool.
  Dtype dtype() const {
    Kind k = widest();
    return k == Kind::floating ? Dtype::f32 : k == Kind::integer ? Dtype::i64 : Dtype::boolean;
  }
  void flatten(std::vector<double>& reals, std::vector<int64_t>& integers) const {
    if (kind_ != Kind::list) {
      reals.push_back(value_);
      integers.push_back(integer_);
      return;
    }
    for (const TensorLiteral& item : items_) item.flatten(reals, integers);
  }

 private:
  enum class Kind { boolean, integer, floating, list };
  Kind widest() const {
    if (kind_ != Kind::list) return kind_;
    Kind k = Kind::boolean;
    for (const TensorLiteral& item : items_) k = std::max(k, item.widest());
    return k;
  }
  void shape_into(size_t dim, Shape& s) const {
    if (kind_ != Kind::list) return;
    const int64_t length = static_cast<int64_t>(items_.size());
    if (dim == s.size()) {
      s.push_back(length);
      if (length > 0) items_.begin()->shape_into(dim + 1, s);
    }
    if (s[dim] != length)
      throw Error(NNP_SHAPE_MISMATCH, "tensor: expected sequence of length " + std::to_string(s[dim]) + " at dim " +
                                          std::to_string(dim) + " (got " + std::to_string(length) + ")");
    for (const TensorLiteral& item : items_) {
      if ((item.kind_ == Kind::list) != (dim + 1 < s.size()))
        throw Error(NNP_SHAPE_MISMATCH, "tensor: a scalar and a list at the same depth (dim " +
                                            std::to_string(dim + 1) + "): the braces must nest evenly");
      item.shape_into(dim + 1, s);
    }
  }

  double value_ = 0;
  int64_t integer_ = 0;
  std::vector<TensorLiteral> items_;
  Kind kind_;
};

// torch::tensor: the values of nested braces, dtype inferred unless given.
inline Tensor tensor(const TensorLiteral& values, const Device& device = Device::cpu()) {
  std::vector<double> reals;
  std::vector<int64_t> integers;
  values.flatten(reals, integers);
  const Shape shape = values.shape();
  const Dtype dtype = values.dtype();
  if (dtype == Dtype::f32) {
    std::vector<float> floats(reals.begin(), reals.end());
    return from_vector(floats, shape, device);
  }
  Tensor t = from_vector(integers, shape, device);
  return dtype == Dtype::boolean ? t.to(Dtype::boolean) : t;
}
inline Tensor tensor(const TensorLiteral& values, Dtype dtype, const Device& device = Device::cpu()) {
  // Through f64 or i64, so every value reaches the dtype as PyTorch's would.
  std::vector<double> reals;
  std::vector<int64_t> integers;
  values.flatten(reals, integers);
  const Shape shape = values.shape();
  Tensor t = values.dtype() == Dtype::f32 ? from_vector(reals, shape, device) : from_vector(integers, shape, device);
  return t.to(dtype);
}

// The *_like family: the shape, dtype and device of `like` unless given.
inline Tensor empty_like(const Tensor& like) { return empty(like.shape(), like.dtype(), like.device()); }
inline Tensor zeros_like(const Tensor& like) { return zeros(like.shape(), like.dtype(), like.device()); }
inline Tensor ones_like(const Tensor& like) { return ones(like.shape(), like.dtype(), like.device()); }
inline Tensor full_like(const Tensor& like, double value) {
  return full(like.shape(), value, like.dtype(), like.device());
}
inline Tensor rand_like(const Tensor& like) { return rand(like.shape(), like.dtype(), like.device()); }
inline Tensor randn_like(const Tensor& like) { return randn(like.shape(), like.dtype(), like.device()); }

namespace detail {
// linspace's values in arithmetic of type T, from both ends as PyTorch does
// (so the last value is end exactly).
template <typename T>
std::vector<double> linspace_values(double start, double end, int64_t steps) {
  std::vector<double> values(static_cast<size_t>(steps));
  const T first = static_cast<T>(start), last = static_cast<T>(end);
  const T step = steps > 1 ? (last - first) / static_cast<T>(steps - 1) : T(0);
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i)
    values[static_cast<size_t>(i)] =
        i < half ? first + step * static_cast<T>(i) : last - step * static_cast<T>(steps - 1 - i);
  return values;
}
}  // namespace detail

// `steps` values from start to end inclusive, evenly spaced, computed in the
// dtype's own precision (float for f32, f16, bf16) as PyTorch computes them.
inline Tensor linspace(double start, double end, int64_t steps, Dtype dtype = Dtype::f32,
                       const Device& device = Device::cpu()) {
  if (steps < 0) throw Error(NNP_INVALID_ARGUMENT, "linspace: number of steps must be non-negative");
  std::vector<double> values = dtype == Dtype::f64 || !is_floating(dtype)
                                   ? detail::linspace_values<double>(start, end, steps)
                                   : detail::linspace_values<float>(start, end, steps);
  if (steps == 1) values[0] = start;
  return from_vector(values, ShapeRef(steps), device).to(dtype);
}

// An n x m matrix with ones on the diagonal (m defaults to n).
inline Tensor eye(int64_t n, int64_t m = -1, Dtype dtype = Dtype::f32, const Device& device = Device::cpu()) {
  if (m < 0) m = n;
  if (n < 0) throw Error(NNP_INVALID_ARGUMENT, "eye: n must be greater or equal to 0, got " + std::to_string(n));
  std::vector<double> values(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < std::min(n, m); ++i) values[static_cast<size_t>(i * m + i)] = 1.0;
  return from_vector(values, {n, m}, device).to(dtype);
}

}  // namespace nnp
