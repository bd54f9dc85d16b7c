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

#include "cpu_bf16_simd.hpp"
#include "cpu_sgemm.hpp"
#include "cpu_sgemm_blocking.hpp"

#define NNP_AVX512 __attribute__((target("avx512f,fma")))

namespace nnp::cpu {
namespace {

NNP_AVX512 inline __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << std::max<int64_t>(n, 0)) - 1);
}

// Sixteen lanes as f32 from f32 or from bf16 bits, the first n (clamped
// to 0..16) read, zeros beyond.
NNP_AVX512 inline __m512 load_first(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(first_lanes(n), p); }
NNP_AVX512 inline __m512 load_first(const uint16_t* p, int64_t n) { return bf16_simd::widen16_first(p, n); }

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
  template <typename S>
  NNP_AVX512 static void pack_across(const S* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    for (int w0 = 0; w0 < width; w0 += 16) {
      const int64_t rows = std::clamp<int64_t>(lanes - w0, 0, 16);
      const __mmask16 store = first_lanes(width - w0);
      for (int64_t k0 = 0; k0 < kc; k0 += 16) {
        const int64_t depth = std::min<int64_t>(16, kc - k0);
        __m512 r[16];
        for (int i = 0; i < 16; ++i)
          r[i] = i < rows ? load_first(src + (w0 + i) * ld + k0, depth) : _mm512_setzero_ps();
        transpose16(r);
        for (int64_t kk = 0; kk < depth; ++kk) _mm512_mask_storeu_ps(out + (k0 + kk) * width + w0, store, r[kk]);
      }
    }
  }

  // The same panel from a source whose lanes are contiguous:
  // out[k * width + w] = src[k * ld + w].
  template <typename S>
  NNP_AVX512 static void pack_along(const S* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    for (int64_t k = 0; k < kc; ++k)
      for (int w0 = 0; w0 < width; w0 += 16)
        _mm512_mask_storeu_ps(out + k * width + w0, first_lanes(width - w0), load_first(src + k * ld + w0, lanes - w0));
  }

  // c[rows, cols] (at most kMr x kNr) = pa @ pb + beta * c over kc; stored
  // rounded to bf16 into `rounded` instead, where that is set.
  NNP_AVX512 static void kernel(int64_t kc, const float* __restrict pa, const float* __restrict pb, float* c,
                                int64_t ldc, int rows, int cols, float beta, const float* bias, bool relu,
                                uint16_t* rounded, int64_t ld_rounded) {
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
      if (rounded) {
        bf16_simd::store16(rounded + i * ld_rounded, r0, cols);
        bf16_simd::store16(rounded + i * ld_rounded + 16, r1, cols - 16);
      } else {
        _mm512_mask_storeu_ps(row, left, r0);
        _mm512_mask_storeu_ps(row + 16, right, r1);
      }
    }
  }
};

// The products whose right operand is a weight packed once (gemm_pack /
// gemm_packed). Its panels are 64 columns wide and the register block is
// 6 x 64 (24 accumulators; four loads of b and six broadcasts of a per 24
// multiply-adds), and a is read where it lies, never packed (ONNX Runtime's
// MLAS does the same): only b's panel sits in L1 while rows of a pass
// under it. Each tile first asks for its rows of c, which it writes at the
// end: in a plan, c is a fresh 1-4 MB buffer beyond L2, and waiting on its
// lines at the stores cost W7's products a fifth of their time.
struct Avx512Packed {
  static constexpr int kMr = 6;
  static constexpr int kNr = 64;
  // Most of k per block and most rows of a per block. With k up to 512 in
  // one block (W3's and W7's products), c is written once and never read
  // back; a panel of b (up to 128 KB) then streams from L2. On W7 a block of
  // 128 (the panel in L1, c read back per block) measured the same within
  // the machine's noise.
  static constexpr int64_t kKc = 512;
  static constexpr int64_t kMc = 192;

  NNP_AVX512 static void pack_across(const float* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    Avx512::pack_across(src, ld, lanes, kc, out, width);
  }
  NNP_AVX512 static void pack_along(const float* src, int64_t ld, int64_t lanes, int64_t kc, float* out, int width) {
    Avx512::pack_along(src, ld, lanes, kc, out, width);
  }

  // c[R, cols] (cols <= 64) = a[R, kc] (rows lda apart) @ pb (+ c where
  // accumulate) with the epilogue. Fewer than three rows keep two sets of
  // accumulators (even and odd k), so at least eight multiply-add chains
  // hide the latency.
  template <int R>
  NNP_AVX512 static void tile(int64_t kc, const float* a, int64_t lda, const float* __restrict pb, float* c,
                              int64_t ldc, int cols, bool accumulate, const float* bias, bool relu) {
    constexpr int kSets = R <= 2 ? 2 : 1;
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) __builtin_prefetch(c + i * ldc + 16 * j, 1, 3);
    __m512 acc[kSets][R][4];
#pragma GCC unroll 2
    for (int s = 0; s < kSets; ++s)
#pragma GCC unroll 6
      for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) acc[s][i][j] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + kSets <= kc; k += kSets) {
#pragma GCC unroll 2
      for (int s = 0; s < kSets; ++s, pb += kNr) {
        const __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16), b2 = _mm512_load_ps(pb + 32),
                     b3 = _mm512_load_ps(pb + 48);
#pragma GCC unroll 6
        for (int i = 0; i < R; ++i) {
          const __m512 x = _mm512_set1_ps(a[i * lda + k + s]);
          acc[s][i][0] = _mm512_fmadd_ps(x, b0, acc[s][i][0]);
          acc[s][i][1] = _mm512_fmadd_ps(x, b1, acc[s][i][1]);
          acc[s][i][2] = _mm512_fmadd_ps(x, b2, acc[s][i][2]);
          acc[s][i][3] = _mm512_fmadd_ps(x, b3, acc[s][i][3]);
        }
      }
    }
    if (kSets == 2) {
      if (k < kc) {  // an odd k's last step
        const __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16), b2 = _mm512_load_ps(pb + 32),
                     b3 = _mm512_load_ps(pb + 48);
#pragma GCC unroll 6
        for (int i = 0; i < R; ++i) {
          const __m512 x = _mm512_set1_ps(a[i * lda + k]);
          acc[0][i][0] = _mm512_fmadd_ps(x, b0, acc[0][i][0]);
          acc[0][i][1] = _mm512_fmadd_ps(x, b1, acc[0][i][1]);
          acc[0][i][2] = _mm512_fmadd_ps(x, b2, acc[0][i][2]);
          acc[0][i][3] = _mm512_fmadd_ps(x, b3, acc[0][i][3]);
        }
      }
#pragma GCC unroll 6
      for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) acc[0][i][j] = _mm512_add_ps(acc[0][i][j], acc[kSets - 1][i][j]);
    }
    const __m512 zero = _mm512_setzero_ps();
    __mmask16 lanes[4];
    __m512 shift[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      lanes[j] = first_lanes(cols - 16 * j);
      shift[j] = bias ? _mm512_maskz_loadu_ps(lanes[j], bias + 16 * j) : zero;
    }
#pragma GCC unroll 6
    for (int i = 0; i < R; ++i) {
      float* row = c + i * ldc;
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        __m512 r = acc[0][i][j];
        if (accumulate) r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(lanes[j], row + 16 * j));
        if (bias) r = _mm512_add_ps(r, shift[j]);
        if (relu) r = _mm512_max_ps(zero, r);  // max(0, v) gives v when v is NaN
        _mm512_mask_storeu_ps(row + 16 * j, lanes[j], r);
      }
    }
  }

  static void kernel(int64_t kc, const float* a, int64_t lda, const float* pb, float* c, int64_t ldc, int rows,
                     int cols, bool accumulate, const float* bias, bool relu) {
    switch (rows) {
      case 6: return tile<6>(kc, a, lda, pb, c, ldc, cols, accumulate, bias, relu);
      case 5: return tile<5>(kc, a, lda, pb, c, ldc, cols, accumulate, bias, relu);
      case 4: return tile<4>(kc, a, lda, pb, c, ldc, cols, accumulate, bias, relu);
      case 3: return tile<3>(kc, a, lda, pb, c, ldc, cols, accumulate, bias, relu);
      case 2: return tile<2>(kc, a, lda, pb, c, ldc, cols, accumulate, bias, relu);
      default: return tile<1>(kc, a, lda, pb, c, ldc, cols, accumulate, bias, relu);
    }
  }
};

// c[m, first .. last) = a[m, k] (row-major, lda) @ b[k, first .. last) with
// the epilogue, b packed by sgemm_pack_b<Avx512Packed>; first a multiple of
// 64. For each block of k, each block of rows of a runs under each panel.
void packed_product(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b, int64_t first,
                    int64_t last, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  using P = Avx512Packed;
  const int64_t kc_block = sgemm_even_block(k, P::kKc, 1), n_pad = (n + P::kNr - 1) / P::kNr * P::kNr;
  for (int64_t pc = 0; pc < k; pc += kc_block) {
    const int64_t kc = std::min(kc_block, k - pc);
    const float* block = packed_b + pc * n_pad;
    const bool final_block = pc + kc == k;
    for (int64_t ic = 0; ic < m; ic += P::kMc) {
      const int64_t mc = std::min(P::kMc, m - ic);
      for (int64_t jr = first; jr < last; jr += P::kNr)
        for (int64_t ir = ic; ir < ic + mc; ir += P::kMr)
          P::kernel(kc, a + ir * lda + pc, lda, block + jr * kc, c + ir * ldc + jr, ldc,
                    static_cast<int>(std::min<int64_t>(P::kMr, ic + mc - ir)),
                    static_cast<int>(std::min<int64_t>(P::kNr, last - jr)), pc > 0,
                    final_block && epilogue.bias ? epilogue.bias + jr : nullptr, final_block && epilogue.relu);
    }
  }
}

}  // namespace

int64_t sgemm_avx512_packed_b_floats(int64_t k, int64_t n) { return sgemm_packed_b_floats<Avx512Packed>(k, n); }
int64_t sgemm_avx512_panel_columns() { return Avx512Packed::kNr; }

void sgemm_avx512_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, float* out) {
  sgemm_pack_b<Avx512Packed>(trans_b, k, n, b, ldb, out);
}

void sgemm_avx512_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                         int64_t first, int64_t last, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  packed_product(m, n, k, a, lda, packed_b, first, last, c, ldc, epilogue);
}

void sgemm_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  sgemm_blocked<Avx512>(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, epilogue);
}

void sgemm_bf16_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                       const uint16_t* b, int64_t ldb, uint16_t* c, int64_t ldc) {
  float* sums = sgemm_packing_buffer(2, sgemm_bf16_sums_floats<Avx512>(m, n, k));
  sgemm_blocked<Avx512>(trans_a, trans_b, m, n, k, a, lda, b, ldb, 0.0f, sums, n, SgemmEpilogue{}, c, ldc);
}

}  // namespace nnp::cpu
