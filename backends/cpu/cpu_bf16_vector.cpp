#include "cpu_bf16_vector.hpp"

#include <immintrin.h>

#include <cstring>

#include "cpu_isa.hpp"
#include "cpu_types.hpp"

// GCC 12's AVX-512 widening and shifts start from _mm512_undefined_epi32(),
// which its -Wuninitialized and -Wmaybe-uninitialized report (GCC bug
// 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace nnp::cpu {
namespace {

#define NNP_AVX512 __attribute__((target("avx512f")))

bool has_avx512() {
  static const bool yes = cpu_isa().avx512f;
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

// The same runs for CPUs with AVX2 and not AVX-512: plain loops over the
// scalar conversions (Traits<BFloat16>'s, branchless), which GCC vectorizes
// eight lanes at a time when built for AVX2. Without them a CPU without
// AVX-512 converted one element at a time and W7 under autocast took 1.37
// times its f32 step there (NNP_CPU_ISA=avx2 on this machine).
#define NNP_AVX2 __attribute__((target("avx2")))

bool has_avx2() {
  static const bool yes = cpu_isa().avx2;
  return yes;
}

inline float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t bf16_bits(float v) { return Traits<BFloat16>::store(v).bits; }

NNP_AVX2 void f32_to_bf16_avx2(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(in[i]);
}
NNP_AVX2 void bf16_to_f32_avx2(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_value(in[i]);
}
NNP_AVX2 void relu_avx2(const uint16_t* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = bf16_value(in[i]);
    out[i] = bf16_bits(x < 0.0f ? 0.0f : x);  // NaN compares false: kept
  }
}
template <int Op>
NNP_AVX2 inline float apply_scalar(float x, float y) {
  if constexpr (Op == NNP_BINARY_ADD) return x + y;
  if constexpr (Op == NNP_BINARY_SUB) return x - y;
  if constexpr (Op == NNP_BINARY_MUL) return x * y;
  return x / y;
}
template <int Op>
NNP_AVX2 void arithmetic_avx2(const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out, int64_t n) {
  if (b_step == 0) {
    const float y = bf16_value(b[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(apply_scalar<Op>(bf16_value(a[i]), y));
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(apply_scalar<Op>(bf16_value(a[i]), bf16_value(b[i])));
}

template <int Op>
void arithmetic(const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out, int64_t n) {
  if (has_avx512())
    arithmetic_avx512<Op>(a, b, b_step, out, n);
  else
    arithmetic_avx2<Op>(a, b, b_step, out, n);
}

}  // namespace

bool bf16_relu_run(const uint16_t* in, uint16_t* out, int64_t n) {
  if (has_avx512())
    relu_avx512(in, out, n);
  else if (has_avx2())
    relu_avx2(in, out, n);
  else
    return false;
  return true;
}

bool f32_to_bf16_run(const float* in, uint16_t* out, int64_t n) {
  if (has_avx512())
    f32_to_bf16_avx512(in, out, n);
  else if (has_avx2())
    f32_to_bf16_avx2(in, out, n);
  else
    return false;
  return true;
}

bool bf16_to_f32_run(const uint16_t* in, float* out, int64_t n) {
  if (has_avx512())
    bf16_to_f32_avx512(in, out, n);
  else if (has_avx2())
    bf16_to_f32_avx2(in, out, n);
  else
    return false;
  return true;
}

bool bf16_arithmetic_run(nnp_binary_op op, const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out,
                         int64_t n) {
  if (!has_avx512() && !has_avx2()) return false;
  switch (op) {
    case NNP_BINARY_ADD: arithmetic<NNP_BINARY_ADD>(a, b, b_step, out, n); return true;
    case NNP_BINARY_SUB: arithmetic<NNP_BINARY_SUB>(a, b, b_step, out, n); return true;
    case NNP_BINARY_MUL: arithmetic<NNP_BINARY_MUL>(a, b, b_step, out, n); return true;
    case NNP_BINARY_DIV: arithmetic<NNP_BINARY_DIV>(a, b, b_step, out, n); return true;
    default: return false;
  }
}

}  // namespace nnp::cpu
