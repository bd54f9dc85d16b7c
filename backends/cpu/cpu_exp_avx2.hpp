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
// degree-6 polynomial (Cephes' expf coefficients), 2^n from the exponent
// bits. Arguments below -87.3 give 0 (exp's f32 result is subnormal or 0
// there), so a masked (-inf) attention score comes out exactly 0.
__attribute__((target("avx2,fma"))) inline __m256 exp_nonpositive_avx2(__m256 x) {
  const __m256 floor = _mm256_set1_ps(-87.3f);
  const __m256 keep = _mm256_cmp_ps(x, floor, _CMP_GE_OQ);
  x = _mm256_max_ps(x, floor);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), keep);
}

}  // namespace nnp::cpu
