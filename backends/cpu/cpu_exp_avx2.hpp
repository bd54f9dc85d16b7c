// exp over eight f32 lanes of non-positive arguments with AVX2 + FMA, for
// the softmax rows (cpu_softmax_row.cpp) and attention (cpu_attention.cpp),
// which subtract each row's largest value first. The function carries its
// target attribute; callers call it only where the kernel table chose an
// AVX2 form.
#pragma once

#include <immintrin.h>

namespace nnp::cpu {

// exp(x) of 8 lanes with x <= 0 (the row's maximum is subtracted first),
// within 2 ulp of std::exp: x = n ln2 + r with |r| <= ln2/2, exp(r) by a
// degree-7 polynomial (Cephes' expf coefficients) in Horner's form, 2^n
// from the exponent bits. Arguments below -87.3 give 0 (exp's f32 result is
// subnormal or 0 there), so a masked (-inf) attention score comes out
// exactly 0; a NaN gives NaN (callers see a NaN row in its sum). n comes
// from one multiply-add onto 1.5 * 2^23 + 127, whose low bits are then n's
// biased exponent: two instructions where rounding and converting took four.
__attribute__((target("avx2,fma"))) inline __m256 exp_nonpositive_avx2(__m256 x) {
  const __m256 floor = _mm256_set1_ps(-87.3f);
  const __m256 keep = _mm256_cmp_ps(x, floor, _CMP_NLT_UQ);  // x >= floor, or NaN
  x = _mm256_max_ps(floor, x);                               // (max gives its second operand for NaN)
  const __m256 biased = _mm256_set1_ps(12583039.0f);         // 1.5 * 2^23 + 127
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), biased);
  const __m256 n = _mm256_sub_ps(t, biased);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_castps_si256(t), 23);  // (n + 127) << 23
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), keep);
}

}  // namespace nnp::cpu
