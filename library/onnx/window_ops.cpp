// Conv, ConvTranspose, MaxPool and AveragePool in every form ONNX writes
// that the importer's built-in layers (nn.Conv2d, nn.MaxPool2d, ...) do not
// take: weights computed by the graph, auto_pad, asymmetric pads,
// ConvTranspose's output_shape, pads wider than half a window. Asymmetric
// padding is applied to the input first (F::pad), so the layer functions
// run with none (a Conv's equal pads go to the convolution); an average that leaves the padding out divides the window
// sums of the input by those of a mask of ones.
#include <cmath>
#include <limits>

#include "op_support.hpp"

namespace nnp::library::onnx {

namespace {

namespace F = nnp::nn::functional;
using Ints = std::vector<int64_t>;

Ints or_ones(const Node& a, const char* name, size_t d) {
  Ints v = attr_ints(a, name);
  return v.empty() ? Ints(d, 1) : v;
}

struct Window {
  Ints kernel, stride, dilation, before, after;
};

// The window of a node over x's spatial axes, with auto_pad's pads worked
// out (SAME_UPPER puts the odd one at the end, SAME_LOWER at the start).
Window window_of(const Node& a, const Tensor& x, Ints kernel, const char* op) {
  if (x.ndim() < 3 || x.ndim() > 5) invalid(std::string(op) + ": needs [N, C, D1 (, D2 (, D3))]");
  const size_t d = static_cast<size_t>(x.ndim() - 2);
  Window w{std::move(kernel), or_ones(a, "strides", d), or_ones(a, "dilations", d), Ints(d, 0), Ints(d, 0)};
  if (w.kernel.size() != d || w.stride.size() != d || w.dilation.size() != d)
    invalid(std::string(op) + ": kernel_shape, strides and dilations need one value per spatial axis");
  const std::string auto_pad = attr_string(a, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < d; ++i) {
      const int64_t in = x.size(static_cast<int32_t>(i + 2)), s = w.stride[i];
      if (s < 1) invalid(std::string(op) + ": strides must be positive");
      const int64_t out = (in + s - 1) / s, extent = (w.kernel[i] - 1) * w.dilation[i] + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      w.before[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.after[i] = total - w.before[i];
    }
  } else if (auto_pad == "NOTSET") {
    const Ints pads = attr_ints(a, "pads");
    if (!pads.empty() && pads.size() != 2 * d) invalid(std::string(op) + ": pads need two values per spatial axis");
    for (size_t i = 0; i < d && !pads.empty(); ++i) {
      w.before[i] = pads[i];
      w.after[i] = pads[i + d];
      if (w.before[i] < 0 || w.after[i] < 0) invalid(std::string(op) + ": pads must not be negative");
    }
  } else if (auto_pad != "VALID") {
    invalid(std::string(op) + ": auto_pad '" + auto_pad + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  return w;
}

// x with `before` and `after` elements of value added to each spatial axis.
Tensor padded(const Tensor& x, const Window& w, double value) {
  std::vector<int64_t> pairs;  // F::pad's order: the last axis first
  bool any = false;
  for (size_t i = w.before.size(); i-- > 0;) {
    pairs.push_back(w.before[i]);
    pairs.push_back(w.after[i]);
    any = any || w.before[i] || w.after[i];
  }
  return any ? F::pad(x, F::PadFuncOptions(pairs).value(value)) : x;
}

}  // namespace

Tensors run_conv(const Tensors& in, const Node& a) {
  const Tensor &x = need(in, 0, "Conv"), &weight = need(in, 1, "Conv");
  if (weight.ndim() != x.ndim()) invalid("Conv: the weight's rank must be the input's");
  Ints kernel = attr_ints(a, "kernel_shape");
  if (kernel.empty())
    for (int32_t i = 2; i < weight.ndim(); ++i) kernel.push_back(weight.size(i));
  const Window w = window_of(a, x, kernel, "Conv");
  // Pads equal on both sides go to the convolution itself (its kernel pads
  // as it reads); others are added to the input first.
  const bool symmetric = w.before == w.after;
  const Tensor xp = symmetric ? x : padded(x, w, 0);
  const Ints pad = symmetric ? w.before : Ints(w.before.size(), 0);
  const int64_t groups = attr_int(a, "group", 1);
  const Tensor bias = given(in, 2) ? in[2] : Tensor();
  switch (x.ndim()) {
    case 3:
      return {F::conv1d(
          xp, weight,
          F::Conv1dFuncOptions().stride(w.stride).padding(pad).dilation(w.dilation).groups(groups).bias(bias))};
    case 4:
      return {F::conv2d(
          xp, weight,
          F::Conv2dFuncOptions().stride(w.stride).padding(pad).dilation(w.dilation).groups(groups).bias(bias))};
    default:
      return {F::conv3d(
          xp, weight,
          F::Conv3dFuncOptions().stride(w.stride).padding(pad).dilation(w.dilation).groups(groups).bias(bias))};
  }
}

namespace {

// ConvTranspose: the full transposed convolution (no padding), output_padding
// zeros added at the end of each axis, the pads cropped, then the bias.
// output_shape (or auto_pad SAME: the input times the stride) sets the pads.
Tensors conv_transpose(const Tensors& in, const Node& a) {
  const Tensor &x = need(in, 0, "ConvTranspose"), &weight = need(in, 1, "ConvTranspose");
  if (weight.ndim() != x.ndim()) invalid("ConvTranspose: the weight's rank must be the input's");
  const size_t d = static_cast<size_t>(x.ndim() - 2);
  Ints kernel = attr_ints(a, "kernel_shape");
  if (kernel.empty())
    for (int32_t i = 2; i < weight.ndim(); ++i) kernel.push_back(weight.size(i));
  Window w{kernel, or_ones(a, "strides", d), or_ones(a, "dilations", d), Ints(d, 0), Ints(d, 0)};
  Ints output_padding = attr_ints(a, "output_padding");
  if (output_padding.empty()) output_padding.assign(d, 0);
  const Ints output_shape = attr_ints(a, "output_shape"), pads = attr_ints(a, "pads");
  const std::string auto_pad = attr_string(a, "auto_pad", "NOTSET");
  if (kernel.size() != d || w.stride.size() != d || w.dilation.size() != d || output_padding.size() != d ||
      (!pads.empty() && pads.size() != 2 * d) || (!output_shape.empty() && output_shape.size() < d))
    invalid(
        "ConvTranspose: kernel_shape, strides, dilations, output_padding, pads and output_shape need a value "
        "per spatial axis");
  for (size_t i = 0; i < d; ++i) {
    const int64_t input = x.size(static_cast<int32_t>(i + 2));
    const int64_t full = w.stride[i] * (input - 1) + output_padding[i] + (kernel[i] - 1) * w.dilation[i] + 1;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t wanted = output_shape.empty() ? input * w.stride[i] : output_shape[output_shape.size() - d + i];
      const int64_t total = full - wanted;
      if (total < 0) {  // larger than the full result: zeros added at the end, as output_padding
        output_padding[i] -= total;
        continue;
      }
      w.before[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.after[i] = total - w.before[i];
    } else if (!pads.empty() && auto_pad != "VALID") {
      w.before[i] = pads[i];
      w.after[i] = pads[i + d];
    }
  }
  const int64_t groups = attr_int(a, "group", 1);
  Tensor y;
  switch (x.ndim()) {
    case 3:
      y = F::conv_transpose1d(x, weight,
                              F::ConvTranspose1dFuncOptions().stride(w.stride).dilation(w.dilation).groups(groups));
      break;
    case 4:
      y = F::conv_transpose2d(x, weight,
                              F::ConvTranspose2dFuncOptions().stride(w.stride).dilation(w.dilation).groups(groups));
      break;
    case 5:
      y = F::conv_transpose3d(x, weight,
                              F::ConvTranspose3dFuncOptions().stride(w.stride).dilation(w.dilation).groups(groups));
      break;
    default: invalid("ConvTranspose: needs [N, C, D1 (, D2 (, D3))]");
  }
  for (size_t i = 0; i < d; ++i) {
    const int32_t axis = static_cast<int32_t>(i + 2);
    if (output_padding[i] > 0) {
      Window extra{{}, {}, {}, Ints(d, 0), Ints(d, 0)};
      extra.after[i] = output_padding[i];
      y = padded(y, extra, 0);
    }
    const int64_t size = y.size(axis);
    if (w.before[i] + w.after[i] > size) invalid("ConvTranspose: pads crop more than the result holds");
    y = y.slice(axis, w.before[i], size - w.after[i]);
  }
  if (given(in, 2)) {
    nnp::Shape per_channel(static_cast<size_t>(y.ndim()), 1);
    per_channel[1] = -1;
    y = y + in[2].reshape(per_channel);
  }
  return {y};
}

template <bool Max>
Tensor pool(const Tensor& x, const Window& w, bool ceil) {
  switch (x.ndim()) {
    case 3:
      if (Max)
        return F::max_pool1d(x,
                             F::MaxPool1dFuncOptions(w.kernel).stride(w.stride).dilation(w.dilation).ceil_mode(ceil));
      return F::avg_pool1d(x, F::AvgPool1dFuncOptions(w.kernel).stride(w.stride).ceil_mode(ceil));
    case 4:
      if (Max)
        return F::max_pool2d(x,
                             F::MaxPool2dFuncOptions(w.kernel).stride(w.stride).dilation(w.dilation).ceil_mode(ceil));
      return F::avg_pool2d(x, F::AvgPool2dFuncOptions(w.kernel).stride(w.stride).ceil_mode(ceil));
    default:
      if (Max)
        return F::max_pool3d(x,
                             F::MaxPool3dFuncOptions(w.kernel).stride(w.stride).dilation(w.dilation).ceil_mode(ceil));
      return F::avg_pool3d(x, F::AvgPool3dFuncOptions(w.kernel).stride(w.stride).ceil_mode(ceil));
  }
}

// MaxPool's Indices: ONNX counts over the whole unpadded input (row-major,
// or column-major within each plane for storage_order 1); F::max_pool2d's
// indices count within a padded plane. 2-D only.
Tensors max_pool_with_indices(const Tensor& x, const Window& w, bool ceil, double lowest, bool column_major) {
  if (x.ndim() != 4) refuse("MaxPool: the Indices output is supported for 2-D pooling only");
  const Tensor xp = padded(x, w, lowest);
  auto [values, plane_indices] = F::max_pool2d_with_indices(
      xp, F::MaxPool2dFuncOptions(w.kernel).stride(w.stride).dilation(w.dilation).ceil_mode(ceil));
  const int64_t height = x.size(2), width = x.size(3), padded_width = xp.size(3);
  const int64_t per_plane = plane_indices.numel() / std::max<int64_t>(1, x.size(0) * x.size(1));
  std::vector<int64_t> indices = host_ints(plane_indices);
  for (size_t i = 0; i < indices.size(); ++i) {
    const int64_t h = indices[i] / padded_width - w.before[0], c = indices[i] % padded_width - w.before[1];
    const int64_t plane = static_cast<int64_t>(i) / std::max<int64_t>(1, per_plane);
    indices[i] = plane * height * width + (column_major ? c * height + h : h * width + c);
  }
  return {values, nnp::from_vector(indices, plane_indices.shape(), x.device())};
}

template <bool Max>
Tensors pooling(const Tensors& in, const Node& a) {
  const char* op = Max ? "MaxPool" : "AveragePool";
  const Tensor& x = need(in, 0, op);
  const Window w = window_of(a, x, attr_ints(a, "kernel_shape"), op);
  const bool ceil = attr_int(a, "ceil_mode", 0) != 0;
  if (Max) {
    const double lowest = floating(x) ? -std::numeric_limits<double>::infinity() : -9.2e18;
    if (a.outputs > 1) return max_pool_with_indices(x, w, ceil, lowest, attr_int(a, "storage_order", 0) != 0);
    return {pool<true>(padded(x, w, lowest), w, ceil)};
  }
  if (std::any_of(w.dilation.begin(), w.dilation.end(), [](int64_t v) { return v != 1; }))
    refuse("AveragePool: dilations are not supported");
  const Tensor sums = pool<false>(padded(x, w, 0), w, ceil);
  const bool padded_any = std::any_of(w.before.begin(), w.before.end(), [](int64_t v) { return v != 0; }) ||
                          std::any_of(w.after.begin(), w.after.end(), [](int64_t v) { return v != 0; });
  if (attr_int(a, "count_include_pad", 0) != 0 || !padded_any) return {sums};
  // Both averages divide by the same window sizes: their ratio is the sum
  // over the elements of x in the window, divided by their count.
  const Tensor counts = pool<false>(padded(nnp::ones(x.shape(), x.dtype(), x.device()), w, 0), w, ceil);
  return {sums / counts};
}

}  // namespace

void add_window_ops(OpTable& t) {
  t.insert({{"AveragePool", pooling<false>},
            {"Conv", run_conv},
            {"ConvTranspose", conv_transpose},
            {"MaxPool", pooling<true>}});
}

}  // namespace nnp::library::onnx
