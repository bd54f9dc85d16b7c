// 2-D max pooling forward (nnp_kernels.max_pool2d): each [N, C] plane's
// windows scanned in place, planes spread over the pool. PyTorch's rules:
// the first maximum in scanning order wins, a NaN beats everything (the last
// NaN is the one recorded), positions outside the input take no part.
#include <immintrin.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

// Taps of one window along one axis that fall inside [0, size): the first
// one's position and how many there are.
struct Span {
  int64_t first = 0, count = 0;
};
Span inside(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
  Span s;
  const int64_t before = start < 0 ? -start : 0;  // no overflow: the core bounds start and the span
  const int64_t skip = before / dilation + (before % dilation != 0);
  s.first = start + skip * dilation;
  if (skip < kernel && s.first < size) s.count = std::min(kernel - skip, (size - 1 - s.first) / dilation + 1);
  return s;
}

// The spans of every output row and column, the same for every plane:
// worked out once per call, in scratch that only grows.
std::vector<Span>& spans() {
  thread_local std::vector<Span> buffer;
  return buffer;
}

#define NNP_AVX2 __attribute__((target("avx2")))

// The 16 floats at p split into their even and odd columns, in order.
NNP_AVX2 inline void split_columns(const float* p, __m256& even, __m256& odd) {
  const __m256 lo = _mm256_loadu_ps(p), hi = _mm256_loadu_ps(p + 8);
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))),
                                                _MM_SHUFFLE(3, 1, 2, 0)));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))),
                                               _MM_SHUFFLE(3, 1, 2, 0)));
}

// One output row's windows eight at a time (AVX2; strides 1 and 2, no
// indices asked) with the scalar loop's rules: a later tap takes over only
// when greater, and a NaN anywhere in a window makes it NaN. Only the run of
// windows whose taps all lie inside the row, reads included (stride 2 reads
// a window's odd neighbour too); returns the windows it wrote, the others
// left to the scalar loop.
NNP_AVX2 Span pool_row_avx2(const float* x, int64_t w, const nnp_pool2d_params& p, Span r, int64_t ow, float* out) {
  const int64_t s = p.stride[1], pad = p.padding[1], k = p.kernel[1], dw = p.dilation[1], dh = p.dilation[0];
  const int64_t first = (pad + s - 1) / s;                // the first window with no tap left of the row
  const int64_t reach = (k - 1) * dw + (s == 2 ? 1 : 0);  // the last read past a window's start
  int64_t xo = first;
  for (; xo + 8 <= ow && (xo + 7) * s - pad + reach < w; xo += 8) {
    __m256 best = _mm256_set1_ps(-std::numeric_limits<float>::infinity()), nan = _mm256_setzero_ps();
    const float* line = x + r.first * w + xo * s - pad;
    for (int64_t i = 0; i < r.count; ++i, line += dh * w)
      for (int64_t j = 0; j < k; ++j) {
        __m256 v, odd;
        if (s == 1)
          v = _mm256_loadu_ps(line + j * dw);
        else
          split_columns(line + j * dw, v, odd);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        best = _mm256_blendv_ps(best, v, _mm256_cmp_ps(v, best, _CMP_GT_OQ));
      }
    _mm256_storeu_ps(out + xo, _mm256_blendv_ps(best, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), nan));
  }
  return Span{first, xo - first};
}

// pool_row_avx2 where it applies (the pooling tier, strides 1 and 2, a row
// with taps), else no windows.
Span pool_row_vector(const float* x, int64_t w, const nnp_pool2d_params& p, Span r, int64_t ow, float* out) {
  static const bool avx2 = kernel_table().pooling == Tier::avx2;
  if (!avx2 || r.count == 0 || (p.stride[1] != 1 && p.stride[1] != 2)) return Span{};
  return pool_row_avx2(x, w, p, r, ow, out);
}

template <bool kIndices>
void pool_plane(const float* x, int64_t w, const nnp_pool2d_params& p, const Span* rows, int64_t oh, const Span* cols,
                int64_t ow, float* out, int64_t* indices) {
  const int64_t dh = p.dilation[0], dw = p.dilation[1];
  for (int64_t y = 0; y < oh; ++y) {
    const Span r = rows[y];
    Span done;
    if constexpr (!kIndices) done = pool_row_vector(x, w, p, r, ow, out + y * ow);
    for (int64_t xo = 0; xo < ow; ++xo) {
      if (xo == done.first && done.count > 0) {  // written by the vector loop
        xo += done.count - 1;
        continue;
      }
      const Span c = cols[xo];
      // Without branches (maxss, and masks for the positions): on random
      // data "is this the new maximum" is a coin toss, and mispredicting it
      // cost most of the time. NaNs are tracked apart and win at the end.
      float best = -std::numeric_limits<float>::infinity();
      int64_t best_at = r.count > 0 && c.count > 0 ? r.first * w + c.first : -1, nan_at = -1;
      bool any_nan = false;
      const float* line = x + r.first * w + c.first;
      for (int64_t i = 0; i < r.count; ++i, line += dh * w)
        for (int64_t j = 0; j < c.count; ++j) {
          const float v = line[j * dw];
          any_nan |= v != v;
          if constexpr (kIndices) {
            const int64_t at = (r.first + i * dh) * w + c.first + j * dw;
            best_at += (at - best_at) & -static_cast<int64_t>(v > best);
            nan_at += (at - nan_at) & -static_cast<int64_t>(v != v);
          }
          best = v > best ? v : best;
        }
      if (any_nan) {
        best = std::numeric_limits<float>::quiet_NaN();
        if constexpr (kIndices) best_at = nan_at;
      }
      out[y * ow + xo] = best;
      if constexpr (kIndices) indices[y * ow + xo] = best_at;
    }
  }
}

// Eight windows at a time along one output row (AVX2), with the scalar
// loop's rules: the four taps of each window split into a, b, c, d (even
// and odd columns of the two rows), a later tap taking over only when
// greater. Stops before the first group of eight holding a NaN, and before
// the last few windows; returns the first window it left to the scalar loop.
NNP_AVX2 int64_t pool_row_2x2_avx2(const float* top, const float* bottom, int64_t ow, int64_t w, int64_t first_index,
                                   float* out, int64_t* indices) {
  const __m256 tap_b = _mm256_castsi256_ps(_mm256_set1_epi32(1));
  const __m256 tap_c = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(w)));
  const __m256 tap_d = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(w + 1)));
  const __m256i columns = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  int64_t xo = 0;
  for (; xo + 8 <= ow; xo += 8) {
    __m256 a, b, c, d;
    split_columns(top + 2 * xo, a, b);
    split_columns(bottom + 2 * xo, c, d);
    const __m256 nan = _mm256_or_ps(_mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_UNORD_Q)),
                                    _mm256_or_ps(_mm256_cmp_ps(c, c, _CMP_UNORD_Q), _mm256_cmp_ps(d, d, _CMP_UNORD_Q)));
    if (_mm256_movemask_ps(nan) != 0) break;
    __m256 best = a, at = _mm256_setzero_ps();
    __m256 greater = _mm256_cmp_ps(b, best, _CMP_GT_OQ);
    best = _mm256_blendv_ps(best, b, greater);
    at = _mm256_blendv_ps(at, tap_b, greater);
    greater = _mm256_cmp_ps(c, best, _CMP_GT_OQ);
    best = _mm256_blendv_ps(best, c, greater);
    at = _mm256_blendv_ps(at, tap_c, greater);
    greater = _mm256_cmp_ps(d, best, _CMP_GT_OQ);
    best = _mm256_blendv_ps(best, d, greater);
    at = _mm256_blendv_ps(at, tap_d, greater);
    _mm256_storeu_ps(out + xo, best);
    if (indices) {  // first_index + 2 * (xo + lane) + the tap's offset, widened to int64
      const __m256i offsets = _mm256_add_epi32(_mm256_castps_si256(at), columns);
      const __m256i base = _mm256_set1_epi64x(first_index + 2 * xo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(indices + xo),
                          _mm256_add_epi64(base, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(offsets))));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(indices + xo + 4),
                          _mm256_add_epi64(base, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(offsets, 1))));
    }
  }
  return xo;
}

// The common case (kernel 2, stride 2, no padding or dilation, every window
// inside the plane, as in W3 and most CNNs) without the general loop's
// spans: two input rows give one output row, eight windows at a time where
// the processor has AVX2. A window holding a NaN takes the general rule.
template <bool kIndices>
void pool_plane_2x2(const float* x, int64_t w, const nnp_pool2d_params& p, const Span* rows, int64_t oh,
                    const Span* cols, int64_t ow, float* out, int64_t* indices) {
  // The tap offsets fit the vector path's 32-bit lanes for any real image.
  static const bool avx2 = kernel_table().pooling == Tier::avx2;
  const bool vector = avx2 && w < (int64_t{1} << 30);
  for (int64_t y = 0; y < oh; ++y) {
    const float* top = x + 2 * y * w;
    const float* bottom = top + w;
    const int64_t done =
        vector ? pool_row_2x2_avx2(top, bottom, ow, w, 2 * y * w, out + y * ow, kIndices ? indices + y * ow : nullptr)
               : 0;
    for (int64_t xo = done; xo < ow; ++xo) {
      const float a = top[2 * xo], b = top[2 * xo + 1], c = bottom[2 * xo], d = bottom[2 * xo + 1];
      if ((a != a) | (b != b) | (c != c) | (d != d)) {
        pool_plane<kIndices>(x, w, p, rows + y, 1, cols + xo, 1, out + y * ow + xo,
                             kIndices ? indices + y * ow + xo : nullptr);
        continue;
      }
      // The first maximum in scanning order: a later tap wins only when
      // greater. Masks, not branches: on random data each test is a coin toss.
      float best = a;
      int64_t at = 0;
      at += (1 - at) & -static_cast<int64_t>(b > best);
      best = b > best ? b : best;
      at += (w - at) & -static_cast<int64_t>(c > best);
      best = c > best ? c : best;
      at += (w + 1 - at) & -static_cast<int64_t>(d > best);
      best = d > best ? d : best;
      out[y * ow + xo] = best;
      if constexpr (kIndices) indices[y * ow + xo] = 2 * y * w + 2 * xo + at;
    }
  }
}

}  // namespace

nnp_status max_pool2d(const nnp_kernel_ctx*, const nnp_view* x, const nnp_pool2d_params* p, const nnp_view* out,
                      const nnp_view* indices) {
  if (x->dtype != NNP_F32 || out->dtype != NNP_F32 || (indices && indices->dtype != NNP_I64))
    return fail(NNP_DTYPE_MISMATCH, "max_pool2d: the cpu backend's pooling kernel takes f32 (and i64 indices) only");
  const int64_t planes = x->shape[0] * x->shape[1], h = x->shape[2], w = x->shape[3];
  const int64_t oh = out->shape[2], ow = out->shape[3];
  const float* px = static_cast<const float*>(x->data);
  float* po = static_cast<float*>(out->data);
  int64_t* pi = indices ? static_cast<int64_t*>(indices->data) : nullptr;
  std::vector<Span>& along = spans();
  along.resize(static_cast<size_t>(oh + ow));
  for (int64_t y = 0; y < oh; ++y) along[y] = inside(y * p->stride[0] - p->padding[0], p->kernel[0], p->dilation[0], h);
  for (int64_t x = 0; x < ow; ++x)
    along[oh + x] = inside(x * p->stride[1] - p->padding[1], p->kernel[1], p->dilation[1], w);
  const Span *rows = along.data(), *cols = along.data() + oh;
  const int64_t cost = oh * ow * std::min<int64_t>(p->kernel[0], h) * std::min<int64_t>(p->kernel[1], w);
  const bool two_by_two = p->kernel[0] == 2 && p->kernel[1] == 2 && p->stride[0] == 2 && p->stride[1] == 2 &&
                          p->padding[0] == 0 && p->padding[1] == 0 && p->dilation[0] == 1 && p->dilation[1] == 1 &&
                          2 * oh <= h && 2 * ow <= w;
  parallel_for(planes, cost, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const float* in = px + plane * h * w;
      if (two_by_two && pi)
        pool_plane_2x2<true>(in, w, *p, rows, oh, cols, ow, po + plane * oh * ow, pi + plane * oh * ow);
      else if (two_by_two)
        pool_plane_2x2<false>(in, w, *p, rows, oh, cols, ow, po + plane * oh * ow, nullptr);
      else if (pi)
        pool_plane<true>(in, w, *p, rows, oh, cols, ow, po + plane * oh * ow, pi + plane * oh * ow);
      else
        pool_plane<false>(in, w, *p, rows, oh, cols, ow, po + plane * oh * ow, nullptr);
    }
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
