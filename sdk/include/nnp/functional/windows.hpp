// nnp/functional/windows.hpp - sliding windows over [N, C, H, W] gathered
// with index_select (im2col), shared by convolution and pooling. Every
// window op is therefore composed of differentiable ops, and GEMM does the
// heavy work of a convolution.
#pragma once

#include <algorithm>
#include <mutex>
#include <nnp/functional/normalization.hpp>
#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp::nn::functional::detail {

struct Pair {
  int64_t h, w;
};

inline std::string pair_text(Pair p) { return "(" + std::to_string(p.h) + ", " + std::to_string(p.w) + ")"; }

inline void check_at_least(const std::string& who, const char* name, Pair p, int64_t minimum) {
  if (p.h < minimum || p.w < minimum)
    throw Error(NNP_INVALID_ARGUMENT,
                who + ": " + name + " " + pair_text(p) + " must be >= " + std::to_string(minimum));
}

// Pads dims 2 and 3 of x with `value` (differentiable: cat of constants),
// `before` rows and columns ahead and `after` behind.
inline Tensor pad2d(const Tensor& x, Pair before, Pair after, double value) {
  Tensor out = x;
  const auto pad_dim = [&](int32_t dim, int64_t ahead, int64_t behind) {
    if (ahead == 0 && behind == 0) return;
    std::vector<Tensor> parts;
    Shape s = out.shape();
    if (ahead > 0) {
      s[static_cast<size_t>(dim)] = ahead;
      parts.push_back(full(s, value, x.dtype(), x.device()));
    }
    parts.push_back(out);
    if (behind > 0) {
      s[static_cast<size_t>(dim)] = behind;
      parts.push_back(full(s, value, x.dtype(), x.device()));
    }
    out = cat(parts, dim);
  };
  pad_dim(2, before.h, after.h);
  pad_dim(3, before.w, after.w);
  return out;
}
inline Tensor pad2d(const Tensor& x, Pair pad, double value) { return pad2d(x, pad, pad, value); }

// The windows of one op: sizes, and the output they give on a padded input.
struct Window {
  Pair kernel, stride, padding, dilation;
};
// hp, wp: the padded plane, with `overhang` more rows and columns behind
// where ceil_mode lets the last window run past the padding.
struct Geometry {
  int64_t hp, wp, oh, ow;
  Pair overhang{0, 0};
};

// Output size along one dimension, PyTorch's rule: with ceil_mode the last
// window must still start inside the input or its leading padding.
inline int64_t windows_along(__int128 padded, __int128 span, int64_t stride, int64_t size, int64_t pad,
                             bool ceil_mode) {
  const __int128 room = padded - span;
  __int128 out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= __int128{size} + pad) --out;
  return static_cast<int64_t>(out);
}

inline Geometry geometry(const std::string& who, const Tensor& x, const Window& w, bool ceil_mode = false) {
  if (x.ndim() != 4) throw Error(NNP_SHAPE_MISMATCH, who + ": expected [N, C, H, W], got " + shape_text(x.shape()));
  // In 128 bits: padding, dilation and kernel sizes come from specs and may
  // be anything up to INT64_MAX.
  using Wide = __int128;
  const Wide hp = Wide{x.size(2)} + 2 * Wide{w.padding.h}, wp = Wide{x.size(3)} + 2 * Wide{w.padding.w};
  const Wide span_h = Wide{w.dilation.h} * (w.kernel.h - 1) + 1, span_w = Wide{w.dilation.w} * (w.kernel.w - 1) + 1;
  if (hp > INT64_MAX || wp > INT64_MAX)
    throw Error(NNP_INVALID_ARGUMENT,
                who + ": padding " + pair_text(w.padding) + " makes the input larger than 64-bit sizes");
  if (span_h > hp || span_w > wp)
    throw Error(NNP_SHAPE_MISMATCH, who + ": kernel " + pair_text(w.kernel) + " with dilation " +
                                        pair_text(w.dilation) + " spans more than the padded input " +
                                        shape_text(x.shape()));
  Geometry g;
  g.oh = windows_along(hp, span_h, w.stride.h, x.size(2), w.padding.h, ceil_mode);
  g.ow = windows_along(wp, span_w, w.stride.w, x.size(3), w.padding.w, ceil_mode);
  g.overhang.h = std::max<int64_t>(0, static_cast<int64_t>(Wide{g.oh - 1} * w.stride.h + span_h - hp));
  g.overhang.w = std::max<int64_t>(0, static_cast<int64_t>(Wide{g.ow - 1} * w.stride.w + span_w - wp));
  g.hp = static_cast<int64_t>(hp) + g.overhang.h;
  g.wp = static_cast<int64_t>(wp) + g.overhang.w;
  return g;
}

// Offset in an Hp x Wp plane of tap (ki, kj) of window (i, j).
inline int64_t tap_offset(const Window& w, const Geometry& g, int64_t ki, int64_t kj, int64_t i, int64_t j) {
  return (i * w.stride.h + ki * w.dilation.h) * g.wp + (j * w.stride.w + kj * w.dilation.w);
}

// A window index, rebuilt only when the input's shape or device changes: a
// layer keeps one (a training loop sees one shape, so it is built once); a
// function call builds its own.
class WindowIndexCache {
 public:
  template <typename Build>
  Tensor get(const Tensor& x, Build build) {
    return get(x.shape(), x.device(), build);
  }
  // Keyed by a shape that fixes the windows (an output size for col2im).
  template <typename Build>
  Tensor get(Shape key, Device device, Build build) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!index_.defined() || key != shape_ || device != device_) {
      index_ = from_vector(build(), device);
      shape_ = std::move(key);
      device_ = device;
    }
    return index_;
  }

 private:
  std::mutex mutex_;
  Tensor index_;
  Shape shape_;
  Device device_ = Device::cpu();
};

// The sliding windows of x [N, C, H, W] per plane, window-major: [N, C,
// OH*OW, kh*kw], so each window's taps are adjacent for the reductions.
inline Tensor unfold_windows(const Tensor& x, const Window& w, const Geometry& g, double pad_value,
                             WindowIndexCache& cache) {
  const int64_t n = x.size(0), c = x.size(1), taps = w.kernel.h * w.kernel.w;
  Tensor index = cache.get(x, [&] {
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(g.oh * g.ow * taps));
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j)
        for (int64_t ki = 0; ki < w.kernel.h; ++ki)
          for (int64_t kj = 0; kj < w.kernel.w; ++kj) offsets.push_back(tap_offset(w, g, ki, kj, i, j));
    return offsets;
  });
  const Pair after{w.padding.h + g.overhang.h, w.padding.w + g.overhang.w};
  Tensor flat = pad2d(x, w.padding, after, pad_value).reshape({n, c, g.hp * g.wp});
  return flat.index_select(2, index).reshape({n, c, g.oh * g.ow, taps});
}

// im2col for convolution: [C * kh*kw, N * OH*OW], so that one GEMM with the
// weights [O, C * kh*kw] convolves the whole batch (and the weight gradient
// is one GEMM too, not a sum over per-sample products).
inline Tensor im2col(const Tensor& x, const Window& w, const Geometry& g, WindowIndexCache& cache) {
  const int64_t n = x.size(0), c = x.size(1), plane = g.hp * g.wp, windows = g.oh * g.ow;
  Tensor index = cache.get(x, [&] {
    std::vector<int64_t> offsets;  // [taps, N, windows] into [N * plane]
    offsets.reserve(static_cast<size_t>(w.kernel.h * w.kernel.w * n * windows));
    for (int64_t ki = 0; ki < w.kernel.h; ++ki)
      for (int64_t kj = 0; kj < w.kernel.w; ++kj)
        for (int64_t s = 0; s < n; ++s)
          for (int64_t i = 0; i < g.oh; ++i)
            for (int64_t j = 0; j < g.ow; ++j) offsets.push_back(s * plane + tap_offset(w, g, ki, kj, i, j));
    return offsets;
  });
  Tensor planes = pad2d(x, w.padding, 0.0).permute({1, 0, 2, 3}).reshape({c, n * plane});
  return planes.index_select(1, index).reshape({c * w.kernel.h * w.kernel.w, n * windows});
}

}  // namespace nnp::nn::functional::detail
