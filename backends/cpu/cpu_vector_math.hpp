// exp, sigmoid, tanh and SiLU over 16 f32 lanes, written with GCC's vector
// extensions so that a caller compiled for AVX-512, AVX2 or SSE2
// (target_clones) gets one, two or four registers per vector. Each is
// within 2 ulp of libm's scalar function over the whole f32 range (NaN
// stays NaN, overflow gives inf, deep underflow 0, subnormal results kept):
// the elementwise chain uses them where libm would be called once per
// element.
#pragma once

#include <cstdint>
#include <cstring>

namespace nnp::cpu::vmath {

using vf = float __attribute__((vector_size(64)));
using vi = int32_t __attribute__((vector_size(64)));

__attribute__((always_inline)) inline vf splat(float v) { return vf{} + v; }

__attribute__((always_inline)) inline vf load(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((always_inline)) inline void store(float* p, vf v) { std::memcpy(p, &v, sizeof v); }

// exp(x) = 2^n * exp(r), x = n ln2 + r, |r| <= ln2 / 2 (ln2 split in two
// for an exact r), exp(r) by Cephes' degree-6 expf polynomial, 2^n as two
// factors of 2^(n/2) so that results down to the subnormals come out.
__attribute__((always_inline)) inline vf exp(vf x) {
  const vf hi = splat(89.0f), lo = splat(-104.0f);
  vf c = x > hi ? hi : x;  // NaN compares false both ways and stays
  c = c < lo ? lo : c;
  const vf magic = splat(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer (ties to even)
  const vf n = (c * splat(1.44269504088896341f) + magic) - magic;
  vf r = c - n * splat(0.693359375f);
  r = r - n * splat(-2.12194440e-4f);
  vf p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * r * r + (r + splat(1.0f));
  const vi k = __builtin_convertvector(n, vi);
  const vi half = k >> 1, rest = k - half;
  vi b1 = (half + 127) << 23, b2 = (rest + 127) << 23;
  vf s1, s2;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  vf result = p * s1 * s2;
  return x != x ? x : result;
}

__attribute__((always_inline)) inline vf sigmoid(vf x) { return splat(1.0f) / (splat(1.0f) + exp(-x)); }

__attribute__((always_inline)) inline vf silu(vf x) { return x / (splat(1.0f) + exp(-x)); }

// Cephes' tanhf: an odd polynomial below |x| = 0.625, where 1 - 2 / (e^2x + 1)
// would cancel, and that formula above it (1 from |x| = 9 on).
__attribute__((always_inline)) inline vf tanh(vf x) {
  const vf ax = x < 0 ? -x : x;
  const vf z = x * x;
  vf small = splat(-5.70498872745e-3f);
  small = small * z + splat(2.06390887954e-2f);
  small = small * z + splat(-5.37397155531e-2f);
  small = small * z + splat(1.33314422036e-1f);
  small = small * z + splat(-3.33332819422e-1f);
  small = small * z * x + x;
  vf large = splat(1.0f) - splat(2.0f) / (exp(ax + ax) + splat(1.0f));
  large = x < 0 ? -large : large;
  vf result = ax < splat(0.625f) ? small : large;
  return x != x ? x : result;
}

}  // namespace nnp::cpu::vmath
