// nnp/indexing.hpp - indexing as libtorch writes it (included by
// nnp/tensor.hpp): select, narrow, t[i], t.index({Slice(0, 2), 1, None,
// Ellipsis, mask}), index_put_, masked_fill, masked_select, nonzero, sort,
// argsort, topk, cumsum.
//
// Each is composed of the op table's ops (slice, index_select, gather,
// where, cat), so the result is differentiable wherever PyTorch's is and
// lives on the input's device. Where the positions depend on the values
// (masks, nonzero, sort, topk) the positions are computed on the host from a
// copy and the values are then gathered on the device: correct everywhere,
// with one device-to-host copy of the mask or keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nnp/tensor.hpp>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace nnp {
namespace indexing {

struct NoneType {};
struct EllipsisType {};
inline constexpr NoneType None{};
inline constexpr EllipsisType Ellipsis{};

// A slice bound: an integer, or None (the end the step starts from).
class SliceBound {
 public:
  SliceBound(NoneType = None) {}                                      // NOLINT: implicit by design
  SliceBound(int64_t value) : value_(value), given_(true) {}          // NOLINT
  SliceBound(int value) : SliceBound(static_cast<int64_t>(value)) {}  // NOLINT
  bool given() const { return given_; }
  int64_t value() const { return value_; }

 private:
  int64_t value_ = 0;
  bool given_ = false;
};

// start:stop:step, as Python's (negative bounds count from the end; bounds
// past the ends are clamped; the step is positive).
struct Slice {
  Slice(SliceBound start = None, SliceBound stop = None, SliceBound step = None)
      : start(start), stop(stop), step(step) {}
  SliceBound start, stop, step;
};

// One entry of an index: an integer, a Slice, None, Ellipsis, a bool or a
// tensor (integer positions, or a bool mask).
class TensorIndex {
 public:
  enum class Kind { integer, slice, none, ellipsis, boolean, tensor };
  TensorIndex(int64_t i) : kind_(Kind::integer), integer_(i) {}  // NOLINT: implicit by design
  TensorIndex(int i) : TensorIndex(static_cast<int64_t>(i)) {}   // NOLINT
  TensorIndex(Slice s) : kind_(Kind::slice), slice_(s) {}        // NOLINT
  TensorIndex(NoneType) : kind_(Kind::none) {}                   // NOLINT
  TensorIndex(EllipsisType) : kind_(Kind::ellipsis) {}           // NOLINT
  TensorIndex(const char* text) : kind_(Kind::ellipsis) {        // NOLINT: "..." as libtorch's
    if (std::string(text) != "...")
      throw Error(NNP_INVALID_ARGUMENT, std::string("index: the only text index is \"...\", got \"") + text + "\"");
  }
  TensorIndex(bool b) : kind_(Kind::boolean), boolean_(b) {}             // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::tensor), tensor_(std::move(t)) {}  // NOLINT
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  bool boolean() const { return boolean_; }
  const Tensor& tensor() const { return tensor_; }
  bool is_mask() const { return tensor_.dtype() == Dtype::boolean || tensor_.dtype() == Dtype::u8; }
  // How many dimensions of the input this entry uses up.
  int32_t consumes() const {
    if (kind_ == Kind::integer || kind_ == Kind::slice) return 1;
    if (kind_ == Kind::tensor) return is_mask() ? tensor_.ndim() : 1;
    return 0;
  }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  bool boolean_ = false;
  Tensor tensor_;
};

}  // namespace indexing

namespace detail {

inline std::string dims_text(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

inline int32_t wrap_dim(const char* op, int32_t dim, int32_t ndim) {
  const int32_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    throw Error(NNP_INVALID_ARGUMENT, std::string(op) + ": dimension out of range (expected to be in range of [" +
                                          std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got " +
                                          std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

// The coordinates, row-major, where a bool tensor is true.
inline std::vector<int64_t> true_positions(const Tensor& mask) {
  std::vector<bool> values = mask.to(Device::cpu()).to_vector<bool>();
  std::vector<int64_t> out;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i]) out.push_back(static_cast<int64_t>(i));
  return out;
}

// Shape with dims [from, from + count) replaced by `middle`.
inline Shape replace_dims(const Shape& shape, size_t from, size_t count, const Shape& middle) {
  Shape out(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(from));
  out.insert(out.end(), middle.begin(), middle.end());
  out.insert(out.end(), shape.begin() + static_cast<std::ptrdiff_t>(from + count), shape.end());
  return out;
}

// Integer positions along `dim`, negative ones counted from the end.
inline Tensor take_positions(const Tensor& t, int32_t dim, const Tensor& positions) {
  if (positions.dtype() != Dtype::i64 && positions.dtype() != Dtype::i32)
    throw Error(NNP_DTYPE_MISMATCH,
                std::string("index: tensors used as indices must be long, int or bool tensors, got ") +
                    dtype_name(positions.dtype()));
  const int64_t size = t.size(dim);
  Tensor flat = positions.to(Dtype::i64).reshape({-1});
  flat = where(flat.lt(flat.scalar_like(0)), flat + static_cast<double>(size), flat);
  Tensor picked = t.index_select(dim, flat.to(t.device()));
  return picked.reshape(replace_dims(t.shape(), static_cast<size_t>(dim), 1, positions.shape()));
}

// The elements of t where a bool mask covering dims [dim, dim + mask.ndim)
// is true, those dims flattened into one.
inline Tensor take_mask(const Tensor& t, int32_t dim, const Tensor& mask) {
  const Shape shape = t.shape(), mask_shape = mask.ndim() == 0 ? Shape{1} : mask.shape();
  const size_t k = mask_shape.size();
  Tensor base = mask.ndim() == 0 ? t.unsqueeze(dim) : t;
  const Shape base_shape = base.shape();
  for (size_t i = 0; i < k; ++i)
    if (static_cast<size_t>(dim) + i >= base_shape.size() || base_shape[static_cast<size_t>(dim) + i] != mask_shape[i])
      throw Error(NNP_SHAPE_MISMATCH, "index: the shape of the mask " + dims_text(mask.shape()) +
                                          " does not match the shape of the indexed tensor " + dims_text(shape) +
                                          " at dimension " + std::to_string(dim));
  int64_t covered = 1;
  for (int64_t s : mask_shape) covered *= s;
  Tensor merged = base.reshape(replace_dims(base_shape, static_cast<size_t>(dim), k, {covered}));
  return merged.index_select(dim, from_vector(true_positions(mask), t.device()));
}

// Values in a comparable host form: integers exactly, floats as double.
struct SortKeys {
  std::vector<double> real;
  std::vector<int64_t> whole;
  bool integral = false;
};
inline SortKeys sort_keys(const Tensor& contiguous_last) {
  SortKeys keys;
  const Tensor host = contiguous_last.to(Device::cpu());
  keys.integral = !is_floating(host.dtype());
  if (keys.integral)
    keys.whole = host.to(Dtype::i64).to_vector<int64_t>();
  else
    keys.real = host.to(Dtype::f64).to_vector<double>();
  return keys;
}

// The order of every row of `t` along `dim` (stable; NaN sorts as the
// largest, as PyTorch's), as i64 positions shaped like t, on t's device.
inline Tensor sorted_positions(const Tensor& t, int32_t dim, bool descending) {
  const int32_t last = t.ndim() - 1;
  Tensor moved = t.ndim() == 0 ? t.reshape({1}) : t.transpose(dim, last).contiguous();
  const SortKeys keys = sort_keys(moved);
  const int64_t row = moved.ndim() == 0 ? 1 : moved.size(-1);
  const int64_t rows = row == 0 ? 0 : moved.numel() / row;
  std::vector<int64_t> order(static_cast<size_t>(moved.numel()));
  for (int64_t r = 0; r < rows; ++r) {
    auto begin = order.begin() + r * row;
    std::iota(begin, begin + row, 0);
    const size_t base = static_cast<size_t>(r * row);
    auto less = [&](int64_t a, int64_t b) {
      if (keys.integral) return keys.whole[base + static_cast<size_t>(a)] < keys.whole[base + static_cast<size_t>(b)];
      const double x = keys.real[base + static_cast<size_t>(a)], y = keys.real[base + static_cast<size_t>(b)];
      return !std::isnan(x) && (std::isnan(y) || x < y);
    };
    if (descending)
      std::stable_sort(begin, begin + row, [&](int64_t a, int64_t b) { return less(b, a); });
    else
      std::stable_sort(begin, begin + row, less);
  }
  Tensor positions = from_vector(order, moved.shape(), t.device());
  return t.ndim() == 0 ? positions.reshape({}) : positions.transpose(dim, last);
}

}  // namespace detail

inline Tensor Tensor::select(int32_t dim, int64_t index) const {
  if (ndim() == 0) throw Error(NNP_INVALID_ARGUMENT, "select() cannot be applied to a 0-dim tensor.");
  dim = detail::wrap_dim("select", dim, ndim());
  const int64_t size = this->size(dim);
  if (index < -size || index >= size)
    throw Error(NNP_INVALID_ARGUMENT, "select(): index " + std::to_string(index) + " out of range for tensor of size " +
                                          detail::dims_text(shape()) + " at dimension " + std::to_string(dim));
  if (index < 0) index += size;
  return slice(dim, index, index + 1).squeeze(dim);
}

inline Tensor Tensor::narrow(int32_t dim, int64_t start, int64_t length) const {
  if (ndim() == 0) throw Error(NNP_INVALID_ARGUMENT, "narrow() cannot be applied to a 0-dim tensor.");
  dim = detail::wrap_dim("narrow", dim, ndim());
  const int64_t size = this->size(dim);
  if (start < -size || start > size)
    throw Error(NNP_INVALID_ARGUMENT, "narrow(): start " + std::to_string(start) + " out of range for dimension " +
                                          std::to_string(dim) + " of size " + std::to_string(size));
  if (start < 0) start += size;
  if (length < 0 || start > size - length)
    throw Error(NNP_INVALID_ARGUMENT, "narrow(): start (" + std::to_string(start) + ") + length (" +
                                          std::to_string(length) + ") exceeds dimension size (" + std::to_string(size) +
                                          ").");
  return slice(dim, start, start + length);
}

inline Tensor Tensor::index(ArrayRef<indexing::TensorIndex> indices) const {
  using Kind = indexing::TensorIndex::Kind;
  int32_t consumed = 0, ellipses = 0, tensors = 0;
  for (int32_t i = 0; i < indices.size(); ++i) {
    const indexing::TensorIndex& entry = indices.data()[i];
    consumed += entry.consumes();
    ellipses += entry.kind() == Kind::ellipsis ? 1 : 0;
    tensors += entry.kind() == Kind::tensor ? 1 : 0;
  }
  if (ellipses > 1) throw Error(NNP_INVALID_ARGUMENT, "index: an index can only have a single ellipsis ('...')");
  if (consumed > ndim())
    throw Error(NNP_INVALID_ARGUMENT, "too many indices for tensor of dimension " + std::to_string(ndim()));
  if (tensors > 1)
    throw Error(NNP_UNIMPLEMENTED,
                "index: more than one tensor in an index (advanced indexing across dimensions) "
                "is not supported yet; index with one tensor at a time");
  Tensor out = *this;
  int32_t dim = 0;
  for (int32_t i = 0; i < indices.size(); ++i) {
    const indexing::TensorIndex& entry = indices.data()[i];
    switch (entry.kind()) {
      case Kind::integer: out = out.select(dim, entry.integer()); break;
      case Kind::slice: {
        const indexing::Slice& s = entry.slice();
        const int64_t step = s.step.given() ? s.step.value() : 1;
        if (step <= 0) throw Error(NNP_INVALID_ARGUMENT, "index: slice step must be positive");
        out = out.slice(dim, s.start.given() ? s.start.value() : 0,
                        s.stop.given() ? s.stop.value() : std::numeric_limits<int64_t>::max(), step);
        ++dim;
        break;
      }
      case Kind::none: out = out.unsqueeze(dim++); break;
      case Kind::ellipsis: dim += ndim() - consumed; break;
      case Kind::boolean:
        out = out.unsqueeze(dim);
        if (!entry.boolean()) out = out.slice(dim, 0, 0);
        ++dim;
        break;
      case Kind::tensor:
        if (entry.is_mask()) {
          out = detail::take_mask(out, dim, entry.tensor().to(Dtype::boolean));
          ++dim;
        } else {
          out = detail::take_positions(out, dim, entry.tensor());
          dim += entry.tensor().ndim();
        }
        break;
    }
  }
  return out;
}

// Writes value (broadcast) into the indexed elements: basic indices write
// through a view; a tensor index writes through the positions it selects
// (the last write wins where positions repeat).
inline Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, const Tensor& value) {
  bool basic = true;
  for (int32_t i = 0; i < indices.size(); ++i)
    basic = basic && indices.data()[i].kind() != indexing::TensorIndex::Kind::tensor;
  if (basic) {
    Tensor view = index(indices);
    view.copy_(value);
    return *this;
  }
  // The linear position of every element, indexed the same way.
  const Tensor positions =
      arange(0, static_cast<double>(numel()), 1, Dtype::i64, device()).reshape(shape()).index(indices);
  const std::vector<int64_t> written = positions.to(Device::cpu()).reshape({-1}).to_vector<int64_t>();
  std::vector<int64_t> source(static_cast<size_t>(numel()), -1);
  for (size_t k = 0; k < written.size(); ++k) source[static_cast<size_t>(written[k])] = static_cast<int64_t>(k);
  std::vector<uint8_t> hit(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    hit[i] = source[i] >= 0;
    source[i] = std::max<int64_t>(source[i], 0);
  }
  Tensor values = value.to(dtype()).expand(positions.shape()).reshape({-1});
  if (values.numel() == 0) return *this;
  Tensor gathered = values.index_select(0, from_vector(source, device())).reshape(shape());
  Tensor mask = from_vector(hit, shape(), device()).to(Dtype::boolean);
  copy_(where(mask, gathered, *this));
  return *this;
}
inline Tensor& Tensor::index_put_(ArrayRef<indexing::TensorIndex> indices, double value) {
  return index_put_(indices, scalar_like(value));
}

inline Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  if (mask.dtype() != Dtype::boolean)
    throw Error(NNP_DTYPE_MISMATCH, std::string("masked_fill only supports boolean masks, but got mask with dtype ") +
                                        dtype_name(mask.dtype()));
  if (value.ndim() != 0)
    throw Error(NNP_INVALID_ARGUMENT, "masked_fill only supports a 0-dimensional value tensor, but got tensor with " +
                                          std::to_string(value.ndim()) + " dimension(s).");
  return where(mask, value.to(dtype()), *this);
}
inline Tensor Tensor::masked_fill(const Tensor& mask, double value) const {
  return masked_fill(mask, scalar_like(value));
}

inline Tensor Tensor::masked_select(const Tensor& mask) const {
  if (mask.dtype() != Dtype::boolean)
    throw Error(NNP_DTYPE_MISMATCH,
                std::string("masked_select: expected a bool mask, got ") + dtype_name(mask.dtype()));
  // Both broadcast to one shape; the chosen elements in row-major order.
  const Shape a = shape(), b = mask.shape();
  Shape common(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < common.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      throw Error(NNP_SHAPE_MISMATCH, "masked_select: the mask " + detail::dims_text(b) +
                                          " does not broadcast with the tensor " + detail::dims_text(a));
    common[common.size() - 1 - i] = x == 1 ? y : x;
  }
  const Tensor full_mask = mask.expand(common).contiguous();
  return expand(common).reshape({-1}).index_select(0, from_vector(detail::true_positions(full_mask), device()));
}

inline Tensor Tensor::nonzero() const {
  const Tensor nonzero_mask = ne(scalar_like(0)).contiguous();
  const std::vector<int64_t> linear = detail::true_positions(nonzero_mask);
  const Shape s = shape();
  std::vector<int64_t> coords;
  coords.reserve(linear.size() * s.size());
  for (int64_t at : linear) {
    const size_t first = coords.size();
    coords.resize(first + s.size());
    for (size_t d = s.size(); d-- > 0;) {
      coords[first + d] = at % s[d];
      at /= s[d];
    }
  }
  return from_vector(coords, {static_cast<int64_t>(linear.size()), static_cast<int64_t>(s.size())}, device());
}

inline std::tuple<Tensor, Tensor> Tensor::sort(int32_t dim, bool descending) const {
  dim = detail::wrap_dim("sort", dim, ndim());
  Tensor positions = detail::sorted_positions(*this, dim, descending);
  Tensor values = ndim() == 0 ? *this : gather(dim, positions);
  return {values, positions};
}
inline Tensor Tensor::argsort(int32_t dim, bool descending) const { return std::get<1>(sort(dim, descending)); }

inline std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int32_t dim, bool largest, bool /*sorted*/) const {
  dim = detail::wrap_dim("topk", dim, ndim());
  const int64_t size = ndim() == 0 ? 1 : this->size(dim);
  if (k < 0 || k > size)
    throw Error(NNP_INVALID_ARGUMENT, "topk: selected index k (" + std::to_string(k) + ") out of range for dimension " +
                                          std::to_string(dim) + " of size " + std::to_string(size));
  if (ndim() == 0) return {*this, zeros({}, Dtype::i64, device())};
  // The k first of a stable sort: always sorted, ties in input order.
  Tensor positions = detail::sorted_positions(*this, dim, largest).narrow(dim, 0, k).contiguous();
  return {gather(dim, positions), positions};
}

// Running sums along dim in log2(n) shifted additions (Hillis-Steele), so it
// runs on any device and is differentiable; integers and bools sum as i64,
// as PyTorch's.
inline Tensor Tensor::cumsum(int32_t dim) const {
  dim = detail::wrap_dim("cumsum", dim, ndim());
  Tensor out = is_floating(dtype()) ? *this : to(Dtype::i64);
  if (ndim() == 0) return out.clone();
  const int64_t n = size(dim);
  for (int64_t shift = 1; shift < n; shift *= 2) {
    Shape pad_shape = out.shape();
    pad_shape[static_cast<size_t>(dim)] = shift;
    Tensor shifted = cat({zeros(pad_shape, out.dtype(), out.device()), out.narrow(dim, 0, n - shift)}, dim);
    out = out + shifted;
  }
  return out;
}

}  // namespace nnp
