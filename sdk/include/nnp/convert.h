/*
 * convert.h - floating-point to integer conversion that every backend agrees
 * on. Values truncate toward zero; NaN and values outside int64's range,
 * which C leaves undefined, give INT64_MIN (what x86's cvttsd2si, and so
 * PyTorch on the CPU, gives). Narrower integer types take the low bits of
 * that int64: -1.6 -> -1 -> 255 as u8.
 *
 * Header-only C99, also compilable by nvcc and hipcc (host and device).
 */
#ifndef NNP_CONVERT_H
#define NNP_CONVERT_H

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define NNP_CONVERT_HD __host__ __device__ static inline
#else
#define NNP_CONVERT_HD static inline
#endif

NNP_CONVERT_HD int64_t nnp_float_to_i64(double v) {
  /* -2^63 is exact in a double; 2^63 is the first value past the range. */
  return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (int64_t)v : INT64_MIN;
}

#endif /* NNP_CONVERT_H */
