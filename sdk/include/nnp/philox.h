/*
 * philox.h - the random-number definition every backend shares.
 *
 * nnplug draws random numbers with Philox4x32-10 (Salmon et al., "Parallel
 * random numbers: as easy as 1, 2, 3", SC'11). Element i of a draw keyed by
 * (seed, offset) uses the 128-bit counter {lo(offset+i), hi(offset+i), 0, 0}
 * and the key {lo(seed), hi(seed)}; the four 32-bit words it yields are
 * turned into one value as below. Because each element depends only on its
 * own counter, any backend, any thread split and any device produce the same
 * numbers bit for bit.
 *
 * Header-only C99, also compilable by nvcc and hipcc.
 */
#ifndef NNP_PHILOX_H
#define NNP_PHILOX_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define NNP_HD __host__ __device__ static inline
#else
#define NNP_HD static inline
#endif

typedef struct nnp_philox_words {
  uint32_t w[4];
} nnp_philox_words;

NNP_HD uint32_t nnp_mulhilo32(uint32_t a, uint32_t b, uint32_t* hi) {
  uint64_t product = (uint64_t)a * (uint64_t)b;
  *hi = (uint32_t)(product >> 32);
  return (uint32_t)product;
}

/* The four words for counter `counter` under key `seed`. */
NNP_HD nnp_philox_words nnp_philox4x32_10(uint64_t counter, uint64_t seed) {
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  int round;
  nnp_philox_words out;
  for (round = 0; round < 10; ++round) {
    uint32_t hi0, hi1;
    uint32_t lo0 = nnp_mulhilo32(0xD2511F53u, c0, &hi0);
    uint32_t lo1 = nnp_mulhilo32(0xCD9E8D57u, c2, &hi1);
    uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out.w[0] = c0;
  out.w[1] = c1;
  out.w[2] = c2;
  out.w[3] = c3;
  return out;
}

/* Uniform in [0, 1) with 53 random bits, from words 0 and 1. */
NNP_HD double nnp_philox_uniform(nnp_philox_words r) {
  uint64_t bits = ((uint64_t)r.w[0] << 21) ^ ((uint64_t)r.w[1] >> 11);
  return (double)(bits & ((1ull << 53) - 1)) * (1.0 / 9007199254740992.0);
}

/* Standard normal by Box-Muller from words 2 and 3 (computed in double, so
 * rounding to the output dtype hides libm differences between devices). */
NNP_HD double nnp_philox_normal(nnp_philox_words r) {
  double u1 = ((double)r.w[2] + 1.0) * (1.0 / 4294967296.0); /* (0, 1] */
  double u2 = (double)r.w[3] * (1.0 / 4294967296.0);         /* [0, 1) */
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Integer in [low, high) from words 0 and 1 (high > low). */
NNP_HD int64_t nnp_philox_int(nnp_philox_words r, int64_t low, int64_t high) {
  uint64_t range = (uint64_t)(high - low);
  uint64_t bits = ((uint64_t)r.w[0] << 32) | r.w[1];
  return low + (int64_t)(bits % range);
}

/* The value of one element, in double, for kind (nnp_random_kind). Uniform
 * and normal values are rounded to the output dtype by the caller. */
NNP_HD double nnp_philox_value(int32_t kind, uint64_t seed, uint64_t counter, double a, double b) {
  nnp_philox_words r = nnp_philox4x32_10(counter, seed);
  if (kind == 0) return a + (b - a) * nnp_philox_uniform(r);
  if (kind == 1) return a + b * nnp_philox_normal(r);
  return (double)nnp_philox_int(r, (int64_t)a, (int64_t)b);
}

#endif /* NNP_PHILOX_H */
