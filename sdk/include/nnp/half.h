/*
 * half.h - IEEE binary16 and bfloat16 conversions for backend authors.
 *
 * Storage is the raw 16 bits; arithmetic happens in float. Conversions to
 * 16 bits round to nearest even, as PyTorch and the hardware do.
 *
 * Header-only C99, also compilable by nvcc and hipcc.
 */
#ifndef NNP_HALF_H
#define NNP_HALF_H

#include <stdint.h>
#include <string.h>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h> /* device-side memcpy (nvcc brings CUDA's in by itself) */
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define NNP_HALF_HD __host__ __device__ static inline
#else
#define NNP_HALF_HD static inline
#endif

NNP_HALF_HD uint32_t nnp_float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

NNP_HALF_HD float nnp_bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

NNP_HALF_HD float nnp_bf16_to_float(uint16_t h) { return nnp_bits_float((uint32_t)h << 16); }

NNP_HALF_HD uint16_t nnp_float_to_bf16(float f) {
  uint32_t u = nnp_float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
  u += 0x7FFFu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

NNP_HALF_HD float nnp_f16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return nnp_bits_float(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    /* zero or subnormal: mantissa * 2^-24 */
    float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  return nnp_bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

NNP_HALF_HD uint16_t nnp_float_to_f16(float f) {
  uint32_t u = nnp_float_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs_bits = u & 0x7FFFFFFFu;
  if (abs_bits >= 0x7F800000u) /* inf or NaN */
    return (uint16_t)(sign | 0x7C00u | (abs_bits > 0x7F800000u ? 0x200u : 0u));
  if (abs_bits >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* rounds past 65504 */
  if (abs_bits < 0x38800000u) {
    /* result is subnormal or zero: round abs/2^-24 to nearest even */
    float scaled = nnp_bits_float(abs_bits) * 16777216.0f; /* exact */
    uint32_t whole = (uint32_t)scaled;
    float rest = scaled - (float)whole;
    if (rest > 0.5f || (rest == 0.5f && (whole & 1u))) ++whole;
    return (uint16_t)(sign | whole);
  }
  {
    uint32_t rounded = abs_bits + 0xFFFu + ((abs_bits >> 13) & 1u);
    return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
  }
}

#endif /* NNP_HALF_H */
