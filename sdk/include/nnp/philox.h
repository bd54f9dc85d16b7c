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
 * Header-only C99, also compilable by nvcc and hipcc. Host code that uses it
 * must be compiled with -ffp-contract=off (see NNP_PHILOX_ADD below).
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

/* Bit for bit on every device: normals need a logarithm and a cosine, and
 * libm's differ in the last bit between glibc, CUDA and HIP (seen on an H100:
 * f64 randn differed from the CPU's in the 53rd bit). So both are computed
 * here from additions, multiplications, one division, sqrt, frexp and floor,
 * each rounded once and in the same order everywhere. Device code uses the
 * _rn intrinsics, which nvcc and hipcc never fuse into FMAs; host code must be
 * compiled without contraction (-ffp-contract=off: GCC and Clang fuse a*b+c
 * wherever the target has FMA, e.g. aarch64 or -march=native). */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define NNP_PHILOX_ADD(a, b) __dadd_rn((a), (b))
#define NNP_PHILOX_MUL(a, b) __dmul_rn((a), (b))
#else
#define NNP_PHILOX_ADD(a, b) ((a) + (b))
#define NNP_PHILOX_MUL(a, b) ((a) * (b))
#endif
/* p * x + c, rounded twice (never fused). */
#define NNP_PHILOX_HORNER(p, x, c) NNP_PHILOX_ADD(NNP_PHILOX_MUL((p), (x)), (c))

/* ln(u) for u in (0, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = (m - 1)/(m + 1),
 * |s| < 0.1716, the series taken to s^23 (under half an ulp). */
NNP_HD double nnp_philox_log(double u) {
  const double ln2_hi = 0.693145751953125, ln2_lo = 1.42860682030941723212e-06; /* ln 2; e * hi is exact */
  int e = 0;
  double m = frexp(u, &e), s, s2, p;
  if (m < 0.70710678118654752) {
    m = m * 2.0; /* exact */
    --e;
  }
  s = (m - 1.0) / NNP_PHILOX_ADD(m, 1.0); /* m - 1 is exact (Sterbenz) */
  s2 = NNP_PHILOX_MUL(s, s);
  p = 0.043478260869565216;
  p = NNP_PHILOX_HORNER(p, s2, 0.047619047619047616);
  p = NNP_PHILOX_HORNER(p, s2, 0.052631578947368418);
  p = NNP_PHILOX_HORNER(p, s2, 0.058823529411764705);
  p = NNP_PHILOX_HORNER(p, s2, 0.066666666666666666);
  p = NNP_PHILOX_HORNER(p, s2, 0.076923076923076927);
  p = NNP_PHILOX_HORNER(p, s2, 0.090909090909090912);
  p = NNP_PHILOX_HORNER(p, s2, 0.1111111111111111);
  p = NNP_PHILOX_HORNER(p, s2, 0.14285714285714285);
  p = NNP_PHILOX_HORNER(p, s2, 0.20000000000000001);
  p = NNP_PHILOX_HORNER(p, s2, 0.33333333333333331);
  p = NNP_PHILOX_MUL(NNP_PHILOX_MUL(2.0, s), NNP_PHILOX_ADD(1.0, NNP_PHILOX_MUL(s2, p)));
  return NNP_PHILOX_ADD(NNP_PHILOX_MUL((double)e, ln2_hi), NNP_PHILOX_ADD(NNP_PHILOX_MUL((double)e, ln2_lo), p));
}

/* cos(2 pi t) for t in [0, 1) with at most 34 significant bits (t = w/2^32):
 * the nearest quarter turn is taken off exactly, leaving |a| <= pi/4 for the
 * Taylor series of sin and cos (to a^19 and a^18: under half an ulp). */
NNP_HD double nnp_philox_cos_2pi(double t) {
  const double x = t * 4.0;                                   /* exact, in [0, 4) */
  const double q = floor(x + 0.5);                            /* x + 0.5 is exact: x has at most 36 significant bits */
  const double a = NNP_PHILOX_MUL(x - q, 1.5707963267948966); /* x - q exact, in [-1/2, 1/2] */
  const double a2 = NNP_PHILOX_MUL(a, a);
  double c, s;
  c = -1.5619206968586225e-16;
  c = NNP_PHILOX_HORNER(c, a2, 4.7794773323873853e-14);
  c = NNP_PHILOX_HORNER(c, a2, -1.1470745597729725e-11);
  c = NNP_PHILOX_HORNER(c, a2, 2.08767569878681e-09);
  c = NNP_PHILOX_HORNER(c, a2, -2.7557319223985888e-07);
  c = NNP_PHILOX_HORNER(c, a2, 2.4801587301587302e-05);
  c = NNP_PHILOX_HORNER(c, a2, -0.0013888888888888889);
  c = NNP_PHILOX_HORNER(c, a2, 0.041666666666666664);
  c = NNP_PHILOX_HORNER(c, a2, -0.5);
  c = NNP_PHILOX_HORNER(c, a2, 1);
  s = -8.2206352466243295e-18;
  s = NNP_PHILOX_HORNER(s, a2, 2.8114572543455206e-15);
  s = NNP_PHILOX_HORNER(s, a2, -7.6471637318198164e-13);
  s = NNP_PHILOX_HORNER(s, a2, 1.6059043836821613e-10);
  s = NNP_PHILOX_HORNER(s, a2, -2.505210838544172e-08);
  s = NNP_PHILOX_HORNER(s, a2, 2.7557319223985893e-06);
  s = NNP_PHILOX_HORNER(s, a2, -0.00019841269841269841);
  s = NNP_PHILOX_HORNER(s, a2, 0.0083333333333333332);
  s = NNP_PHILOX_HORNER(s, a2, -0.16666666666666666);
  s = NNP_PHILOX_HORNER(s, a2, 1);
  s = NNP_PHILOX_MUL(s, a);
  switch ((int)q & 3) {
    case 0: return c;
    case 1: return -s;
    case 2: return -c;
    default: return s;
  }
}

/* Standard normal by Box-Muller from words 2 and 3. */
NNP_HD double nnp_philox_normal(nnp_philox_words r) {
  double u1 = ((double)r.w[2] + 1.0) * (1.0 / 4294967296.0); /* (0, 1], exact */
  double u2 = (double)r.w[3] * (1.0 / 4294967296.0);         /* [0, 1), exact */
  return NNP_PHILOX_MUL(sqrt(-2.0 * nnp_philox_log(u1)), nnp_philox_cos_2pi(u2));
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
  if (kind == 0) return NNP_PHILOX_ADD(a, NNP_PHILOX_MUL(b - a, nnp_philox_uniform(r)));
  if (kind == 1) return NNP_PHILOX_ADD(a, NNP_PHILOX_MUL(b, nnp_philox_normal(r)));
  return (double)nnp_philox_int(r, (int64_t)a, (int64_t)b);
}

#endif /* NNP_PHILOX_H */
