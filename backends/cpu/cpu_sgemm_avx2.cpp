// The backend's own f32 GEMM for AVX2 + FMA machines: a 6 x 16 register
// block (BLIS's Haswell shape: 12 of the 16 ymm registers accumulate, two
// hold a row of the b panel, one a broadcast of a), in the blocking of
// cpu_sgemm_blocking.hpp, over f32 operands or bf16 ones widened as packed.
//
// Every function that uses AVX2 carries its target attribute, so the rest
// of the backend stays baseline x86-64 and this file is only entered on a
// CPU that has it (cpu_sgemm.cpp checks).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_bf16_simd.hpp"
#include "cpu_sgemm.hpp"
#include "cpu_sgemm_blocking.hpp"

#define NNP_AVX2 __attribute__((target("avx2,fma")))

namespace nnp::cpu {
namespace {

// The first n (0..8) lanes set, as maskload/maskstore read a mask.
NNP_AVX2 inline __m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(n, 0, 8))),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Eight lanes as f32, from f32 or from bf16 bits; the first n (clamped to
// 0..8) with zeros beyond, nothing past them read.
NNP_AVX2 inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
NNP_AVX2 inline __m256 load8(const uint16_t* p) { return bf16_simd::widen8(p); }
NNP_AVX2 inline __m256 load_first(const float* p, int64_t n) { return _mm256_maskload_ps(p, first_lanes(n)); }
NNP_AVX2 inline __m256 load_first(const uint16_t* p, int64_t n) { return bf16_simd::widen8_first(p, n); }

// r[i] (row i of an 8 x 8 block) becomes column i.
NNP_AVX2 inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

struct Avx2 {
  static constexpr int kMr = 6;   // rows of c per kernel call
  static constexpr int kNr = 16;  // columns of c per kernel call (two registers)
  // A b panel (kKc x 16, 16 KB) in half of L1; a block of a (kMc x kKc,
  // 72 KB) in L2 (512 KB here); all of W1's packed b (at most 784 x 256
  // per call) in L3.
  static constexpr int64_t kKc = 256;
  static constexpr int64_t kMc = 72;
  static constexpr int64_t kNc = 4096;

  // Lanes are rows, each contiguous along k: eight lanes by eight k at a
  // time, transposed in registers. Every store is eight floats; where the
  // width is 6 the last two land on the next k's first two, which the
  // next store (or the next panel, or the buffer's slack) overwrites.
  template <typename S>
  NNP_AVX2 static void pack_across(const S* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    for (int w0 = 0; w0 < width; w0 += 8) {
      const int64_t rows = std::clamp<int64_t>(lanes - w0, 0, 8);
      for (int64_t k0 = 0; k0 < kc; k0 += 8) {
        const int64_t depth = std::min<int64_t>(8, kc - k0);
        __m256 r[8];
        if (depth == 8) {
          for (int i = 0; i < 8; ++i) r[i] = i < rows ? load8(src + (w0 + i) * ld + k0) : _mm256_setzero_ps();
        } else {
          for (int i = 0; i < 8; ++i)
            r[i] = i < rows ? load_first(src + (w0 + i) * ld + k0, depth) : _mm256_setzero_ps();
        }
        transpose8(r);
        for (int64_t kk = 0; kk < depth; ++kk) _mm256_storeu_ps(out + (k0 + kk) * width + w0, r[kk]);
      }
    }
  }

  // Lanes contiguous: out[k * width + w] = src[k * ld + w]. Stores overlap
  // as in pack_across.
  template <typename S>
  NNP_AVX2 static void pack_along(const S* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    if (width == 16 && lanes == 16) {
      for (int64_t k = 0; k < kc; ++k) {
        _mm256_storeu_ps(out + k * 16, load8(src + k * ld));
        _mm256_storeu_ps(out + k * 16 + 8, load8(src + k * ld + 8));
      }
      return;
    }
    for (int w0 = 0; w0 < width; w0 += 8) {
      const int64_t count = std::min<int64_t>(lanes, width) - w0;
      for (int64_t k = 0; k < kc; ++k) _mm256_storeu_ps(out + k * width + w0, load_first(src + k * ld + w0, count));
    }
  }

  // c[rows, cols] (at most 6 x 16) = pa @ pb + beta * c over kc; stored
  // rounded to bf16 into `rounded` instead, where that is set.
  NNP_AVX2 static void kernel(int64_t kc, const float* __restrict pa, const float* __restrict pb, float* c, int64_t ldc,
                              int rows, int cols, float beta, const float* bias, bool relu, uint16_t* rounded,
                              int64_t ld_rounded) {
    __m256 acc[kMr][2];
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; ++k) {
      const __m256 b0 = _mm256_load_ps(pb), b1 = _mm256_load_ps(pb + 8);
#pragma GCC unroll 6
      for (int i = 0; i < kMr; ++i) {
        const __m256 a = _mm256_broadcast_ss(pa + i);
        acc[i][0] = _mm256_fmadd_ps(a, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(a, b1, acc[i][1]);
      }
      pa += kMr;
      pb += kNr;
    }
    const __m256 scale = _mm256_set1_ps(beta), zero = _mm256_setzero_ps();
    // The epilogue: the bias of the block's columns, then max(0, v) (v when NaN).
    auto finish = [&](__m256& r0, __m256& r1, __m256 bias0, __m256 bias1) NNP_AVX2 {
      if (bias) {
        r0 = _mm256_add_ps(r0, bias0);
        r1 = _mm256_add_ps(r1, bias1);
      }
      if (relu) {
        r0 = _mm256_max_ps(zero, r0);
        r1 = _mm256_max_ps(zero, r1);
      }
    };
    if (rows == kMr && cols == kNr) {
      const __m256 bias0 = bias ? _mm256_loadu_ps(bias) : zero, bias1 = bias ? _mm256_loadu_ps(bias + 8) : zero;
#pragma GCC unroll 6
      for (int i = 0; i < kMr; ++i) {
        float* row = c + i * ldc;
        __m256 r0 = acc[i][0], r1 = acc[i][1];
        if (beta != 0.0f) {  // beta 0 never reads c, which may hold NaN
          r0 = _mm256_fmadd_ps(scale, _mm256_loadu_ps(row), r0);
          r1 = _mm256_fmadd_ps(scale, _mm256_loadu_ps(row + 8), r1);
        }
        finish(r0, r1, bias0, bias1);
        if (rounded) {
          bf16_simd::store16(rounded + i * ld_rounded, bf16_simd::round16(r0, r1), kNr);
        } else {
          _mm256_storeu_ps(row, r0);
          _mm256_storeu_ps(row + 8, r1);
        }
      }
      return;
    }
    // Indexed by constants only (the loop unrolled, rows tested inside), so
    // the accumulators stay in registers through the k loop.
    const __m256i left = first_lanes(cols), right = first_lanes(cols - 8);
    const __m256 bias0 = bias ? _mm256_maskload_ps(bias, left) : zero;
    const __m256 bias1 = bias ? _mm256_maskload_ps(bias + 8, right) : zero;
#pragma GCC unroll 6
    for (int i = 0; i < kMr; ++i) {
      if (i >= rows) break;
      float* row = c + i * ldc;
      __m256 r0 = acc[i][0], r1 = acc[i][1];
      if (beta != 0.0f) {
        r0 = _mm256_fmadd_ps(scale, _mm256_maskload_ps(row, left), r0);
        r1 = _mm256_fmadd_ps(scale, _mm256_maskload_ps(row + 8, right), r1);
      }
      finish(r0, r1, bias0, bias1);
      if (rounded) {
        bf16_simd::store16(rounded + i * ld_rounded, bf16_simd::round16(r0, r1), cols);
      } else {
        _mm256_maskstore_ps(row, left, r0);
        _mm256_maskstore_ps(row + 8, right, r1);
      }
    }
  }
};

}  // namespace

void sgemm_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  sgemm_blocked<Avx2>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, epilogue);
}

void sgemm_bf16_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                     const uint16_t* b, int64_t ldb, uint16_t* c, int64_t ldc) {
  float* sums = sgemm_packing_buffer(2, sgemm_bf16_sums_floats<Avx2>(m, n, k));
  sgemm_blocked<Avx2>(trans_a, trans_b, m, n, k, a, lda, b, ldb, 0.0f, sums, n, SgemmEpilogue{}, c, ldc);
}

}  // namespace nnp::cpu
