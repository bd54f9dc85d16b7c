// nnp/functional/pooling.hpp - max, average and adaptive average pooling as
// functions (PyTorch's F.max_pool2d, ...). The pooling layers call the same
// code with an index they keep between calls.
#pragma once

#include <algorithm>
#include <limits>
#include <nnp/functional/windows.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nnp::nn::functional {

template <size_t D>
struct MaxPoolFuncOptions {
  MaxPoolFuncOptions(ExpandingArray<D> kernel_size)  // NOLINT: implicit, as libtorch's
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  MaxPoolFuncOptions(int64_t kernel_size) : MaxPoolFuncOptions(ExpandingArray<D>(kernel_size)) {}  // NOLINT
  MaxPoolFuncOptions(std::initializer_list<int64_t> kernel_size)                                   // NOLINT
      : MaxPoolFuncOptions(ExpandingArray<D>(kernel_size)) {}
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride);  // default: kernel_size
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(ExpandingArray<D>, dilation) = 1;
  NNP_ARG(bool, ceil_mode) = false;
};
using MaxPool1dFuncOptions = MaxPoolFuncOptions<1>;
using MaxPool2dFuncOptions = MaxPoolFuncOptions<2>;

template <size_t D>
struct AvgPoolFuncOptions {
  AvgPoolFuncOptions(ExpandingArray<D> kernel_size)  // NOLINT: implicit, as libtorch's
      : kernel_size_(kernel_size), stride_(kernel_size) {}
  AvgPoolFuncOptions(int64_t kernel_size) : AvgPoolFuncOptions(ExpandingArray<D>(kernel_size)) {}  // NOLINT
  AvgPoolFuncOptions(std::initializer_list<int64_t> kernel_size)                                   // NOLINT
      : AvgPoolFuncOptions(ExpandingArray<D>(kernel_size)) {}
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(ExpandingArray<D>, stride);  // default: kernel_size
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(bool, ceil_mode) = false;
  NNP_ARG(bool, count_include_pad) = true;
  NNP_ARG(std::optional<int64_t>, divisor_override);  // 2-D and 3-D only, as PyTorch's
};
using AvgPool1dFuncOptions = AvgPoolFuncOptions<1>;
using AvgPool2dFuncOptions = AvgPoolFuncOptions<2>;

namespace detail {

inline void check_pool(const std::string& who, const Window& w) {
  check_at_least(who, "kernel_size", w.kernel, 1);
  check_at_least(who, "stride", w.stride, 1);
  check_at_least(who, "padding", w.padding, 0);
  check_at_least(who, "dilation", w.dilation, 1);
  if (w.padding.h * 2 > w.kernel.h || w.padding.w * 2 > w.kernel.w)
    throw Error(NNP_INVALID_ARGUMENT, who + ": pad should be at most half of the effective kernel size");
}

// Max pooling's values and, when asked, where each came from: the flat
// position in its input plane, as PyTorch's return_indices gives.
struct MaxPooled {
  Tensor values, indices;
};

// Input plane position (row * W + column) of each tap of each window,
// window-major as unfold_windows lays them out; -1 for padding.
inline std::vector<int64_t> tap_positions(const Tensor& x, const Window& w, const Geometry& g) {
  const int64_t h = x.size(2), width = x.size(3);
  std::vector<int64_t> positions;
  positions.reserve(static_cast<size_t>(g.oh * g.ow * w.kernel.h * w.kernel.w));
  for (int64_t i = 0; i < g.oh; ++i)
    for (int64_t j = 0; j < g.ow; ++j)
      for (int64_t ki = 0; ki < w.kernel.h; ++ki)
        for (int64_t kj = 0; kj < w.kernel.w; ++kj) {
          const int64_t r = i * w.stride.h + ki * w.dilation.h - w.padding.h;
          const int64_t c = j * w.stride.w + kj * w.dilation.w - w.padding.w;
          positions.push_back(r >= 0 && r < h && c >= 0 && c < width ? r * width + c : -1);
        }
  return positions;
}

// The backend's fused max pooling (nnp_api.max_pool2d_fused) where one
// applies, else undefined values. In training the kernel finds each window's
// maximum and the values are read from x at those indices with gather,
// which autograd differentiates: its backward scatters each gradient to its
// window's maximum, as PyTorch's max_pool2d_with_indices_backward does.
inline MaxPooled max_pool2d_fused(const Tensor& x, const Window& w, const Geometry& g, bool with_indices) {
  if (x.ndim() != 4) return {};
  nnp_pool2d_params p{};
  p.struct_size = sizeof p;
  const Pair* pairs[] = {&w.kernel, &w.stride, &w.padding, &w.dilation};
  int64_t* fields[] = {p.kernel, p.stride, p.padding, p.dilation};
  for (int i = 0; i < 4; ++i) {
    fields[i][0] = pairs[i]->h;
    fields[i][1] = pairs[i]->w;
  }
  const bool record = is_grad_enabled() && x.requires_grad();
  nnp_tensor* values = nullptr;
  nnp_tensor* indices = nullptr;
  {
    NoGradGuard found_without_history;
    check(api().max_pool2d_fused(x.get(), &p, g.oh, g.ow, &values, with_indices || record ? &indices : nullptr));
  }
  MaxPooled pooled{Tensor::adopt(values), Tensor::adopt(indices)};
  if (!pooled.values.defined()) return {};
  if (record) {
    const int64_t n = x.size(0), c = x.size(1);
    pooled.values = x.reshape({n, c, x.size(2) * x.size(3)})
                        .gather(2, pooled.indices.reshape({n, c, g.oh * g.ow}))
                        .reshape({n, c, g.oh, g.ow});
  }
  if (!with_indices) pooled.indices = Tensor();
  return pooled;
}

inline MaxPooled max_pool2d_windows(const std::string& who, const Tensor& x, const Window& w, WindowIndexCache& cache,
                                    bool ceil_mode = false, bool with_indices = false) {
  const Geometry g = geometry(who, x, w, ceil_mode);
  if (MaxPooled fused = max_pool2d_fused(x, w, g, with_indices); fused.values.defined()) return fused;
  Tensor cols = unfold_windows(x, w, g, -std::numeric_limits<double>::infinity(), cache);
  const Shape out{x.size(0), x.size(1), g.oh, g.ow};
  // With nothing to record and no indices asked for, the maximum alone (one
  // pass, no gather): inference's path.
  if (!with_indices && !(is_grad_enabled() && x.requires_grad())) return {cols.amax({3}).reshape(out), Tensor()};
  // The first maximum of each window takes the gradient, as PyTorch's does.
  Tensor best = cols.argmax(3, true);
  MaxPooled pooled{cols.gather(3, best).reshape(out), Tensor()};
  if (with_indices) {
    const Tensor table = from_vector(tap_positions(x, w, g), {1, 1, g.oh * g.ow, w.kernel.h * w.kernel.w}, x.device());
    pooled.indices = table.expand(cols.shape()).contiguous().gather(3, best).reshape(out);
  }
  return pooled;
}

// How average pooling divides each window's sum (PyTorch's avg_pool2d).
struct AvgRule {
  bool ceil_mode = false;
  bool count_include_pad = true;  // count the padding (never the ceil_mode overhang)
  std::optional<int64_t> divisor_override;
};

// Each window's divisor, or nothing when every window counts the whole kernel.
inline std::vector<double> avg_divisors(const Tensor& x, const Window& w, const Geometry& g, bool count_include_pad) {
  const auto counted = [&](int64_t start, int64_t kernel, int64_t size, int64_t pad) {
    const int64_t end = std::min(start + kernel, size + pad);
    return count_include_pad ? end - start : std::min(end, size) - std::max<int64_t>(start, 0);
  };
  std::vector<double> divisors;
  divisors.reserve(static_cast<size_t>(g.oh * g.ow));
  bool uniform = true;
  for (int64_t i = 0; i < g.oh; ++i)
    for (int64_t j = 0; j < g.ow; ++j) {
      const int64_t n = counted(i * w.stride.h - w.padding.h, w.kernel.h, x.size(2), w.padding.h) *
                        counted(j * w.stride.w - w.padding.w, w.kernel.w, x.size(3), w.padding.w);
      uniform = uniform && n == w.kernel.h * w.kernel.w;
      divisors.push_back(static_cast<double>(n));
    }
  if (uniform) divisors.clear();
  return divisors;
}

inline Tensor avg_pool2d_windows(const std::string& who, const Tensor& x, const Window& w, WindowIndexCache& cache,
                                 const AvgRule& rule = {}) {
  const Geometry g = geometry(who, x, w, rule.ceil_mode);
  Tensor cols = unfold_windows(x, w, g, 0.0, cache);
  const Shape out{x.size(0), x.size(1), g.oh, g.ow};
  if (rule.divisor_override) {
    if (*rule.divisor_override == 0) throw Error(NNP_INVALID_ARGUMENT, who + ": divisor_override must not be 0");
    return (cols.sum({3}) / static_cast<double>(*rule.divisor_override)).reshape(out);
  }
  const std::vector<double> divisors = avg_divisors(x, w, g, rule.count_include_pad);
  if (divisors.empty()) return cols.mean({3}).reshape(out);
  return (cols.sum({3}) / from_vector(divisors, {g.oh * g.ow}, x.device()).to(x.dtype())).reshape(out);
}

template <size_t D>
Window window_of(const ExpandingArray<D>& kernel, const ExpandingArray<D>& stride, const ExpandingArray<D>& padding,
                 const ExpandingArray<D>& dilation) {
  if constexpr (D == 1) return {{1, kernel[0]}, {1, stride[0]}, {0, padding[0]}, {1, dilation[0]}};
  return {{kernel[0], kernel[D - 1]},
          {stride[0], stride[D - 1]},
          {padding[0], padding[D - 1]},
          {dilation[0], dilation[D - 1]}};
}

inline void check_ndim(const std::string& who, const Tensor& x, int32_t ndim, const char* layout) {
  if (x.ndim() != ndim)
    throw Error(NNP_SHAPE_MISMATCH, who + ": expected " + layout + ", got " + shape_text(x.shape()));
}

// A 1-D pooling runs as 2-D over [N, C, 1, L].
inline MaxPooled squeeze_rows(MaxPooled p) {
  p.values = p.values.squeeze(2);
  if (p.indices.defined()) p.indices = p.indices.squeeze(2);
  return p;
}

template <size_t D>
MaxPooled max_pool_2d_or_1d(const std::string& who, const Tensor& x, const MaxPoolFuncOptions<D>& o,
                            bool with_indices) {
  const Window w = window_of<D>(o.kernel_size(), o.stride(), o.padding(), o.dilation());
  check_pool(who, w);
  WindowIndexCache cache;
  if constexpr (D == 1) {
    check_ndim(who, x, 3, "[N, C, L]");
    return squeeze_rows(max_pool2d_windows(who, x.unsqueeze(2), w, cache, o.ceil_mode(), with_indices));
  } else {
    return max_pool2d_windows(who, x, w, cache, o.ceil_mode(), with_indices);
  }
}

}  // namespace detail

inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  return detail::max_pool_2d_or_1d<2>("max_pool2d", x, o, false).values;
}
inline std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const MaxPool2dFuncOptions& o) {
  detail::MaxPooled p = detail::max_pool_2d_or_1d<2>("max_pool2d", x, o, true);
  return {p.values, p.indices};
}
inline Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
  return detail::max_pool_2d_or_1d<1>("max_pool1d", x, o, false).values;
}
inline std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const MaxPool1dFuncOptions& o) {
  detail::MaxPooled p = detail::max_pool_2d_or_1d<1>("max_pool1d", x, o, true);
  return {p.values, p.indices};
}
inline Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  const detail::Window w = detail::window_of<2>(o.kernel_size(), o.stride(), o.padding(), 1);
  detail::check_pool("avg_pool2d", w);
  detail::WindowIndexCache cache;
  return detail::avg_pool2d_windows("avg_pool2d", x, w, cache,
                                    {o.ceil_mode(), o.count_include_pad(), o.divisor_override()});
}
inline Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
  detail::check_ndim("avg_pool1d", x, 3, "[N, C, L]");
  const detail::Window w = detail::window_of<1>(o.kernel_size(), o.stride(), o.padding(), 1);
  detail::check_pool("avg_pool1d", w);
  detail::WindowIndexCache cache;
  return detail::avg_pool2d_windows("avg_pool1d", x.unsqueeze(2), w, cache,
                                    {o.ceil_mode(), o.count_include_pad(), o.divisor_override()})
      .squeeze(2);
}

// Window i of n over a size covers [floor(i size / n), ceil((i + 1) size / n)).
inline Tensor adaptive_avg_pool2d(const Tensor& x, const ExpandingArray<2>& output_size) {
  detail::check_ndim("AdaptiveAvgPool2d", x, 4, "[N, C, H, W]");
  const int64_t oh = output_size[0], ow = output_size[1];
  detail::check_at_least("AdaptiveAvgPool2d", "output_size", {oh, ow}, 1);
  const int64_t h = x.size(2), w = x.size(3);
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < oh; ++i) {
    const int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh;
    std::vector<Tensor> cells;
    for (int64_t j = 0; j < ow; ++j) {
      const int64_t w0 = j * w / ow, w1 = ((j + 1) * w + ow - 1) / ow;
      cells.push_back(x.slice(2, h0, h1).slice(3, w0, w1).mean({2, 3}, true));
    }
    rows.push_back(cat(cells, 3));
  }
  return cat(rows, 2);
}

}  // namespace nnp::nn::functional
