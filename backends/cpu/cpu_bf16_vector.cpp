#include "cpu_bf16_vector.hpp"

#include <immintrin.h>

#include <cstring>

#include "cpu_bf16_simd.hpp"
#include "cpu_kernel_table.hpp"

namespace nnp::cpu {
namespace {

using namespace bf16_simd;

#define NNP_AVX512 __attribute__((target("avx512f")))
#define NNP_AVX2 __attribute__((target("avx2")))

bool has_avx512() {
  static const bool yes = kernel_table().bf16_vectors == Tier::avx512;
  return yes;
}
bool has_avx2() {
  static const bool yes = kernel_table().bf16_vectors == Tier::avx2;
  return yes;
}

float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// -- AVX-512: sixteen lanes a step --

NNP_AVX512 void f32_to_bf16_avx512(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) store16(out + i, _mm512_loadu_ps(in + i), 16);
  if (i < n) store16(out + i, _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n - i)) - 1), in + i), n - i);
}

NNP_AVX512 void bf16_to_f32_avx512(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, widen16(in + i));
  if (i < n) _mm512_mask_storeu_ps(out + i, static_cast<__mmask16>((1u << (n - i)) - 1), widen16_first(in + i, n - i));
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
    const __m512 y = _mm512_set1_ps(bf16_value(b[0]));
    for (; i + 16 <= n; i += 16) store16(out + i, apply<Op>(widen16(a + i), y), 16);
    if (i < n) store16(out + i, apply<Op>(widen16_first(a + i, n - i), y), n - i);
    return;
  }
  for (; i + 16 <= n; i += 16) store16(out + i, apply<Op>(widen16(a + i), widen16(b + i)), 16);
  if (i < n) store16(out + i, apply<Op>(widen16_first(a + i, n - i), widen16_first(b + i, n - i)), n - i);
}

NNP_AVX512 inline __m512 relu(__m512 x) {
  const __m512 zero = _mm512_setzero_ps();
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, zero);  // NaN compares false: kept
}

NNP_AVX512 void relu_avx512(const uint16_t* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) store16(out + i, relu(widen16(in + i)), 16);
  if (i < n) store16(out + i, relu(widen16_first(in + i, n - i)), n - i);
}

// -- AVX2: sixteen lanes a step, as two halves of eight --

NNP_AVX2 void f32_to_bf16_avx2(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) store16(out + i, round16(_mm256_loadu_ps(in + i), _mm256_loadu_ps(in + i + 8)), 16);
  for (; i < n; ++i) out[i] = static_cast<uint16_t>(_mm256_cvtsi256_si32(round8(_mm256_set1_ps(in[i]))));
}

NNP_AVX2 void bf16_to_f32_avx2(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, widen8(in + i));
  for (; i < n; ++i) out[i] = bf16_value(in[i]);
}

template <int Op>
NNP_AVX2 inline __m256 apply(__m256 x, __m256 y) {
  if constexpr (Op == NNP_BINARY_ADD) return _mm256_add_ps(x, y);
  if constexpr (Op == NNP_BINARY_SUB) return _mm256_sub_ps(x, y);
  if constexpr (Op == NNP_BINARY_MUL) return _mm256_mul_ps(x, y);
  return _mm256_div_ps(x, y);
}

template <int Op>
NNP_AVX2 void arithmetic_avx2(const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out, int64_t n) {
  const __m256 scalar = _mm256_set1_ps(n > 0 && b_step == 0 ? bf16_value(b[0]) : 0.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const int64_t count = n - i;
    const __m256 x0 = count >= 16 ? widen8(a + i) : widen8_first(a + i, count);
    const __m256 x1 = count >= 16 ? widen8(a + i + 8) : widen8_first(a + i + 8, count - 8);
    __m256 y0 = scalar, y1 = scalar;
    if (b_step != 0) {
      y0 = count >= 16 ? widen8(b + i) : widen8_first(b + i, count);
      y1 = count >= 16 ? widen8(b + i + 8) : widen8_first(b + i + 8, count - 8);
    }
    store16(out + i, round16(apply<Op>(x0, y0), apply<Op>(x1, y1)), count);
  }
}

// ReLU on the bits (no widening): a negative number, -inf included, becomes
// +0; -0 compares equal to 0 and is kept; a NaN is kept and made quiet, as
// rounding max(0, x) to bf16 gives.
NNP_AVX2 inline __m256i relu_bits(__m256i bits) {
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi16(0x7FFF));
  const __m256i nan = _mm256_cmpgt_epi16(magnitude, _mm256_set1_epi16(0x7F80));
  const __m256i negative = _mm256_andnot_si256(_mm256_cmpeq_epi16(magnitude, _mm256_setzero_si256()),
                                               _mm256_cmpgt_epi16(_mm256_setzero_si256(), bits));
  const __m256i kept = _mm256_andnot_si256(_mm256_andnot_si256(nan, negative), bits);
  return _mm256_or_si256(kept, _mm256_and_si256(nan, _mm256_set1_epi16(0x40)));
}

NNP_AVX2 void relu_avx2(const uint16_t* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) store16(out + i, relu_bits(load16(in + i, n - i)), n - i);
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
