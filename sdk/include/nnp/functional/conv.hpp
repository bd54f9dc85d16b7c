// nnp/functional/conv.hpp - conv1d and conv2d as functions (PyTorch's
// F.conv1d / F.conv2d: stride, padding, dilation, groups). The Conv layers
// call the same code with an index they keep between calls.
#pragma once

#include <nnp/autocast.hpp>
#include <nnp/functional/windows.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <string>

namespace nnp::nn::functional {

template <size_t D>
struct ConvFuncOptions {
  NNP_ARG(Tensor, bias);
  NNP_ARG(ExpandingArray<D>, stride) = 1;
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(ExpandingArray<D>, dilation) = 1;
  NNP_ARG(int64_t, groups) = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;

namespace detail {

inline void check_window(const std::string& who, const Window& w) {
  check_at_least(who, "kernel_size", w.kernel, 1);
  check_at_least(who, "stride", w.stride, 1);
  check_at_least(who, "padding", w.padding, 0);
  check_at_least(who, "dilation", w.dilation, 1);
}

// The backend's fused convolution (nnp_api.conv2d_fused) where one applies,
// else an undefined tensor.
inline Tensor conv2d_fused(const Tensor& x, const Tensor& weight, const Tensor& bias, const Window& w, int64_t groups) {
  if (x.ndim() != 4 || weight.ndim() != 4) return Tensor();
  nnp_conv2d_params p{};
  p.struct_size = sizeof p;
  p.stride[0] = w.stride.h;
  p.stride[1] = w.stride.w;
  p.padding[0] = w.padding.h;
  p.padding[1] = w.padding.w;
  p.dilation[0] = w.dilation.h;
  p.dilation[1] = w.dilation.w;
  p.groups = groups;
  return Tensor::call(api().conv2d_fused, x.get(), weight.get(), bias.defined() ? bias.get() : nullptr, &p);
}

// x [N, C, H, W] with weight [O, C / groups, kh, kw]: the backend's fused
// kernel, or one GEMM per group over the im2col columns of the whole batch.
inline Tensor conv2d_windows(const std::string& who, Tensor x, Tensor weight, Tensor bias, const Window& w,
                             int64_t groups, WindowIndexCache& cache) {
  // Cast before the path is chosen: the fused kernel takes f32 only.
  nnp::detail::autocast_args("conv2d", {&x, &weight, &bias});
  if (Tensor fused = conv2d_fused(x, weight, bias, w, groups); fused.defined()) return fused;
  const Geometry g = geometry(who, x, w);
  const int64_t n = x.size(0), out_channels = weight.size(0);
  const int64_t k = x.size(1) / groups * w.kernel.h * w.kernel.w;
  // [G, C/G * kh*kw, N * L] against weights [G, O/G, C/G * kh*kw].
  Tensor cols = im2col(x, w, g, cache).reshape({groups, k, n * g.oh * g.ow});
  Tensor y = weight.reshape({groups, out_channels / groups, k})
                 .matmul(cols)
                 .reshape({out_channels, n, g.oh, g.ow})
                 .permute({1, 0, 2, 3});
  return bias.defined() ? y + bias.reshape({1, out_channels, 1, 1}) : y.contiguous();
}

inline void check_conv(const std::string& who, const Tensor& x, const Tensor& weight, int64_t groups, int32_t dims) {
  if (x.ndim() != dims + 2 || weight.ndim() != dims + 2)
    throw Error(NNP_SHAPE_MISMATCH, who + ": expected an input and a weight of " + std::to_string(dims + 2) +
                                        " dimensions, got " + shape_text(x.shape()) + " and " +
                                        shape_text(weight.shape()));
  if (groups < 1 || weight.size(0) % groups != 0)
    throw Error(NNP_INVALID_ARGUMENT, who + ": groups " + std::to_string(groups) +
                                          " must be >= 1 and divide the output channels " +
                                          std::to_string(weight.size(0)));
  if (x.size(1) != weight.size(1) * groups)
    throw Error(NNP_SHAPE_MISMATCH, who + ": the input has " + std::to_string(x.size(1)) + " channels but weight " +
                                        shape_text(weight.shape()) + " with groups " + std::to_string(groups) +
                                        " expects " + std::to_string(weight.size(1) * groups));
}

}  // namespace detail

inline Tensor conv2d(const Tensor& x, const Tensor& weight, const Conv2dFuncOptions& options = {}) {
  detail::check_conv("conv2d", x, weight, options.groups(), 2);
  const detail::Window w{{weight.size(2), weight.size(3)},
                         {options.stride()[0], options.stride()[1]},
                         {options.padding()[0], options.padding()[1]},
                         {options.dilation()[0], options.dilation()[1]}};
  detail::check_window("conv2d", w);
  detail::WindowIndexCache cache;
  return detail::conv2d_windows("conv2d", x, weight, options.bias(), w, options.groups(), cache);
}

// Runs as conv2d over a height of 1.
inline Tensor conv1d(const Tensor& x, const Tensor& weight, const Conv1dFuncOptions& options = {}) {
  detail::check_conv("conv1d", x, weight, options.groups(), 1);
  const detail::Window w{
      {1, weight.size(2)}, {1, options.stride()[0]}, {0, options.padding()[0]}, {1, options.dilation()[0]}};
  detail::check_window("conv1d", w);
  detail::WindowIndexCache cache;
  return detail::conv2d_windows("conv1d", x.unsqueeze(2), weight.unsqueeze(2), options.bias(), w, options.groups(),
                                cache)
      .squeeze(2);
}

}  // namespace nnp::nn::functional
