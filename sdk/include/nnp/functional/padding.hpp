// nnp/functional/padding.hpp - pad (PyTorch's F.pad): constant, reflect,
// replicate and circular padding of the last dimensions, differentiable.
#pragma once

#include <nnp/autocast.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp::nn::functional {

// pad = {left, right} for the last dimension, then {left, right} for the one
// before, and so on (PyTorch's order). Constant padding may be negative
// (crops).
struct PadFuncOptions {
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(std::vector<int64_t>, pad);
  NNP_ARG(std::string, mode) = kConstant;
  NNP_ARG(double, value) = 0;
};

namespace detail {

// The source index of each output position along a dimension of `size`
// padded by (before, after), for the non-constant modes.
inline std::vector<int64_t> pad_source(const std::string& mode, int64_t size, int64_t before, int64_t after) {
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(size + before + after));
  for (int64_t o = -before; o < size + after; ++o) {
    int64_t i = o;
    if (mode == kReflect) {
      const int64_t period = 2 * (size - 1);
      i = period == 0 ? 0 : ((o % period) + period) % period;
      if (i >= size) i = period - i;
    } else if (mode == kReplicate) {
      i = o < 0 ? 0 : (o >= size ? size - 1 : o);
    } else {  // circular
      i = ((o % size) + size) % size;
    }
    index.push_back(i);
  }
  return index;
}

inline Tensor pad_dim(const Tensor& x, int32_t dim, int64_t before, int64_t after, const PadFuncOptions& options) {
  if (before == 0 && after == 0) return x;
  const int64_t size = x.size(dim);
  const std::string& mode = options.mode();
  if (mode == kConstant) {
    Tensor out = x;
    if (before < 0) out = out.slice(dim, -before, out.size(dim));
    if (after < 0) out = out.slice(dim, 0, out.size(dim) + after);
    std::vector<Tensor> parts;
    Shape shape = out.shape();
    if (before > 0) {
      shape[static_cast<size_t>(dim)] = before;
      parts.push_back(full(shape, options.value(), x.dtype(), x.device()));
    }
    parts.push_back(out);
    if (after > 0) {
      shape[static_cast<size_t>(dim)] = after;
      parts.push_back(full(shape, options.value(), x.dtype(), x.device()));
    }
    return parts.size() == 1 ? out : cat(parts, dim);
  }
  if (before < 0 || after < 0)
    throw Error(NNP_INVALID_ARGUMENT, "pad: negative padding is only supported in constant mode");
  if (mode == kReflect && (before >= size || after >= size))
    throw Error(NNP_INVALID_ARGUMENT, "pad: reflect padding (" + std::to_string(before) + ", " + std::to_string(after) +
                                          ") must be smaller than the input dimension " + std::to_string(size));
  if (mode == kCircular && (before > size || after > size))
    throw Error(NNP_INVALID_ARGUMENT, "pad: circular padding (" + std::to_string(before) + ", " +
                                          std::to_string(after) + ") must not exceed the input dimension " +
                                          std::to_string(size));
  if (size == 0) throw Error(NNP_INVALID_ARGUMENT, "pad: " + mode + " padding of an empty dimension");
  // The positions are built on the host: bound them before allocating.
  constexpr int64_t kMaxPadded = int64_t{1} << 31;
  if (before > kMaxPadded || after > kMaxPadded || size > kMaxPadded - before - after)
    throw Error(NNP_INVALID_ARGUMENT, "pad: " + mode + " padding (" + std::to_string(before) + ", " +
                                          std::to_string(after) + ") makes a dimension longer than 2^31");
  Tensor index = from_vector(pad_source(mode, size, before, after), x.device());
  return x.index_select(dim, index);
}

}  // namespace detail

inline Tensor pad(Tensor x, const PadFuncOptions& options) {
  const std::vector<int64_t>& p = options.pad();
  const std::string& mode = options.mode();
  if ((mode == kReflect || mode == kReplicate) && p.size() >= 2 && p.size() <= 6) {
    const std::string op =
        (mode == kReflect ? "reflection_pad" : "replication_pad") + std::to_string(p.size() / 2) + "d";
    nnp::detail::autocast_args(op.c_str(), {&x});
  }
  if (mode != kConstant && mode != kReflect && mode != kReplicate && mode != kCircular)
    throw Error(NNP_INVALID_ARGUMENT,
                "pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got '" + mode + "'");
  if (p.size() % 2 != 0) throw Error(NNP_INVALID_ARGUMENT, "pad: the padding length must be divisible by 2");
  if (static_cast<int64_t>(p.size() / 2) > x.ndim())
    throw Error(NNP_INVALID_ARGUMENT, "pad: " + std::to_string(p.size() / 2) + " dimensions padded but the input has " +
                                          std::to_string(x.ndim()));
  if (mode != kConstant && x.ndim() < static_cast<int32_t>(p.size() / 2) + 1)
    throw Error(NNP_INVALID_ARGUMENT,
                "pad: " + mode + " padding needs a batch or channel dimension before the padded ones");
  Tensor out = x;
  for (size_t i = 0; i < p.size() / 2; ++i)
    out = detail::pad_dim(out, x.ndim() - 1 - static_cast<int32_t>(i), p[2 * i], p[2 * i + 1], options);
  return out;
}

}  // namespace nnp::nn::functional
