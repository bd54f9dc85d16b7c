// exp, sigmoid, tanh and SiLU over 4, 8 or 16 f32 lanes, written with GCC's
// vector extensions: each build of a caller (NNP_CPU_CLONES) uses the width
// of its registers, 16 lanes for AVX-512, 8 for AVX2, 4 for SSE2. A vector
// wider than the build's registers is split by GCC, but its selects
// (a ? b : c) are then done one lane at a time, which made the AVX2 build
// of the elementwise chain four times slower than it should be. Each is
// within 2 ulp of libm's scalar function over the whole f32 range (NaN
// stays NaN, overflow gives inf, deep underflow 0, subnormal results kept):
// the elementwise chain uses them where libm would be called once per
// element.
#pragma once

#include <cstdint>
#include <cstring>

namespace nnp::cpu::vmath {

template <int N>
struct Vec {
  typedef float f __attribute__((vector_size(4 * N)));
  typedef int32_t i __attribute__((vector_size(4 * N)));
};
using vf = Vec<16>::f;
using vi = Vec<16>::i;
template <typename V>
constexpr int lanes = static_cast<int>(sizeof(V) / sizeof(float));

template <typename V = vf>
__attribute__((always_inline)) inline V splat(float v) {
  return V{} + v;
}

template <typename V = vf>
__attribute__((always_inline)) inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename V>
__attribute__((always_inline)) inline void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// exp(x) = 2^n * exp(r), x = n ln2 + r, |r| <= ln2 / 2 (ln2 split in two
// for an exact r), exp(r) by Cephes' degree-6 expf polynomial, 2^n as two
// factors of 2^(n/2) so that results down to the subnormals come out.
template <typename V>
__attribute__((always_inline)) inline V exp(V x) {
  using I = typename Vec<lanes<V>>::i;
  const V hi = splat<V>(89.0f), lo = splat<V>(-104.0f);
  V c = x > hi ? hi : x;  // NaN compares false both ways and stays
  c = c < lo ? lo : c;
  const V magic = splat<V>(12582912.0f);  // 1.5 * 2^23: adding it rounds to an integer (ties to even)
  const V n = (c * splat<V>(1.44269504088896341f) + magic) - magic;
  V r = c - n * splat<V>(0.693359375f);
  r = r - n * splat<V>(-2.12194440e-4f);
  V p = splat<V>(1.9875691500e-4f);
  p = p * r + splat<V>(1.3981999507e-3f);
  p = p * r + splat<V>(8.3334519073e-3f);
  p = p * r + splat<V>(4.1665795894e-2f);
  p = p * r + splat<V>(1.6666665459e-1f);
  p = p * r + splat<V>(5.0000001201e-1f);
  p = p * r * r + (r + splat<V>(1.0f));
  const I k = __builtin_convertvector(n, I);
  const I half = k >> 1, rest = k - half;
  I b1 = (half + 127) << 23, b2 = (rest + 127) << 23;
  V s1, s2;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  V result = p * s1 * s2;
  return x != x ? x : result;
}

template <typename V>
__attribute__((always_inline)) inline V sigmoid(V x) {
  return splat<V>(1.0f) / (splat<V>(1.0f) + exp(-x));
}

template <typename V>
__attribute__((always_inline)) inline V silu(V x) {
  return x / (splat<V>(1.0f) + exp(-x));
}

// Cephes' tanhf: an odd polynomial below |x| = 0.625, where 1 - 2 / (e^2x + 1)
// would cancel, and that formula above it (1 from |x| = 9 on).
template <typename V>
__attribute__((always_inline)) inline V tanh(V x) {
  const V ax = x < 0 ? -x : x;
  const V z = x * x;
  V small = splat<V>(-5.70498872745e-3f);
  small = small * z + splat<V>(2.06390887954e-2f);
  small = small * z + splat<V>(-5.37397155531e-2f);
  small = small * z + splat<V>(1.33314422036e-1f);
  small = small * z + splat<V>(-3.33332819422e-1f);
  small = small * z * x + x;
  V large = splat<V>(1.0f) - splat<V>(2.0f) / (exp(ax + ax) + splat<V>(1.0f));
  large = x < 0 ? -large : large;
  V result = ax < splat<V>(0.625f) ? small : large;
  return x != x ? x : result;
}

}  // namespace nnp::cpu::vmath
