// nnp/functional/pooling.hpp - max, average and adaptive average pooling as
// functions (PyTorch's F.max_pool2d, ...). The pooling layers call the same
// code with an index they keep between calls.
#pragma once

#include <limits>
#include <nnp/functional/windows.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <string>
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
};
using AvgPool1dFuncOptions = AvgPoolFuncOptions<1>;
using AvgPool2dFuncOptions = AvgPoolFuncOptions<2>;

namespace detail {

inline void check_pool(const std::string& who, const Window& w, bool ceil_mode, bool count_include_pad) {
  check_at_least(who, "kernel_size", w.kernel, 1);
  check_at_least(who, "stride", w.stride, 1);
  check_at_least(who, "padding", w.padding, 0);
  check_at_least(who, "dilation", w.dilation, 1);
  if (w.padding.h * 2 > w.kernel.h || w.padding.w * 2 > w.kernel.w)
    throw Error(NNP_INVALID_ARGUMENT, who + ": pad should be at most half of the effective kernel size");
  if (ceil_mode) throw Error(NNP_UNIMPLEMENTED, who + ": ceil_mode=True is not supported yet; use padding instead");
  if (!count_include_pad) throw Error(NNP_UNIMPLEMENTED, who + ": count_include_pad=False is not supported yet");
}

inline Tensor max_pool2d_windows(const std::string& who, const Tensor& x, const Window& w, WindowIndexCache& cache) {
  const Geometry g = geometry(who, x, w);
  Tensor cols = unfold_windows(x, w, g, -std::numeric_limits<double>::infinity(), cache);
  // The first maximum of each window takes the gradient, as PyTorch's does.
  Tensor best = cols.argmax(3, true);
  return cols.gather(3, best).reshape({x.size(0), x.size(1), g.oh, g.ow});
}

inline Tensor avg_pool2d_windows(const std::string& who, const Tensor& x, const Window& w, WindowIndexCache& cache) {
  const Geometry g = geometry(who, x, w);
  Tensor cols = unfold_windows(x, w, g, 0.0, cache);
  return cols.mean({3}).reshape({x.size(0), x.size(1), g.oh, g.ow});
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

}  // namespace detail

inline Tensor max_pool2d(const Tensor& x, const MaxPool2dFuncOptions& o) {
  const detail::Window w = detail::window_of<2>(o.kernel_size(), o.stride(), o.padding(), o.dilation());
  detail::check_pool("max_pool2d", w, o.ceil_mode(), true);
  detail::WindowIndexCache cache;
  return detail::max_pool2d_windows("max_pool2d", x, w, cache);
}
inline Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
  detail::check_ndim("max_pool1d", x, 3, "[N, C, L]");
  const detail::Window w = detail::window_of<1>(o.kernel_size(), o.stride(), o.padding(), o.dilation());
  detail::check_pool("max_pool1d", w, o.ceil_mode(), true);
  detail::WindowIndexCache cache;
  return detail::max_pool2d_windows("max_pool1d", x.unsqueeze(2), w, cache).squeeze(2);
}
inline Tensor avg_pool2d(const Tensor& x, const AvgPool2dFuncOptions& o) {
  const detail::Window w = detail::window_of<2>(o.kernel_size(), o.stride(), o.padding(), 1);
  detail::check_pool("avg_pool2d", w, o.ceil_mode(), o.count_include_pad());
  detail::WindowIndexCache cache;
  return detail::avg_pool2d_windows("avg_pool2d", x, w, cache);
}
inline Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
  detail::check_ndim("avg_pool1d", x, 3, "[N, C, L]");
  const detail::Window w = detail::window_of<1>(o.kernel_size(), o.stride(), o.padding(), 1);
  detail::check_pool("avg_pool1d", w, o.ceil_mode(), o.count_include_pad());
  detail::WindowIndexCache cache;
  return detail::avg_pool2d_windows("avg_pool1d", x.unsqueeze(2), w, cache).squeeze(2);
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
