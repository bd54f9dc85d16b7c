// nnp/functional/pooling_nd.hpp - pooling beyond two dimensions and beyond
// max and mean (PyTorch's F.max_pool3d, F.avg_pool3d, adaptive max and
// average pooling in 1, 2 and 3 dimensions, F.lp_pool1d/2d). 3-D windows
// are separable: pooling over (H, W), then over D, picks the same maximum
// (the first in scan order, which takes the gradient) and the same mean.
#pragma once

#include <nnp/autocast.hpp>
#include <nnp/functional/pooling.hpp>

namespace nnp::nn::functional {

using MaxPool3dFuncOptions = MaxPoolFuncOptions<3>;
using AvgPool3dFuncOptions = AvgPoolFuncOptions<3>;

namespace detail {

inline void check_pool3d(const std::string& who, const ExpandingArray<3>& kernel, const ExpandingArray<3>& stride,
                         const ExpandingArray<3>& padding, const ExpandingArray<3>& dilation) {
  for (size_t i = 0; i < 3; ++i)
    if (kernel[i] < 1 || stride[i] < 1 || padding[i] < 0 || dilation[i] < 1 || padding[i] * 2 > kernel[i])
      throw Error(NNP_INVALID_ARGUMENT, who + ": kernel_size " + shape_text(kernel.vec()) + ", stride " +
                                            shape_text(stride.vec()) + " and dilation " + shape_text(dilation.vec()) +
                                            " must be >= 1, padding " + shape_text(padding.vec()) +
                                            " >= 0 and at most half the kernel");
}

// x [N, C, D, H, W] (or [C, D, H, W]) pooled by `pool2d`, a 2-D pooling of
// [N, C, H, W] with the (h, w) window, then of [N, C', 1, D] with (1, d).
// Indices, where the pooling gives them, combine the two passes: the depth
// pass picks a plane, the plane pass's index within it.
template <typename Pool2d>
MaxPooled pool3d(const std::string& who, const Tensor& input, const ExpandingArray<3>& kernel,
                 const ExpandingArray<3>& stride, const ExpandingArray<3>& padding, const ExpandingArray<3>& dilation,
                 Pool2d pool2d) {
  if (input.ndim() != 4 && input.ndim() != 5)
    throw Error(NNP_SHAPE_MISMATCH,
                who + ": expected [N, C, D, H, W] or [C, D, H, W], got " + shape_text(input.shape()));
  const Tensor x = input.ndim() == 5 ? input : input.unsqueeze(0);
  const int64_t n = x.size(0), c = x.size(1), d = x.size(2);
  const Window plane{
      {kernel[1], kernel[2]}, {stride[1], stride[2]}, {padding[1], padding[2]}, {dilation[1], dilation[2]}};
  const Window depth{{1, kernel[0]}, {1, stride[0]}, {0, padding[0]}, {1, dilation[0]}};
  MaxPooled first = pool2d(x.reshape({n, c * d, x.size(3), x.size(4)}), plane);  // [N, C*D, OH, OW]
  const int64_t oh = first.values.size(2), ow = first.values.size(3);
  const auto depth_last = [&](const Tensor& t) {
    return t.reshape({n, c, d, oh * ow}).transpose(2, 3).reshape({n, c * oh * ow, 1, d});
  };
  MaxPooled second = pool2d(depth_last(first.values), depth);  // [N, C*OH*OW, 1, OD]
  const int64_t od = second.values.size(3);
  const auto restore = [&](const Tensor& t) {
    const Tensor y = t.reshape({n, c, oh, ow, od}).permute({0, 1, 4, 2, 3});
    return input.ndim() == 5 ? y : y.squeeze(0);
  };
  MaxPooled out{restore(second.values), Tensor()};
  if (second.indices.defined()) {
    const Tensor in_plane = depth_last(first.indices).gather(3, second.indices);
    out.indices = restore(second.indices * static_cast<double>(x.size(3) * x.size(4)) + in_plane);
  }
  return out;
}

inline MaxPooled max_pool3d(const std::string& who, Tensor x, const MaxPoolFuncOptions<3>& o, bool with_indices) {
  nnp::detail::autocast_args("max_pool3d", {&x});
  check_pool3d(who, o.kernel_size(), o.stride(), o.padding(), o.dilation());
  return pool3d(who, x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), [&](const Tensor& t, const Window& w) {
    WindowIndexCache cache;
    return max_pool2d_windows(who, t, w, cache, o.ceil_mode(), with_indices);
  });
}

// Adaptive pooling over the last D dimensions: output cell i of n over a
// size covers [floor(i size / n), ceil((i + 1) size / n)).
inline Tensor adaptive_pool(const std::string& who, const Tensor& x, const std::vector<int64_t>& output, bool max) {
  const int32_t dims = static_cast<int32_t>(output.size());
  if (x.ndim() != dims + 1 && x.ndim() != dims + 2)
    throw Error(NNP_SHAPE_MISMATCH, who + ": expected " + std::to_string(dims + 1) + "-D or " +
                                        std::to_string(dims + 2) + "-D input, got " + shape_text(x.shape()));
  for (int64_t o : output)
    if (o < 1) throw Error(NNP_INVALID_ARGUMENT, who + ": output_size must be >= 1, got " + shape_text(output));
  const int32_t first = x.ndim() - dims;
  Shape lead = x.shape();
  lead.resize(static_cast<size_t>(first));
  int64_t cells = 1;
  for (int64_t o : output) cells *= o;
  std::vector<Tensor> pooled;
  for (int64_t cell = 0; cell < cells; ++cell) {
    Tensor region = x;
    int64_t rest = cell;
    std::vector<int64_t> at(static_cast<size_t>(dims));
    for (int32_t i = dims - 1; i >= 0; --i) {
      at[static_cast<size_t>(i)] = rest % output[static_cast<size_t>(i)];
      rest /= output[static_cast<size_t>(i)];
    }
    for (int32_t i = 0; i < dims; ++i) {
      const int64_t size = x.size(first + i), n = output[static_cast<size_t>(i)], k = at[static_cast<size_t>(i)];
      region = region.slice(first + i, k * size / n, ((k + 1) * size + n - 1) / n);
    }
    Shape flat = lead;
    flat.push_back(-1);
    const Tensor values = region.reshape(flat);
    pooled.push_back(max ? values.gather(first, values.argmax(first, true)) : values.mean({first}, true));
  }
  Shape out = lead;
  out.insert(out.end(), output.begin(), output.end());
  return cat(pooled, first).reshape(out);
}

}  // namespace detail

inline Tensor max_pool3d(const Tensor& x, const MaxPool3dFuncOptions& o) {
  return detail::max_pool3d("max_pool3d", x, o, false).values;
}
inline std::tuple<Tensor, Tensor> max_pool3d_with_indices(Tensor x, const MaxPool3dFuncOptions& o) {
  nnp::detail::autocast_args("max_pool3d", {&x});
  detail::MaxPooled p = detail::max_pool3d("max_pool3d", x, o, true);
  return {p.values, p.indices};
}
// The divisor is separable too (a product of per-dimension counts), so each
// pass divides by its own; an override divides once, after two plain sums.
inline Tensor avg_pool3d(Tensor x, const AvgPool3dFuncOptions& o) {
  nnp::detail::autocast_args("avg_pool3d", {&x});
  detail::check_pool3d("avg_pool3d", o.kernel_size(), o.stride(), o.padding(), 1);
  detail::AvgRule pass{o.ceil_mode(), o.count_include_pad(), std::nullopt};
  if (o.divisor_override()) {
    if (*o.divisor_override() == 0) throw Error(NNP_INVALID_ARGUMENT, "avg_pool3d: divisor_override must not be 0");
    pass.divisor_override = 1;
  }
  const Tensor y =
      detail::pool3d("avg_pool3d", x, o.kernel_size(), o.stride(), o.padding(), 1,
                     [&](const Tensor& t, const detail::Window& w) {
                       detail::WindowIndexCache cache;
                       return detail::MaxPooled{detail::avg_pool2d_windows("avg_pool3d", t, w, cache, pass), Tensor()};
                     })
          .values;
  return o.divisor_override() ? y / static_cast<double>(*o.divisor_override()) : y;
}

inline Tensor adaptive_avg_pool1d(const Tensor& x, int64_t output_size) {
  return detail::adaptive_pool("adaptive_avg_pool1d", x, {output_size}, false);
}
inline Tensor adaptive_avg_pool3d(Tensor x, const ExpandingArray<3>& output_size) {
  nnp::detail::autocast_args("adaptive_avg_pool3d", {&x});
  return detail::adaptive_pool("adaptive_avg_pool3d", x, output_size.vec(), false);
}
inline Tensor adaptive_max_pool1d(const Tensor& x, int64_t output_size) {
  return detail::adaptive_pool("adaptive_max_pool1d", x, {output_size}, true);
}
inline Tensor adaptive_max_pool2d(const Tensor& x, const ExpandingArray<2>& output_size) {
  return detail::adaptive_pool("adaptive_max_pool2d", x, output_size.vec(), true);
}
inline Tensor adaptive_max_pool3d(Tensor x, const ExpandingArray<3>& output_size) {
  nnp::detail::autocast_args("adaptive_max_pool3d", {&x});
  return detail::adaptive_pool("adaptive_max_pool3d", x, output_size.vec(), true);
}

// (sum of x^p over each window)^(1/p), as PyTorch's: the windows' mean of
// x^p times their size.
inline Tensor lp_pool2d(const Tensor& x, double norm_type, const ExpandingArray<2>& kernel_size,
                        const ExpandingArray<2>& stride, bool ceil_mode = false) {
  const Tensor mean =
      avg_pool2d(x.pow(norm_type), AvgPool2dFuncOptions(kernel_size).stride(stride).ceil_mode(ceil_mode));
  return (mean * static_cast<double>(kernel_size[0] * kernel_size[1])).pow(1.0 / norm_type);
}
inline Tensor lp_pool1d(const Tensor& x, double norm_type, int64_t kernel_size, int64_t stride,
                        bool ceil_mode = false) {
  const Tensor mean =
      avg_pool1d(x.pow(norm_type), AvgPool1dFuncOptions(kernel_size).stride(stride).ceil_mode(ceil_mode));
  return (mean * static_cast<double>(kernel_size)).pow(1.0 / norm_type);
}

}  // namespace nnp::nn::functional
