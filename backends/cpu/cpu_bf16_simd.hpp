// bf16 in SIMD registers, for the kernels that widen bf16 as they load it
// and round f32 to bf16 as they store it (cpu_bf16_vector.cpp and the own
// GEMM's, cpu_sgemm_avx2.cpp and cpu_sgemm_avx512.cpp). A bf16 is the high
// half of the f32 it stands for, so widening is a shift; rounding is
// Traits<BFloat16>'s bit for bit: to nearest even, a NaN kept and made
// quiet.
//
// Every function carries its own target attribute (AVX2, or AVX-512F) and
// is inlined into kernels built for that set or a wider one; the including
// file stays baseline x86-64 and calls them only after cpu_isa() said so.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

// GCC 12's AVX-512 widening and shifts start from _mm512_undefined_epi32(),
// which its -Wuninitialized and -Wmaybe-uninitialized report (GCC bug
// 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define NNP_BF16_AVX2 __attribute__((target("avx2")))
#define NNP_BF16_AVX512 __attribute__((target("avx512f")))

namespace nnp::cpu::bf16_simd {

// -- AVX2: eight lanes --

NNP_BF16_AVX2 inline __m256 widen8(__m128i bits) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}
NNP_BF16_AVX2 inline __m256 widen8(const uint16_t* p) {
  return widen8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
// The first n (clamped to 0..8), zeros beyond; nothing past them is read:
// the pairs load masked, then an odd last element alone.
NNP_BF16_AVX2 inline __m256 widen8_first(const uint16_t* p, int64_t n) {
  const int count = static_cast<int>(std::clamp<int64_t>(n, 0, 8));
  const __m128i pairs = _mm_cmpgt_epi32(_mm_set1_epi32(count / 2), _mm_setr_epi32(0, 1, 2, 3));
  __m128i bits = _mm_maskload_epi32(reinterpret_cast<const int*>(p), pairs);
  if (count % 2 != 0) {
    const __m128i lane = _mm_cmpeq_epi16(_mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7), _mm_set1_epi16(short(count - 1)));
    bits = _mm_or_si128(bits, _mm_and_si128(lane, _mm_set1_epi16(static_cast<short>(p[count - 1]))));
  }
  return widen8(bits);
}

// Eight f32 rounded to bf16 bits, in the low half of each 32-bit lane.
NNP_BF16_AVX2 inline __m256i round8(__m256 v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
// Sixteen f32 (lo, then hi) rounded into sixteen bf16 lanes.
NNP_BF16_AVX2 inline __m256i round16(__m256 lo, __m256 hi) {
  // packus interleaves the 128-bit halves (lo 0-3, hi 0-3, lo 4-7, hi 4-7); the permute puts them in order.
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(round8(lo), round8(hi)), 0xD8);
}
// Sixteen bf16 lanes into p[0 .. count), count <= 16.
NNP_BF16_AVX2 inline void store16(uint16_t* p, __m256i bits, int64_t count) {
  if (count >= 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), bits);
    return;
  }
  alignas(32) uint16_t part[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(part), bits);
  std::memcpy(p, part, static_cast<size_t>(std::max<int64_t>(count, 0)) * sizeof(uint16_t));
}
// Sixteen bf16 lanes from p[0 .. count), zeros beyond.
NNP_BF16_AVX2 inline __m256i load16(const uint16_t* p, int64_t count) {
  if (count >= 16) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  alignas(32) uint16_t part[16] = {};
  std::memcpy(part, p, static_cast<size_t>(std::max<int64_t>(count, 0)) * sizeof(uint16_t));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(part));
}

// -- AVX-512: sixteen lanes --

NNP_BF16_AVX512 inline __m512 widen16(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}
NNP_BF16_AVX512 inline __m512 widen16(const uint16_t* p) {
  return widen16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// The first n (clamped to 0..16), zeros beyond; nothing past them is read.
NNP_BF16_AVX512 inline __m512 widen16_first(const uint16_t* p, int64_t n) {
  if (n >= 16) return widen16(p);
  const int count = static_cast<int>(std::max<int64_t>(n, 0));
  const auto pairs = static_cast<__mmask16>((1u << (count / 2)) - 1);
  __m256i bits = _mm512_castsi512_si256(_mm512_maskz_loadu_epi32(pairs, p));
  if (count % 2 != 0) {
    const __m256i lane = _mm256_cmpeq_epi16(_mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm256_set1_epi16(static_cast<short>(count - 1)));
    bits = _mm256_or_si256(bits, _mm256_and_si256(lane, _mm256_set1_epi16(static_cast<short>(p[count - 1]))));
  }
  return widen16(bits);
}

// Sixteen f32 rounded to bf16 bits, in the low half of each 32-bit lane.
NNP_BF16_AVX512 inline __m512i round16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), rounded, quiet);
}
// Sixteen f32 rounded into p[0 .. count), count <= 16.
// (A whole vector narrows in a register and stores plainly: the masked
// narrowing store, vpmovdw to memory, runs several times slower on Intel's
// cores.)
NNP_BF16_AVX512 inline void store16(uint16_t* p, __m512 v, int64_t count) {
  if (count >= 16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(round16(v)));
    return;
  }
  const auto lanes = static_cast<__mmask16>((1u << std::max<int64_t>(count, 0)) - 1);
  _mm512_mask_cvtepi32_storeu_epi16(p, lanes, round16(v));
}

}  // namespace nnp::cpu::bf16_simd
