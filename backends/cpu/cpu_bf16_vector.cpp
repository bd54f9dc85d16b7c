#include "cpu_bf16_vector.hpp"

#include <immintrin.h>

#include <cstring>

namespace nnp::cpu {
namespace {

#define NNP_AVX512 __attribute__((target("avx512f")))

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

NNP_AVX512 inline __m512 widen(const uint16_t* p) {
  return _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}
NNP_AVX512 inline __m512 widen_masked(const uint16_t* p, __mmask16 m) {
  alignas(32) uint16_t tmp[16] = {};
  for (int i = 0; i < 16; ++i)
    if (m >> i & 1) tmp[i] = p[i];
  return widen(tmp);
}
// Round to nearest even; a NaN keeps its top bits, made quiet.
NNP_AVX512 inline __m256i narrow(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
}
NNP_AVX512 inline void store(uint16_t* p, __m512 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), narrow(v)); }
NNP_AVX512 inline void store_masked(uint16_t* p, __m512 v, int64_t count) {
  alignas(32) uint16_t tmp[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), narrow(v));
  std::memcpy(p, tmp, static_cast<size_t>(count) * sizeof(uint16_t));
}

NNP_AVX512 void f32_to_bf16_avx512(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) store(out + i, _mm512_loadu_ps(in + i));
  if (i < n) store_masked(out + i, _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n - i)) - 1), in + i), n - i);
}

NNP_AVX512 void bf16_to_f32_avx512(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, widen(in + i));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(out + i, m, widen_masked(in + i, m));
  }
}

template <int Op>
NNP_AVX512 inline __m512 apply(__m512 x, __m512 y) {
  if constexpr (Op == NNP_BINARY_ADD) return _mm512_add_ps(x, y);
  if constexpr (Op == NNP_BINARY_SUB) return _mm512_sub_ps(x, y);
  if constexpr (Op == NNP_BINARY_MUL) return _mm512_mul_ps(x, y);
  return _mm512_div_ps(x, y);
}

template <int Op>
NNP_AVX512 void arithmetic_avx512(const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out, int64_t n) {
  int64_t i = 0;
  if (b_step == 0) {
    const __m512 y = _mm512_set1_ps([&] {
      const uint32_t bits = static_cast<uint32_t>(b[0]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }());
    for (; i + 16 <= n; i += 16) store(out + i, apply<Op>(widen(a + i), y));
    if (i < n) {
      const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
      store_masked(out + i, apply<Op>(widen_masked(a + i, m), y), n - i);
    }
    return;
  }
  for (; i + 16 <= n; i += 16) store(out + i, apply<Op>(widen(a + i), widen(b + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    store_masked(out + i, apply<Op>(widen_masked(a + i, m), widen_masked(b + i, m)), n - i);
  }
}

NNP_AVX512 inline __m512 relu(__m512 x) {
  const __m512 zero = _mm512_setzero_ps();
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, zero);  // NaN compares false: kept
}

NNP_AVX512 void relu_avx512(const uint16_t* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) store(out + i, relu(widen(in + i)));
  if (i < n) store_masked(out + i, relu(widen_masked(in + i, static_cast<__mmask16>((1u << (n - i)) - 1))), n - i);
}

}  // namespace

bool bf16_relu_run(const uint16_t* in, uint16_t* out, int64_t n) {
  if (!has_avx512()) return false;
  relu_avx512(in, out, n);
  return true;
}

bool f32_to_bf16_run(const float* in, uint16_t* out, int64_t n) {
  if (!has_avx512()) return false;
  f32_to_bf16_avx512(in, out, n);
  return true;
}

bool bf16_to_f32_run(const uint16_t* in, float* out, int64_t n) {
  if (!has_avx512()) return false;
  bf16_to_f32_avx512(in, out, n);
  return true;
}

bool bf16_arithmetic_run(nnp_binary_op op, const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out,
                         int64_t n) {
  if (!has_avx512()) return false;
  switch (op) {
    case NNP_BINARY_ADD: arithmetic_avx512<NNP_BINARY_ADD>(a, b, b_step, out, n); return true;
    case NNP_BINARY_SUB: arithmetic_avx512<NNP_BINARY_SUB>(a, b, b_step, out, n); return true;
    case NNP_BINARY_MUL: arithmetic_avx512<NNP_BINARY_MUL>(a, b, b_step, out, n); return true;
    case NNP_BINARY_DIV: arithmetic_avx512<NNP_BINARY_DIV>(a, b, b_step, out, n); return true;
    default: return false;
  }
}

}  // namespace nnp::cpu
