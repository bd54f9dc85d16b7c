// The backend's own f32 GEMM for AVX-512 machines: a 12 x 32 register
// block (24 of AVX-512's 32 registers accumulate; one broadcast of a and
// two loads of b per 24 FMAs), in the blocking of cpu_sgemm_blocking.hpp.
// On a 2-core Zen 4 machine the kernel alone reached 115 of the core's 117
// GFLOP/s, and W1's products with packing 105-109 (OpenBLAS 0.3.21's
// single-threaded sgemm: 99-105).
//
// Every function that uses AVX-512 carries its target attribute, so the
// rest of the backend stays baseline x86-64 and this file is only entered
// on a CPU that has it (cpu_sgemm.cpp checks).

// GCC 12's AVX-512 shuffles start from _mm512_undefined_ps(), which its
// -Wmaybe-uninitialized reports (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_sgemm.hpp"
#include "cpu_sgemm_blocking.hpp"

#define NNP_AVX512 __attribute__((target("avx512f,fma")))

namespace nnp::cpu {
namespace {

NNP_AVX512 inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << std::max<int64_t>(n, 0)) - 1);
}

// r[i] (row i of a 16 x 16 block) becomes column i.
NNP_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Each 128-bit lane L of r[4g + c] now holds rows 4g..4g+3 of column 4L + c.
  for (int g = 0; g < 4; ++g) {
    r[4 * g + 0] = _mm512_shuffle_ps(t[4 * g + 0], t[4 * g + 2], 0x44);
    r[4 * g + 1] = _mm512_shuffle_ps(t[4 * g + 0], t[4 * g + 2], 0xEE);
    r[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    r[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  // Gather lane L of r[c], r[4 + c], r[8 + c], r[12 + c]: column 4L + c.
  for (int c = 0; c < 4; ++c) {
    const __m512 lo02 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88), lo13 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xDD);
    const __m512 hi02 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    const __m512 hi13 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xDD);
    t[c] = _mm512_shuffle_f32x4(lo02, hi02, 0x88);
    t[8 + c] = _mm512_shuffle_f32x4(lo02, hi02, 0xDD);
    t[4 + c] = _mm512_shuffle_f32x4(lo13, hi13, 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(lo13, hi13, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

struct Avx512 {
  static constexpr int kMr = 12;  // rows of c per kernel call
  static constexpr int kNr = 32;  // columns of c per kernel call (two registers)
  // Most of k per packed block (a panel of b: 64 KB) and most rows of a
  // per block (kMc x kKc of a: 384 KB, L2); W1's k of 784 runs as 2 x 392.
  // Measured on W1's shapes (Zen 4): from 128 to 800 they moved the time by
  // < 3 %.
  static constexpr int64_t kKc = 512;
  static constexpr int64_t kMc = 192;
  // Most columns of b packed at once (8 MB of panels at most).
  static constexpr int64_t kNc = 4096;

  // A panel of `width` lanes, k-major, from a source whose lanes are rows
  // (each contiguous along k): out[k * width + w] = src[w * ld + k] for
  // w < lanes, 0 beyond. Sixteen lanes by sixteen k at a time, transposed in
  // registers.
  NNP_AVX512 static void pack_across(const float* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    for (int w0 = 0; w0 < width; w0 += 16) {
      const int64_t rows = std::clamp<int64_t>(lanes - w0, 0, 16);
      const __mmask16 store = first_lanes(width - w0);
      for (int64_t k0 = 0; k0 < kc; k0 += 16) {
        const int64_t depth = std::min<int64_t>(16, kc - k0);
        const __mmask16 load = first_lanes(depth);
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = i < rows ? _mm512_maskz_loadu_ps(load, src + (w0 + i) * ld + k0) : _mm512_setzero_ps();
        transpose16(r);
        for (int64_t kk = 0; kk < depth; ++kk) _mm512_mask_storeu_ps(out + (k0 + kk) * width + w0, store, r[kk]);
      }
    }
  }

  // The same panel from a source whose lanes are contiguous:
  // out[k * width + w] = src[k * ld + w].
  NNP_AVX512 static void pack_along(const float* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    for (int64_t k = 0; k < kc; ++k)
      for (int w0 = 0; w0 < width; w0 += 16)
        _mm512_mask_storeu_ps(out + k * width + w0, first_lanes(width - w0),
                              _mm512_maskz_loadu_ps(first_lanes(lanes - w0), src + k * ld + w0));
  }

  // One row of c (cols <= kNr) = a[0 .. kc) @ pb + beta * c over kc, for
  // products of fewer rows than the register block: a is read as it lies,
  // and four pairs of accumulators hide the multiply-adds' latency.
  NNP_AVX512 static void rows_kernel(int64_t kc, const float* a, const float* __restrict pb, float* c, int cols,
                                     float beta, const float* bias, bool relu) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, t0 = s0, t1 = s0, u0 = s0, u1 = s0, v0 = s0, v1 = s0;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4, pb += 4 * kNr) {
      s0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k]), _mm512_load_ps(pb), s0);
      s1 = _mm512_fmadd_ps(_mm512_set1_ps(a[k]), _mm512_load_ps(pb + 16), s1);
      t0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 1]), _mm512_load_ps(pb + kNr), t0);
      t1 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 1]), _mm512_load_ps(pb + kNr + 16), t1);
      u0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 2]), _mm512_load_ps(pb + 2 * kNr), u0);
      u1 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 2]), _mm512_load_ps(pb + 2 * kNr + 16), u1);
      v0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 3]), _mm512_load_ps(pb + 3 * kNr), v0);
      v1 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 3]), _mm512_load_ps(pb + 3 * kNr + 16), v1);
    }
    for (; k < kc; ++k, pb += kNr) {
      s0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k]), _mm512_load_ps(pb), s0);
      s1 = _mm512_fmadd_ps(_mm512_set1_ps(a[k]), _mm512_load_ps(pb + 16), s1);
    }
    __m512 r0 = _mm512_add_ps(_mm512_add_ps(s0, t0), _mm512_add_ps(u0, v0));
    __m512 r1 = _mm512_add_ps(_mm512_add_ps(s1, t1), _mm512_add_ps(u1, v1));
    const __mmask16 left = first_lanes(cols), right = first_lanes(cols - 16);
    const __m512 zero = _mm512_setzero_ps();
    if (beta != 0.0f) {
      r0 = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(left, c), r0);
      r1 = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_maskz_loadu_ps(right, c + 16), r1);
    }
    if (bias) {
      r0 = _mm512_add_ps(r0, _mm512_maskz_loadu_ps(left, bias));
      r1 = _mm512_add_ps(r1, _mm512_maskz_loadu_ps(right, bias + 16));
    }
    if (relu) {
      r0 = _mm512_max_ps(zero, r0);
      r1 = _mm512_max_ps(zero, r1);
    }
    _mm512_mask_storeu_ps(c, left, r0);
    _mm512_mask_storeu_ps(c + 16, right, r1);
  }

  // c[rows, cols] (at most kMr x kNr) = pa @ pb + beta * c over kc.
  NNP_AVX512 static void kernel(int64_t kc, const float* __restrict pa, const float* __restrict pb, float* c,
                                int64_t ldc, int rows, int cols, float beta, const float* bias, bool relu) {
    __m512 acc[kMr][2];
#pragma GCC unroll 12
    for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; ++k) {
      const __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16);
#pragma GCC unroll 12
      for (int i = 0; i < kMr; ++i) {
        const __m512 a = _mm512_set1_ps(pa[i]);
        acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
      }
      pa += kMr;
      pb += kNr;
    }
    const __mmask16 left = first_lanes(cols), right = first_lanes(cols - 16);
    const __m512 scale = _mm512_set1_ps(beta), zero = _mm512_setzero_ps();
    const __m512 bias0 = bias ? _mm512_maskz_loadu_ps(left, bias) : zero;
    const __m512 bias1 = bias ? _mm512_maskz_loadu_ps(right, bias + 16) : zero;
#pragma GCC unroll 12
    for (int i = 0; i < kMr; ++i) {
      if (i >= rows) break;
      float* row = c + i * ldc;
      __m512 r0 = acc[i][0], r1 = acc[i][1];
      if (beta != 0.0f) {  // beta 0 never reads c, which may hold NaN
        r0 = _mm512_fmadd_ps(scale, _mm512_maskz_loadu_ps(left, row), r0);
        r1 = _mm512_fmadd_ps(scale, _mm512_maskz_loadu_ps(right, row + 16), r1);
      }
      if (bias) {
        r0 = _mm512_add_ps(r0, bias0);
        r1 = _mm512_add_ps(r1, bias1);
      }
      if (relu) {  // max(0, v) gives v when v is NaN
        r0 = _mm512_max_ps(zero, r0);
        r1 = _mm512_max_ps(zero, r1);
      }
      _mm512_mask_storeu_ps(row, left, r0);
      _mm512_mask_storeu_ps(row + 16, right, r1);
    }
  }
};

}  // namespace

int64_t sgemm_avx512_packed_b_floats(int64_t k, int64_t n) { return sgemm_packed_b_floats<Avx512>(k, n); }
int64_t sgemm_avx512_panel_columns() { return Avx512::kNr; }

void sgemm_avx512_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, float* out) {
  sgemm_pack_b<Avx512>(trans_b, k, n, b, ldb, out);
}

void sgemm_avx512_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                         int64_t first, int64_t last, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  sgemm_blocked_packed<Avx512>(m, n, k, a, lda, packed_b, first, last, c, ldc, epilogue);
}

void sgemm_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  sgemm_blocked<Avx512>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, epilogue);
}

}  // namespace nnp::cpu
