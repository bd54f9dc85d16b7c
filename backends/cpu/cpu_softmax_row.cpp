#include "cpu_softmax_row.hpp"

#include <immintrin.h>

#include <cmath>
#include <limits>

#include "cpu_bf16_simd.hpp"
#include "cpu_exp_avx2.hpp"
#include "cpu_kernel_table.hpp"

namespace nnp::cpu {
namespace {

#define NNP_AVX2 __attribute__((target("avx2,fma")))

// Eight elements of a row as f32 (bf16 widened), and eight results stored
// as the row's type (bf16 rounded to nearest even, Traits<BFloat16>'s bits).
NNP_AVX2 inline __m256 load8(const float* x) { return _mm256_loadu_ps(x); }
NNP_AVX2 inline __m256 load8(const uint16_t* x) { return bf16_simd::widen8(x); }
NNP_AVX2 inline void store8(float* out, __m256 v) { _mm256_storeu_ps(out, v); }
NNP_AVX2 inline void store8(uint16_t* out, __m256 v) {
  const __m256i bits = bf16_simd::round8(v);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_packus_epi32(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1)));
}

// The tail of a row (fewer than 8 elements) as one padded vector: lanes past
// the end read -inf, whose exp is 0.
template <typename T>
NNP_AVX2 inline __m256 load_tail(const T* x, int64_t count) {
  alignas(32) T part[8] = {};
  for (int64_t l = 0; l < count; ++l) part[l] = x[l];
  const __m256 past = _mm256_castsi256_ps(
      _mm256_cmpgt_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(count - 1))));
  return _mm256_blendv_ps(load8(part), _mm256_set1_ps(-std::numeric_limits<float>::infinity()), past);
}
template <typename T>
NNP_AVX2 inline void store_tail(T* out, __m256 v, int64_t count) {
  alignas(32) T part[8];
  store8(part, v);
  for (int64_t l = 0; l < count; ++l) out[l] = part[l];
}

// T: float, or uint16_t for bf16 bits. The exps go to `exps` (out itself for
// f32; a row of f32 scratch for bf16, so that each result is rounded once).
template <typename T>
NNP_AVX2 bool softmax_row_avx2(const T* x, int64_t length, bool log, T* out, float* exps) {
  const int64_t whole = length / 8 * 8;
  __m256 lane_max = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  __m256 bad = _mm256_setzero_ps();  // lanes that saw a NaN or +inf (-inf is a mask: its exp is 0)
  const __m256 largest = _mm256_set1_ps(std::numeric_limits<float>::max());
  auto visit = [&](__m256 v) NNP_AVX2 {
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, largest, _CMP_NLE_UQ));
    lane_max = _mm256_max_ps(lane_max, v);
  };
  for (int64_t j = 0; j < whole; j += 8) visit(load8(x + j));
  if (whole < length) visit(load_tail(x + whole, length - whole));
  if (_mm256_movemask_ps(bad) != 0) return false;
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, lane_max);
  float max = lanes[0];
  for (int l = 1; l < 8; ++l) max = lanes[l] > max ? lanes[l] : max;
  if (max == -std::numeric_limits<float>::infinity()) return false;  // every element masked: NaNs

  const __m256 shift = _mm256_set1_ps(max);
  __m256 lane_sum = _mm256_setzero_ps();
  // softmax keeps each exp as it sums them (one exp an element; exps may be
  // x itself: each element is read before it is written).
  alignas(32) float tail[8];
  for (int64_t j = 0; j < whole; j += 8) {
    const __m256 e = exp_nonpositive_avx2(_mm256_sub_ps(load8(x + j), shift));
    lane_sum = _mm256_add_ps(lane_sum, e);
    if (!log) _mm256_storeu_ps(exps + j, e);
  }
  if (whole < length) {
    const __m256 e = exp_nonpositive_avx2(_mm256_sub_ps(load_tail(x + whole, length - whole), shift));
    lane_sum = _mm256_add_ps(lane_sum, e);
    _mm256_store_ps(tail, e);
  }
  _mm256_store_ps(lanes, lane_sum);
  double sum = 0;
  for (float s : lanes) sum += s;

  if (log) {
    // (x - max) - log_sum, two roundings, as the exact path does it.
    const __m256 log_sum = _mm256_set1_ps(static_cast<float>(std::log(sum)));
    for (int64_t j = 0; j < whole; j += 8) store8(out + j, _mm256_sub_ps(_mm256_sub_ps(load8(x + j), shift), log_sum));
    if (whole < length)
      store_tail(out + whole, _mm256_sub_ps(_mm256_sub_ps(load_tail(x + whole, length - whole), shift), log_sum),
                 length - whole);
    return true;
  }
  const __m256 scale = _mm256_set1_ps(static_cast<float>(1.0 / sum));
  for (int64_t j = 0; j < whole; j += 8) store8(out + j, _mm256_mul_ps(_mm256_loadu_ps(exps + j), scale));
  if (whole < length) store_tail(out + whole, _mm256_mul_ps(_mm256_load_ps(tail), scale), length - whole);
  return true;
}

}  // namespace

bool softmax_row_bf16(const uint16_t* x, int64_t length, bool log, uint16_t* out, float* scratch) {
  static const bool avx2 = kernel_table().softmax_rows == Tier::avx2;
  return avx2 && length > 0 && softmax_row_avx2(x, length, log, out, scratch);
}

bool softmax_row_f32(const float* x, int64_t length, bool log, float* out) {
  static const bool avx2 = kernel_table().softmax_rows == Tier::avx2;
  return avx2 && length > 0 && softmax_row_avx2(x, length, log, out, out);
}

}  // namespace nnp::cpu
