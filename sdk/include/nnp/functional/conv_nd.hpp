// nnp/functional/conv_nd.hpp - sliding windows in one to three dimensions,
// gathered into columns (im2col) and scattered back (col2im) through one
// precomputed index: PyTorch's F.conv3d, F.conv_transpose1d/2d/3d, F.unfold
// and F.fold. A transposed convolution is the adjoint of a convolution: one
// GEMM from the input to columns, then col2im adds every column into the
// output, as PyTorch computes it; both directions are differentiable ops
// (index_select, scatter_add, matmul).
#pragma once

#include <array>
#include <functional>
#include <nnp/functional/conv.hpp>
#include <nnp/functional/padding.hpp>
#include <optional>

namespace nnp::nn::functional {

template <size_t D>
struct ConvTransposeFuncOptions {
  NNP_ARG(Tensor, bias);
  NNP_ARG(ExpandingArray<D>, stride) = 1;
  NNP_ARG(ExpandingArray<D>, padding) = 0;
  NNP_ARG(ExpandingArray<D>, output_padding) = 0;
  NNP_ARG(int64_t, groups) = 1;
  NNP_ARG(ExpandingArray<D>, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

struct UnfoldFuncOptions {
  UnfoldFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(ExpandingArray<2>, kernel_size);
  NNP_ARG(ExpandingArray<2>, dilation) = 1;
  NNP_ARG(ExpandingArray<2>, padding) = 0;
  NNP_ARG(ExpandingArray<2>, stride) = 1;
};
struct FoldFuncOptions {
  FoldFuncOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  NNP_ARG(ExpandingArray<2>, output_size);
  NNP_ARG(ExpandingArray<2>, kernel_size);
  NNP_ARG(ExpandingArray<2>, dilation) = 1;
  NNP_ARG(ExpandingArray<2>, padding) = 0;
  NNP_ARG(ExpandingArray<2>, stride) = 1;
};

namespace detail {

// The windows of an op over the last kernel.size() dimensions.
struct Grid {
  std::vector<int64_t> kernel, stride, dilation;
  size_t dims() const { return kernel.size(); }
  int64_t taps() const {
    int64_t t = 1;
    for (int64_t k : kernel) t *= k;
    return t;
  }
};

inline void check_sizes(const std::string& who, const char* name, const std::vector<int64_t>& v, int64_t minimum) {
  for (int64_t e : v)
    if (e < minimum)
      throw Error(NNP_INVALID_ARGUMENT, who + ": " + name + " " + shape_text(v) +
                                            " must be >= " + std::to_string(minimum) + " in every dimension");
}

inline void check_grid(const std::string& who, const Grid& g) {
  check_sizes(who, "kernel_size", g.kernel, 1);
  check_sizes(who, "stride", g.stride, 1);
  check_sizes(who, "dilation", g.dilation, 1);
}

// Windows along each dimension of a (padded) extent; 128-bit arithmetic,
// since the sizes may come from a stranger's spec.
inline std::vector<int64_t> window_counts(const std::string& who, const std::vector<int64_t>& extent, const Grid& g) {
  std::vector<int64_t> counts;
  for (size_t i = 0; i < g.dims(); ++i) {
    const __int128 span = __int128{g.dilation[i]} * (g.kernel[i] - 1) + 1;
    if (span > extent[i])
      throw Error(NNP_SHAPE_MISMATCH, who + ": kernel " + shape_text(g.kernel) + " with dilation " +
                                          shape_text(g.dilation) + " spans more than the padded input " +
                                          shape_text(extent));
    counts.push_back(static_cast<int64_t>((extent[i] - span) / g.stride[i] + 1));
  }
  return counts;
}

// Where each tap of each window lies in [N * prod(extent)]: laid out [taps,
// N, windows], so rows of [C, N * plane] gathered by it are im2col's columns
// [C * taps, N * windows] (the order conv2d's GEMM reads).
inline std::vector<int64_t> window_positions(const std::string& who, int64_t n, const std::vector<int64_t>& extent,
                                             const std::vector<int64_t>& counts, const Grid& g) {
  // Up to three dimensions, leading ones of size 1.
  std::array<int64_t, 3> e{1, 1, 1}, c{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1};
  if (g.dims() > 3) throw Error(NNP_INVALID_ARGUMENT, who + ": at most 3 spatial dimensions");
  const size_t lead = 3 - g.dims();
  for (size_t i = 0; i < g.dims(); ++i) {
    e[lead + i] = extent[i];
    c[lead + i] = counts[i];
    k[lead + i] = g.kernel[i];
    s[lead + i] = g.stride[i];
    d[lead + i] = g.dilation[i];
  }
  const __int128 total = __int128{k[0]} * k[1] * k[2] * n * c[0] * c[1] * c[2];
  const __int128 plane = __int128{e[0]} * e[1] * e[2];
  constexpr int64_t kMaxPositions = int64_t{1} << 31;  // an index held on the host
  if (total > kMaxPositions || plane * n > INT64_MAX)
    throw Error(NNP_INVALID_ARGUMENT, who + ": " +
                                          std::to_string(static_cast<int64_t>(std::min<__int128>(total, INT64_MAX))) +
                                          " window positions are more than 2^31; use smaller inputs or kernels");
  std::vector<int64_t> positions;
  positions.reserve(static_cast<size_t>(total));
  for (int64_t k0 = 0; k0 < k[0]; ++k0)
    for (int64_t k1 = 0; k1 < k[1]; ++k1)
      for (int64_t k2 = 0; k2 < k[2]; ++k2)
        for (int64_t b = 0; b < n; ++b)
          for (int64_t o0 = 0; o0 < c[0]; ++o0)
            for (int64_t o1 = 0; o1 < c[1]; ++o1) {
              const int64_t row = b * static_cast<int64_t>(plane) +
                                  ((o0 * s[0] + k0 * d[0]) * e[1] + (o1 * s[1] + k1 * d[1])) * e[2] + k2 * d[2];
              for (int64_t o2 = 0; o2 < c[2]; ++o2) positions.push_back(row + o2 * s[2]);
            }
  return positions;
}

inline std::vector<int64_t> spatial(const Tensor& x, size_t dims) {
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < dims; ++i) sizes.push_back(x.size(x.ndim() - static_cast<int32_t>(dims - i)));
  return sizes;
}

// x [N, C, *extent] (padded already) -> columns [C * taps, N * windows].
inline Tensor im2col_nd(const std::string& who, const Tensor& x, const Grid& g, const std::vector<int64_t>& counts,
                        WindowIndexCache& cache) {
  const int64_t n = x.size(0), c = x.size(1);
  const std::vector<int64_t> extent = spatial(x, g.dims());
  Tensor index = cache.get(x, [&] { return window_positions(who, n, extent, counts, g); });
  std::vector<int32_t> order{1, 0};
  for (size_t i = 0; i < g.dims(); ++i) order.push_back(static_cast<int32_t>(i + 2));
  Tensor rows = x.permute(order).reshape({c, -1});
  int64_t windows = 1;
  for (int64_t w : counts) windows *= w;
  return rows.index_select(1, index).reshape({c * g.taps(), n * windows});
}

// The adjoint of im2col_nd: columns [C * taps, N * windows] added into
// [N, C, *extent] where their taps lie.
inline Tensor col2im_nd(const std::string& who, const Tensor& cols, int64_t n, int64_t c,
                        const std::vector<int64_t>& extent, const std::vector<int64_t>& counts, const Grid& g,
                        WindowIndexCache& cache) {
  Shape key{n, c};
  key.insert(key.end(), extent.begin(), extent.end());
  key.insert(key.end(), counts.begin(), counts.end());
  Tensor index = cache.get(key, cols.device(), [&] { return window_positions(who, n, extent, counts, g); });
  int64_t plane = 1;
  for (int64_t e : extent) plane *= e;
  const int64_t spread = index.numel();
  Tensor sums = zeros({c, n * plane}, cols.dtype(), cols.device())
                    .scatter_add(1, index.reshape({1, spread}).expand({c, spread}), cols.reshape({c, spread}));
  Shape laid{c, n};
  laid.insert(laid.end(), extent.begin(), extent.end());
  std::vector<int32_t> order{1, 0};
  for (size_t i = 0; i < g.dims(); ++i) order.push_back(static_cast<int32_t>(i + 2));
  return sums.reshape(laid).permute(order);
}

// F.pad's list for `before`/`after` per dimension (last dimension first).
inline std::vector<int64_t> pad_list(const std::vector<int64_t>& before, const std::vector<int64_t>& after) {
  std::vector<int64_t> list;
  for (size_t i = before.size(); i-- > 0;) {
    list.push_back(before[i]);
    list.push_back(after[i]);
  }
  return list;
}

inline Tensor crop(const Tensor& y, const std::vector<int64_t>& start, const std::vector<int64_t>& size) {
  Tensor out = y;
  for (size_t i = 0; i < start.size(); ++i) {
    const int32_t dim = y.ndim() - static_cast<int32_t>(start.size() - i);
    if (start[i] != 0 || size[i] != y.size(dim)) out = out.slice(dim, start[i], start[i] + size[i]);
  }
  return out;
}

inline Tensor add_channel_bias(const Tensor& y, const Tensor& bias) {
  if (!bias.defined()) return y.contiguous();
  Shape shape(static_cast<size_t>(y.ndim()), 1);
  shape[1] = bias.numel();
  return y + bias.reshape(shape);
}

// x [N, C, *in] padded by before/after (zeros) and convolved with weight
// [O, C / groups, *kernel]: one GEMM per group over the whole batch.
inline Tensor conv_nd(const std::string& who, Tensor x, Tensor weight, Tensor bias, const Grid& g,
                      const std::vector<int64_t>& before, const std::vector<int64_t>& after, int64_t groups,
                      WindowIndexCache& cache) {
  nnp::detail::autocast_args(g.dims() == 3 ? "conv3d" : g.dims() == 2 ? "conv2d" : "conv1d", {&x, &weight, &bias});
  check_grid(who, g);
  bool padded = false;
  for (size_t i = 0; i < g.dims(); ++i) padded = padded || before[i] != 0 || after[i] != 0;
  const Tensor xp = padded ? pad(x, pad_list(before, after)) : x;
  const std::vector<int64_t> counts = window_counts(who, spatial(xp, g.dims()), g);
  const int64_t n = x.size(0), out_channels = weight.size(0), k = x.size(1) / groups * g.taps();
  Tensor cols = im2col_nd(who, xp, g, counts, cache).reshape({groups, k, -1});
  Shape laid{out_channels, n};
  laid.insert(laid.end(), counts.begin(), counts.end());
  std::vector<int32_t> order{1, 0};
  for (size_t i = 0; i < g.dims(); ++i) order.push_back(static_cast<int32_t>(i + 2));
  Tensor y = weight.reshape({groups, out_channels / groups, k}).matmul(cols).reshape(laid).permute(order);
  return add_channel_bias(y, bias);
}

// The transposed convolution of x [N, C, *in] with weight [C, O / groups,
// *kernel]: output size (in - 1) * stride - 2 * padding + dilation *
// (kernel - 1) + output_padding + 1.
inline Tensor conv_transpose_nd(const std::string& who, Tensor x, Tensor weight, Tensor bias, const Grid& g,
                                const std::vector<int64_t>& padding, const std::vector<int64_t>& output_padding,
                                int64_t groups, WindowIndexCache& cache) {
  const size_t dims = g.dims();
  nnp::detail::autocast_args(dims == 3   ? "conv_transpose3d"
                             : dims == 2 ? "conv_transpose2d"
                                         : "conv_transpose1d",
                             {&x, &weight, &bias});
  // f32 on the CPU: the product inside must not be cast back down.
  const nnp::detail::AutocastOffFor as_cast(x);
  check_grid(who, g);
  check_sizes(who, "padding", padding, 0);
  check_sizes(who, "output_padding", output_padding, 0);
  if (x.ndim() != static_cast<int32_t>(dims) + 2 || weight.ndim() != static_cast<int32_t>(dims) + 2)
    throw Error(NNP_SHAPE_MISMATCH, who + ": expected an input and a weight of " + std::to_string(dims + 2) +
                                        " dimensions, got " + shape_text(x.shape()) + " and " +
                                        shape_text(weight.shape()));
  if (groups < 1 || x.size(1) != weight.size(0) || x.size(1) % groups != 0)
    throw Error(NNP_SHAPE_MISMATCH, who + ": the input has " + std::to_string(x.size(1)) + " channels but weight " +
                                        shape_text(weight.shape()) + " with groups " + std::to_string(groups) +
                                        " expects " + std::to_string(weight.size(0)) + ", divisible by groups");
  const std::vector<int64_t> in = spatial(x, dims);
  std::vector<int64_t> extent, out;
  for (size_t i = 0; i < dims; ++i) {
    if (output_padding[i] >= std::max(g.stride[i], g.dilation[i]))
      throw Error(NNP_INVALID_ARGUMENT, who + ": output_padding " + shape_text(output_padding) +
                                            " must be smaller than either stride " + shape_text(g.stride) +
                                            " or dilation " + shape_text(g.dilation));
    const __int128 full =
        (__int128{in[i]} - 1) * g.stride[i] + __int128{g.dilation[i]} * (g.kernel[i] - 1) + 1 + output_padding[i];
    const __int128 size = full - 2 * __int128{padding[i]};
    if (in[i] < 1 || full > (int64_t{1} << 40) || size < 1)
      throw Error(NNP_SHAPE_MISMATCH, who + ": input " + shape_text(x.shape()) + " with stride " +
                                          shape_text(g.stride) + ", padding " + shape_text(padding) + " and kernel " +
                                          shape_text(g.kernel) + " gives an output of size " +
                                          std::to_string(static_cast<int64_t>(size)) + " (must be 1 to 2^40)");
    extent.push_back(static_cast<int64_t>(full));
    out.push_back(static_cast<int64_t>(size));
  }
  const int64_t n = x.size(0), c = x.size(1), o = weight.size(1) * groups, taps = g.taps();
  std::vector<int32_t> order{1, 0};
  for (size_t i = 0; i < dims; ++i) order.push_back(static_cast<int32_t>(i + 2));
  // [G, C/G, N * L]: the input's channels of each group as rows.
  Tensor rows = x.permute(order).reshape({groups, c / groups, -1});
  Tensor cols = weight.reshape({groups, c / groups, o / groups * taps}).transpose(1, 2).matmul(rows);
  Tensor y = col2im_nd(who, cols.reshape({o * taps, -1}), n, o, extent, in, g, cache);
  return add_channel_bias(crop(y, padding, out), bias);
}

template <size_t D>
Grid grid_of(const ExpandingArray<D>& kernel, const ExpandingArray<D>& stride, const ExpandingArray<D>& dilation) {
  return {kernel.vec(), stride.vec(), dilation.vec()};
}

// [C, *] runs as a batch of one.
inline Tensor batch_of_one(const Tensor& x, int32_t batched_ndim, const std::function<Tensor(const Tensor&)>& op) {
  return x.ndim() == batched_ndim - 1 ? op(x.unsqueeze(0)).squeeze(0) : op(x);
}

}  // namespace detail

inline Tensor conv3d(const Tensor& x, const Tensor& weight, const Conv3dFuncOptions& options = {}) {
  return detail::batch_of_one(x, 5, [&](const Tensor& batched) {
    detail::check_conv("conv3d", batched, weight, options.groups(), 3);
    detail::check_sizes("conv3d", "padding", options.padding().vec(), 0);
    const detail::Grid g{detail::spatial(weight, 3), options.stride().vec(), options.dilation().vec()};
    detail::WindowIndexCache cache;
    return detail::conv_nd("conv3d", batched, weight, options.bias(), g, options.padding().vec(),
                           options.padding().vec(), options.groups(), cache);
  });
}

template <size_t D>
Tensor conv_transpose(const char* who, const Tensor& x, const Tensor& weight,
                      const ConvTransposeFuncOptions<D>& options) {
  return detail::batch_of_one(x, D + 2, [&](const Tensor& batched) {
    const detail::Grid g{detail::spatial(weight, D), options.stride().vec(), options.dilation().vec()};
    detail::WindowIndexCache cache;
    return detail::conv_transpose_nd(who, batched, weight, options.bias(), g, options.padding().vec(),
                                     options.output_padding().vec(), options.groups(), cache);
  });
}
inline Tensor conv_transpose1d(const Tensor& x, const Tensor& weight, const ConvTranspose1dFuncOptions& o = {}) {
  return conv_transpose<1>("conv_transpose1d", x, weight, o);
}
inline Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const ConvTranspose2dFuncOptions& o = {}) {
  return conv_transpose<2>("conv_transpose2d", x, weight, o);
}
inline Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const ConvTranspose3dFuncOptions& o = {}) {
  return conv_transpose<3>("conv_transpose3d", x, weight, o);
}

namespace detail {

inline Tensor unfold_with(const Tensor& x, const UnfoldFuncOptions& o, WindowIndexCache& cache) {
  if (x.ndim() != 3 && x.ndim() != 4)
    throw Error(NNP_SHAPE_MISMATCH, "unfold: expected [N, C, H, W] or [C, H, W], got " + shape_text(x.shape()));
  return batch_of_one(x, 4, [&](const Tensor& b) {
    const Grid g = grid_of<2>(o.kernel_size(), o.stride(), o.dilation());
    check_grid("unfold", g);
    check_sizes("unfold", "padding", o.padding().vec(), 0);
    const Tensor xp = pad(b, pad_list(o.padding().vec(), o.padding().vec()));
    const std::vector<int64_t> counts = window_counts("unfold", spatial(xp, 2), g);
    const int64_t n = b.size(0);
    return im2col_nd("unfold", xp, g, counts, cache).reshape({-1, n, counts[0] * counts[1]}).permute({1, 0, 2});
  });
}

inline Tensor fold_with(const Tensor& x, const FoldFuncOptions& o, WindowIndexCache& cache) {
  if (x.ndim() != 2 && x.ndim() != 3)
    throw Error(NNP_SHAPE_MISMATCH,
                "fold: expected [N, C * kernel taps, L] or [C * taps, L], got " + shape_text(x.shape()));
  return batch_of_one(x, 3, [&](const Tensor& b) {
    const Grid g = grid_of<2>(o.kernel_size(), o.stride(), o.dilation());
    check_grid("fold", g);
    check_sizes("fold", "output_size", o.output_size().vec(), 1);
    check_sizes("fold", "padding", o.padding().vec(), 0);
    std::vector<int64_t> extent;
    for (size_t i = 0; i < 2; ++i) {
      const __int128 e = __int128{o.output_size()[i]} + 2 * __int128{o.padding()[i]};
      if (e > (int64_t{1} << 40))
        throw Error(NNP_INVALID_ARGUMENT, "fold: output_size plus padding is larger than 2^40");
      extent.push_back(static_cast<int64_t>(e));
    }
    const std::vector<int64_t> counts = window_counts("fold", extent, g);
    const int64_t n = b.size(0), taps = g.taps();
    if (b.size(1) % taps != 0)
      throw Error(NNP_SHAPE_MISMATCH,
                  "fold: expected size of input's dimension 1 to be divisible by the product of "
                  "kernel_size (" +
                      std::to_string(taps) + "), got " + shape_text(b.shape()));
    if (b.size(2) != counts[0] * counts[1])
      throw Error(NNP_SHAPE_MISMATCH, "fold: the input has " + std::to_string(b.size(2)) +
                                          " blocks but output_size, kernel_size, dilation, padding and stride give " +
                                          std::to_string(counts[0] * counts[1]));
    const int64_t c = b.size(1) / taps;
    Tensor y = col2im_nd("fold", b.permute({1, 0, 2}).reshape({c * taps, -1}), n, c, extent, counts, g, cache);
    return crop(y, o.padding().vec(), o.output_size().vec());
  });
}

}  // namespace detail

// [N, C, H, W] -> [N, C * kh * kw, L]: every sliding block as a column.
inline Tensor unfold(const Tensor& x, const UnfoldFuncOptions& options) {
  detail::WindowIndexCache cache;
  return detail::unfold_with(x, options, cache);
}

// [N, C * kh * kw, L] -> [N, C, *output_size]: blocks summed where they
// overlap (unfold's adjoint).
inline Tensor fold(const Tensor& x, const FoldFuncOptions& options) {
  detail::WindowIndexCache cache;
  return detail::fold_with(x, options, cache);
}

}  // namespace nnp::nn::functional
