// nnp/functional/fractional_pooling.hpp - fractional max pooling (Graham's,
// PyTorch's F.fractional_max_pool2d/3d): windows of kernel_size placed at
// pseudo-random, increasing starts so that the output has a given size
// (or ratio of the input). Each plane's starts come from its own samples u
// in [0, 1) - one per dimension, drawn from the default generator unless
// given as _random_samples [N, C, D] - by PyTorch's rule
//   start_i = int((i + u) alpha) - int(u alpha), alpha = (in - k) / (out - 1),
// the last window ending at the input's end. The maximum over each window is
// gathered, so it is differentiable; indices are flat positions within the
// input plane, as MaxUnpool takes them.
#pragma once

#include <nnp/autocast.hpp>
#include <nnp/functional/pooling.hpp>
#include <nnp/options.hpp>
#include <nnp/tensor.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nnp::nn::functional {

template <size_t D>
struct FractionalMaxPoolFuncOptions {
  FractionalMaxPoolFuncOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit
  FractionalMaxPoolFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}            // NOLINT
  FractionalMaxPoolFuncOptions(std::initializer_list<int64_t> kernel_size)                    // NOLINT
      : kernel_size_(kernel_size) {}
  NNP_ARG(ExpandingArray<D>, kernel_size);
  NNP_ARG(std::optional<ExpandingArray<D>>, output_size);
  NNP_ARG(std::optional<std::vector<double>>, output_ratio);  // one value or D, each in (0, 1)
  NNP_ARG(Tensor, _random_samples);                           // [N, C, D] in [0, 1); undefined: drawn

 public:
  // output_size({3, 2}) and output_ratio(0.5), as libtorch takes them.
  auto& output_size(ExpandingArray<D> size) {
    output_size_ = size;
    return *this;
  }
  auto& output_ratio(double ratio) {
    output_ratio_ = std::vector<double>{ratio};
    return *this;
  }
};
using FractionalMaxPool2dFuncOptions = FractionalMaxPoolFuncOptions<2>;
using FractionalMaxPool3dFuncOptions = FractionalMaxPoolFuncOptions<3>;

namespace detail {

// PyTorch's generate_intervals, in the input's precision (Real).
template <typename Real>
std::vector<int64_t> fractional_starts(Real sample, int64_t input, int64_t output, int64_t pool) {
  std::vector<int64_t> starts(static_cast<size_t>(output));
  if (output > 1) {
    const Real alpha = static_cast<Real>(input - pool) / static_cast<Real>(output - 1);
    for (int64_t i = 0; i < output - 1; ++i)
      starts[static_cast<size_t>(i)] =
          static_cast<int64_t>((static_cast<Real>(i) + sample) * alpha) - static_cast<int64_t>(sample * alpha);
  }
  starts[static_cast<size_t>(output - 1)] = input - pool;
  return starts;
}

// The output size: given, or int(input size * ratio) per dimension.
// Exactly one of output_size and output_ratio; a ratio of one value or D,
// each in (0, 1). Returns the ratio per dimension (empty for a size).
template <size_t D>
std::vector<double> check_fractional_target(const std::string& who, const std::optional<ExpandingArray<D>>& output_size,
                                            const std::optional<std::vector<double>>& output_ratio) {
  if (output_size.has_value() == output_ratio.has_value())
    throw Error(NNP_INVALID_ARGUMENT, who + (output_size ? ": only one of output_size and output_ratio may be specified"
                                                         : " requires specifying either an output size, or a "
                                                           "pooling ratio"));
  if (output_size) return {};
  std::vector<double> ratio = *output_ratio;
  if (ratio.size() == 1) ratio.assign(D, ratio[0]);
  if (ratio.size() != D)
    throw Error(NNP_INVALID_ARGUMENT, who + ": output_ratio takes one value or " + std::to_string(D) + ", got " +
                                          std::to_string(ratio.size()));
  for (double r : ratio)
    if (!(r > 0 && r < 1))
      throw Error(NNP_INVALID_ARGUMENT, who + ": output_ratio must be between 0 and 1 (got " + std::to_string(r) + ")");
  return ratio;
}

// The output size: given, or int(input size * ratio) per dimension.
template <size_t D>
std::vector<int64_t> fractional_output_size(const std::string& who, const Tensor& x,
                                            const std::optional<ExpandingArray<D>>& output_size,
                                            const std::optional<std::vector<double>>& output_ratio) {
  const std::vector<double> ratio = check_fractional_target<D>(who, output_size, output_ratio);
  if (output_size) return output_size->vec();
  std::vector<int64_t> out;
  for (size_t i = 0; i < D; ++i)
    out.push_back(static_cast<int64_t>(
        static_cast<double>(x.size(x.ndim() - static_cast<int32_t>(D) + static_cast<int32_t>(i))) * ratio[i]));
  return out;
}

template <size_t D, typename Real>
std::vector<int64_t> fractional_index(const std::vector<double>& samples, const Shape& spatial,
                                      const std::vector<int64_t>& kernel, const std::vector<int64_t>& output,
                                      int64_t planes) {
  // PyTorch's sample order: (W, H) in 2-D, (T, H, W) in 3-D.
  const size_t sample_of[3] = {D == 2 ? 1u : 0u, D == 2 ? 0u : 1u, 2u};
  int64_t cells = 1, taps = 1;
  for (size_t d = 0; d < D; ++d) {
    cells *= output[d];
    taps *= kernel[d];
  }
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(planes * cells * taps));
  for (int64_t plane = 0; plane < planes; ++plane) {
    std::vector<std::vector<int64_t>> starts;
    for (size_t d = 0; d < D; ++d)
      starts.push_back(fractional_starts<Real>(
          static_cast<Real>(samples[static_cast<size_t>(plane) * D + sample_of[d]]), spatial[d], output[d], kernel[d]));
    for (int64_t cell = 0; cell < cells; ++cell)
      for (int64_t tap = 0; tap < taps; ++tap) {
        int64_t offset = 0, c = cell, t = tap;
        std::vector<int64_t> at(D);
        for (size_t d = D; d-- > 0;) {
          at[d] = starts[d][static_cast<size_t>(c % output[d])] + t % kernel[d];
          c /= output[d];
          t /= kernel[d];
        }
        for (size_t d = 0; d < D; ++d) offset = offset * spatial[d] + at[d];
        index.push_back(offset);
      }
  }
  return index;
}

template <size_t D>
MaxPooled fractional_max_pool(const std::string& who, const Tensor& input, const FractionalMaxPoolFuncOptions<D>& o,
                              bool with_indices) {
  const int32_t dims = static_cast<int32_t>(D);
  if (input.ndim() != dims + 1 && input.ndim() != dims + 2)
    throw Error(NNP_SHAPE_MISMATCH, who + ": expected " + std::to_string(dims + 1) + "-D or " +
                                        std::to_string(dims + 2) + "-D input, got " + shape_text(input.shape()));
  const bool unbatched = input.ndim() == dims + 1;
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  const int64_t n = x.size(0), c = x.size(1);
  const std::vector<int64_t> kernel = o.kernel_size().vec();
  const std::vector<int64_t> output = fractional_output_size<D>(who, x, o.output_size(), o.output_ratio());
  const Shape shape = x.shape();
  const Shape spatial(shape.begin() + 2, shape.end());
  static const char* const names2[] = {"height", "width"};
  static const char* const names3[] = {"time", "height", "width"};
  for (size_t d = 0; d < D; ++d) {
    const char* name = D == 2 ? names2[d] : names3[d];
    if (kernel[d] < 1 || output[d] < 1)
      throw Error(NNP_INVALID_ARGUMENT, who + ": kernel_size and output_size must be >= 1, got " + shape_text(kernel) +
                                            " and " + shape_text(output));
    // PyTorch's bound: the windows fit (in 3-D with a position to spare).
    if (__int128{output[d]} + kernel[d] - 1 > spatial[d] - (D == 3 ? 1 : 0))
      throw Error(NNP_SHAPE_MISMATCH, who + ": pool " + name + " " + std::to_string(kernel[d]) +
                                          " too large relative to input " + name + " " + std::to_string(spatial[d]));
  }
  // The windows are gathered whole: refuse what would not fit in memory.
  __int128 entries = __int128{n} * c;
  for (size_t d = 0; d < D; ++d) entries *= __int128{output[d]} * kernel[d];
  if (entries > (__int128{1} << 31))
    throw Error(NNP_INVALID_ARGUMENT, who + ": " + shape_text(output) + " windows of " + shape_text(kernel) + " over " +
                                          shape_text(x.shape()) +
                                          " are too many to gather (more than 2^31 taps); use a smaller kernel");
  Tensor samples = o._random_samples();
  if (!samples.defined()) samples = rand({n, c, dims}, x.dtype(), x.device());
  if (samples.shape() != Shape{n, c, dims})
    throw Error(NNP_SHAPE_MISMATCH, who + ": _random_samples must be [N, C, " + std::to_string(D) + "] = " +
                                        shape_text(Shape{n, c, dims}) + ", got " + shape_text(samples.shape()));
  const std::vector<double> u = samples.detach().to(Dtype::f64).to(Device::cpu()).template to_vector<double>();
  const std::vector<int64_t> index = x.dtype() == Dtype::f64
                                         ? fractional_index<D, double>(u, spatial, kernel, output, n * c)
                                         : fractional_index<D, float>(u, spatial, kernel, output, n * c);
  int64_t cells = 1, taps = 1, plane = 1;
  for (size_t d = 0; d < D; ++d) {
    cells *= output[d];
    taps *= kernel[d];
    plane *= spatial[d];
  }
  const Tensor positions = from_vector(index, {n, c, cells, taps}, x.device());
  const Tensor windows = x.reshape({n, c, plane}).gather(2, positions.reshape({n, c, cells * taps}));
  const Tensor cols = windows.reshape({n, c, cells, taps});
  const Tensor best = cols.argmax(3, true);  // the first maximum, as PyTorch's scan
  Shape out_shape{n, c};
  out_shape.insert(out_shape.end(), output.begin(), output.end());
  MaxPooled pooled{cols.gather(3, best).reshape(out_shape), Tensor()};
  if (with_indices) pooled.indices = positions.gather(3, best).reshape(out_shape);
  if (unbatched) {
    pooled.values = pooled.values.squeeze(0);
    if (with_indices) pooled.indices = pooled.indices.squeeze(0);
  }
  return pooled;
}

}  // namespace detail

inline Tensor fractional_max_pool2d(Tensor x, const FractionalMaxPool2dFuncOptions& o) {
  nnp::detail::autocast_args("fractional_max_pool2d", {&x});
  return detail::fractional_max_pool<2>("fractional_max_pool2d", x, o, false).values;
}
inline std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(Tensor x,
                                                                     const FractionalMaxPool2dFuncOptions& o) {
  nnp::detail::autocast_args("fractional_max_pool2d", {&x});
  detail::MaxPooled p = detail::fractional_max_pool<2>("fractional_max_pool2d", x, o, true);
  return {p.values, p.indices};
}
inline Tensor fractional_max_pool3d(Tensor x, const FractionalMaxPool3dFuncOptions& o) {
  nnp::detail::autocast_args("fractional_max_pool3d", {&x});
  return detail::fractional_max_pool<3>("fractional_max_pool3d", x, o, false).values;
}
inline std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(Tensor x,
                                                                     const FractionalMaxPool3dFuncOptions& o) {
  nnp::detail::autocast_args("fractional_max_pool3d", {&x});
  detail::MaxPooled p = detail::fractional_max_pool<3>("fractional_max_pool3d", x, o, true);
  return {p.values, p.indices};
}

}  // namespace nnp::nn::functional
