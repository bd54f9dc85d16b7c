// ONNX's DynamicQuantizeLinear in two passes over x (nnp_kernels.
// dynamic_quantize_linear, ABI 1.29): its range, then each value divided,
// rounded, shifted and clamped to uint8, with AVX2 where the CPU has it.
// The scale and zero point are written on the device (here, memory the
// host shares), so a captured plan reads nothing on the host and stays
// valid from one input's range to the next. The composition it replaces
// made six passes and two host reads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NNP_DQL_AVX2 1
#endif

namespace nnp::cpu {
namespace {

struct Range {
  float low = std::numeric_limits<float>::infinity(), high = -std::numeric_limits<float>::infinity();
  bool nan = false;
};

Range scalar_range(const float* x, int64_t n) {
  Range r;
  for (int64_t i = 0; i < n; ++i) {
    r.nan |= x[i] != x[i];
    r.low = std::min(r.low, x[i]);
    r.high = std::max(r.high, x[i]);
  }
  return r;
}

// y[i] for one value: what the composition computes, step by step in f32.
uint8_t quantized(float x, float scale, float zero) {
  const float v = std::nearbyint(x / scale) + zero;
  return static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, v)));
}

#if NNP_DQL_AVX2
#define NNP_AVX2_FMA __attribute__((target("avx2")))

NNP_AVX2_FMA Range range_avx2(const float* x, int64_t n) {
  __m256 low = _mm256_set1_ps(std::numeric_limits<float>::infinity()), high = _mm256_sub_ps(_mm256_setzero_ps(), low);
  __m256 nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    low = _mm256_min_ps(low, v);
    high = _mm256_max_ps(high, v);
  }
  alignas(32) float lows[8], highs[8];
  _mm256_store_ps(lows, low);
  _mm256_store_ps(highs, high);
  Range r = scalar_range(x + i, n - i);
  r.nan |= _mm256_movemask_ps(nan) != 0;
  for (int k = 0; k < 8; ++k) {
    r.low = std::min(r.low, lows[k]);
    r.high = std::max(r.high, highs[k]);
  }
  return r;
}

NNP_AVX2_FMA void quantize_avx2(const float* x, int64_t n, float scale, float zero, uint8_t* y) {
  const __m256 s = _mm256_set1_ps(scale), z = _mm256_set1_ps(zero), top = _mm256_set1_ps(255.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm256_min_ps(top, _mm256_max_ps(_mm256_setzero_ps(), _mm256_add_ps(v, z)));
    const __m256i words = _mm256_cvtps_epi32(v);
    const __m128i shorts = _mm_packus_epi32(_mm256_castsi256_si128(words), _mm256_extracti128_si256(words, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(shorts, shorts));
  }
  for (; i < n; ++i) y[i] = quantized(x[i], scale, zero);
}
#endif

bool vector_path() {
#if NNP_DQL_AVX2
  static const bool avx2 = kernel_table().reductions == Tier::avx2;
  return avx2;
#else
  return false;
#endif
}

Range range_of(const float* x, int64_t n) {
#if NNP_DQL_AVX2
  if (vector_path()) return range_avx2(x, n);
#endif
  return scalar_range(x, n);
}

void quantize_span(const float* x, int64_t n, float scale, float zero, uint8_t* y) {
#if NNP_DQL_AVX2
  if (vector_path()) return quantize_avx2(x, n, scale, zero, y);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = quantized(x[i], scale, zero);
}

bool one_value(const nnp_view* v, nnp_dtype dtype) { return v && v->dtype == dtype && view_numel(*v) == 1; }

}  // namespace

nnp_status dynamic_quantize_linear(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* y, const nnp_view* scale,
                                   const nnp_view* zero) {
  if (!x || !y || x->dtype != NNP_F32 || y->dtype != NNP_U8 || !is_contiguous(*x) || !is_contiguous(*y) ||
      view_numel(*x) != view_numel(*y) || view_numel(*x) < 1 || !one_value(scale, NNP_F32) || !one_value(zero, NNP_U8))
    return fail(NNP_INVALID_ARGUMENT,
                "dynamic_quantize_linear: x must be a contiguous f32 tensor, y a contiguous u8 one of as many values, "
                "scale one f32 and zero one u8");
  const int64_t n = view_numel(*x);
  const auto* xs = static_cast<const float*>(x->data);
  auto* ys = static_cast<uint8_t*>(y->data);
  // The range in blocks (each on one thread), then combined in order.
  constexpr int64_t kBlock = int64_t{1} << 16;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  thread_local std::vector<Range> partial;
  partial.assign(static_cast<size_t>(blocks), Range{});
  Range* parts = partial.data();  // (a thread_local named in the body would be each worker's own)
  parallel_for(blocks, kBlock, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) parts[b] = range_of(xs + b * kBlock, std::min(kBlock, n - b * kBlock));
  });
  Range r;
  for (const Range& p : partial) {
    r.nan |= p.nan;
    r.low = std::min(r.low, p.low);
    r.high = std::max(r.high, p.high);
  }
  if (r.nan) return fail(NNP_INVALID_ARGUMENT, "DynamicQuantizeLinear: the input holds NaN, which has no uint8 range");
  const float low = std::min(0.0f, r.low), high = std::max(0.0f, r.high);
  const float s = (high - low) / 255.0f;
  const float z = s == 0 ? 0.0f : std::nearbyint(std::min(255.0f, std::max(0.0f, -low / s)));
  std::memcpy(scale->data, &s, sizeof s);
  const auto z8 = static_cast<uint8_t>(z);
  std::memcpy(zero->data, &z8, 1);
  if (s == 0 || !std::isfinite(s)) {
    std::memset(ys, z8, static_cast<size_t>(n));
    return NNP_OK;
  }
  parallel_for(blocks, kBlock, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      quantize_span(xs + b * kBlock, std::min(kBlock, n - b * kBlock), s, z, ys + b * kBlock);
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
