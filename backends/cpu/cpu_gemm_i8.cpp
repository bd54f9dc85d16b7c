// The int8 GEMM of quantized layers: out[m, n] = sum_k a[m, k] * b[n, k] in
// exact int32. Both operands are read along k, so each output is a dot
// product of two contiguous rows, and b (a layer's weights, [out, in] as
// stored) needs no packing. With AVX512-VNNI, vpdpbusd multiplies 64 bytes
// at a time and adds each four products into an int32 lane. With AVX2, a
// is widened to int16 once per call (quantized straight to int16 where the
// kernel quantizes), b 16 bytes at a time as it is read, and vpmaddwd
// multiplies and adds pairs into int32 lanes: exact, unlike vpmaddubsw,
// whose u8 x s8 pairs saturate int16 (ONNX Runtime's AVX2 kernels accept
// that; the sums here must equal the reference's), and as many products
// per multiply as vpmaddubsw followed by vpmaddwd. Without either, plain
// loops give the same integers.
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which its
// -Wuninitialized and -Wmaybe-uninitialized report (GCC bug 105593, fixed
// in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

int32_t dot_scalar(const int8_t* a, const int8_t* b, int64_t k) {
  int32_t sum = 0;
  for (int64_t i = 0; i < k; ++i) sum += int32_t{a[i]} * int32_t{b[i]};
  return sum;
}

// Where a tile's sums go: as they are (gemm_i8), or rescaled to floats
// (quantized_gemm: out = float(sum) * scale[n] + bias[n]; the file is built
// with -ffp-contract=off, so the product and the sum round separately).
struct StoreSums {
  int32_t* out;
  int64_t n;
  void operator()(const int32_t* sums, int64_t i, int64_t j, int64_t count) const {
    std::copy(sums, sums + count, out + i * n + j);
  }
};
struct StoreScaled {
  float* out;
  int64_t n;
  const float* scale;
  const float* bias;  // or null
  void operator()(const int32_t* sums, int64_t i, int64_t j, int64_t count) const {
    float* row = out + i * n + j;
    for (int64_t c = 0; c < count; ++c) {
      const float y = static_cast<float>(sums[c]) * scale[j + c];
      row[c] = bias ? y + bias[j + c] : y;
    }
  }
};

#if defined(__x86_64__)
// ---- AVX2 ----
// a as int16 rows of `stride` values (k rounded up to 16, zeros beyond),
// b as int8 [N, K]. A tile of 4 rows of a by 2 rows of b keeps 8 int32
// accumulators of 8 lanes, named (GCC keeps an array of vectors in
// memory), 2 of b's widened rows, a row of a and a product: 12 of the 16
// registers (a 4 x 3 tile needs 17, and its spills halved the rate); each
// of a's loads feeds two multiplies, each of b's four.
#define NNP_I8_AVX2 __attribute__((target("avx2")))

// Lanes 0..3 of the result: the sums of the 8 lanes of x0, x1, x2, x3.
NNP_I8_AVX2 inline __m128i sums_of_4(__m256i x0, __m256i x1, __m256i x2, __m256i x3) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(x0, x1), _mm256_hadd_epi32(x2, x3));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// 16 bytes of b widened to int16.
NNP_I8_AVX2 inline __m256i widen16(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// The empty asm keeps a's row in a register: GCC otherwise folds the load
// into each multiply, loading the row once per column (a third slower).
#define NNP_I8_ROW(r)                                                                       \
  if (R > r) {                                                                              \
    __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a16 + r * stride + p)); \
    asm("" : "+x"(x));                                                                      \
    acc##r##0 = _mm256_add_epi32(acc##r##0, _mm256_madd_epi16(x, w0));                      \
    if (C > 1) acc##r##1 = _mm256_add_epi32(acc##r##1, _mm256_madd_epi16(x, w1));           \
  }
// Rows [i, i + R) by columns [j, j + C) of out; a16 points at row i, b0 at row j of b.
template <int R, int C, typename Store>
NNP_I8_AVX2 inline void avx2_tile(const int16_t* a16, int64_t stride, const int8_t* b0, int64_t k, const Store& store,
                                  int64_t i, int64_t j) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i acc00 = zero, acc01 = zero, acc10 = zero, acc11 = zero, acc20 = zero, acc21 = zero, acc30 = zero,
          acc31 = zero;
  const int64_t k16 = k - k % 16;
  for (int64_t p = 0; p < k16; p += 16) {
    const __m256i w0 = widen16(b0 + p), w1 = C > 1 ? widen16(b0 + k + p) : zero;
    NNP_I8_ROW(0)
    NNP_I8_ROW(1)
    NNP_I8_ROW(2)
    NNP_I8_ROW(3)
  }
  alignas(16) int32_t sums[2][4];
  // sums[c] holds rows 0..3 of column c (one reduction for four accumulators).
  _mm_store_si128(reinterpret_cast<__m128i*>(sums[0]), sums_of_4(acc00, acc10, acc20, acc30));
  if (C > 1) _mm_store_si128(reinterpret_cast<__m128i*>(sums[1]), sums_of_4(acc01, acc11, acc21, acc31));
  for (int r = 0; r < R; ++r) {
    int32_t row[2];
    for (int c = 0; c < C; ++c) {
      // The last k % 16 one at a time: a tail block in the loop above
      // costs GCC registers and slowed the whole loop by a quarter.
      row[c] = sums[c][r];
      for (int64_t q = k16; q < k; ++q) row[c] += int32_t{a16[r * stride + q]} * int32_t{b0[c * k + q]};
    }
    store(row, i + r, j, C);
  }
}
#undef NNP_I8_ROW

template <int R, typename Store>
NNP_I8_AVX2 void row_block_avx2(const int16_t* a16, int64_t stride, const int8_t* b, int64_t k, const Store& store,
                                int64_t i, int64_t n0, int64_t n1) {
  int64_t j = n0;
  for (; j + 2 <= n1; j += 2) avx2_tile<R, 2>(a16, stride, b + j * k, k, store, i, j);
  if (j < n1) avx2_tile<R, 1>(a16, stride, b + j * k, k, store, i, j);
}

// Columns [n0, n1) of the product, four rows of a (a few KB, in L1) at a
// time against every column pair's rows of b, which come from L2: per
// multiply, b's widened rows are half the bytes a's int16 rows would be.
template <typename Store>
NNP_I8_AVX2 void columns_avx2(const int16_t* a16, int64_t stride, const int8_t* b, const Store& store, int64_t m,
                              int64_t n0, int64_t n1, int64_t k) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) row_block_avx2<4>(a16 + i * stride, stride, b, k, store, i, n0, n1);
  const int16_t* rest = a16 + i * stride;
  switch (m - i) {
    case 3: row_block_avx2<3>(rest, stride, b, k, store, i, n0, n1); break;
    case 2: row_block_avx2<2>(rest, stride, b, k, store, i, n0, n1); break;
    case 1: row_block_avx2<1>(rest, stride, b, k, store, i, n0, n1); break;
    default: break;
  }
}

// From 8 rows of a on, the panel form: b's columns in panels of 16, each
// packed once per call (a 16th of the multiplies' reads at 8 rows, less
// from there on) into k-pairs of int16, [K / 2][16 columns][2]; a's pair
// (a[i][2p], a[i][2p + 1]) broadcast as one 32-bit lane, so vpmaddwd adds
// both products into column n's lane. The sums land in the output's lanes:
// no reduction across lanes per tile, and a tile of 6 rows by 16 columns
// (12 accumulators, 2 of b's vectors, a broadcast and a product: all 16
// registers, no spill under GCC 12) reads 2 vectors of b and 6 broadcasts
// per 192 products.
constexpr int64_t kPanel = 16;
constexpr int64_t kPanelRows = 8;  // below it, packing costs more than it saves: the row form
constexpr int64_t kPairBlock = 128;

// panel[q][c][0..1] = b[j0 + c][2q], b[j0 + c][2q + 1] (zeros past N and K)
// for q < pairs: 8 columns by 8 pairs a step, transposed as 16-bit
// elements and widened; the edges one value at a time.
NNP_I8_AVX2 void pack_panel(const int8_t* b, int64_t n, int64_t k, int64_t j0, int64_t pairs, int16_t* panel) {
  const int64_t cols = std::min(kPanel, n - j0), k16 = k - k % 16;
  for (int64_t c0 = 0; c0 < kPanel; c0 += 8) {
    if (c0 + 8 <= cols) {
      for (int64_t p = 0; p < k16; p += 16) {  // 8 pairs of 8 columns
        __m128i r[8], t[8];
        for (int c = 0; c < 8; ++c) r[c] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (j0 + c0 + c) * k + p));
        for (int c = 0; c < 4; ++c) {
          t[2 * c] = _mm_unpacklo_epi16(r[2 * c], r[2 * c + 1]);
          t[2 * c + 1] = _mm_unpackhi_epi16(r[2 * c], r[2 * c + 1]);
        }
        for (int c = 0; c < 2; ++c) {
          r[4 * c] = _mm_unpacklo_epi32(t[4 * c], t[4 * c + 2]);
          r[4 * c + 1] = _mm_unpackhi_epi32(t[4 * c], t[4 * c + 2]);
          r[4 * c + 2] = _mm_unpacklo_epi32(t[4 * c + 1], t[4 * c + 3]);
          r[4 * c + 3] = _mm_unpackhi_epi32(t[4 * c + 1], t[4 * c + 3]);
        }
        // r[0..3]: pairs (0, 1), (2, 3), (4, 5), (6, 7) of columns 0-3; r[4..7] of columns 4-7.
        for (int q = 0; q < 4; ++q) {
          const __m128i lo = _mm_unpacklo_epi64(r[q], r[4 + q]), hi = _mm_unpackhi_epi64(r[q], r[4 + q]);
          int16_t* at = panel + ((p / 2 + 2 * q) * kPanel + c0) * 2;
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), _mm256_cvtepi8_epi16(lo));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + 2 * kPanel), _mm256_cvtepi8_epi16(hi));
        }
      }
    }
    const int64_t done = c0 + 8 <= cols ? k16 : 0;
    for (int64_t c = c0; c < c0 + 8; ++c)
      for (int64_t q = done / 2; q < pairs; ++q)
        for (int64_t e = 0; e < 2; ++e) {
          const int64_t kk = 2 * q + e;
          panel[(q * kPanel + c) * 2 + e] = c < cols && kk < k ? b[(j0 + c) * k + kk] : 0;
        }
  }
}

#define NNP_I8_PANEL_ROW(r)                                                                    \
  if (R > r) {                                                                                 \
    const __m256i x = _mm256_set1_epi32(*reinterpret_cast<const int32_t*>(a_at + r * stride)); \
    acc##r##0 = _mm256_add_epi32(acc##r##0, _mm256_madd_epi16(x, w0));                         \
    acc##r##1 = _mm256_add_epi32(acc##r##1, _mm256_madd_epi16(x, w1));                         \
  }
// Rows [i, i + R) by the panel's columns [j, j + count) of out, over
// pairs [q0, q1): the sums start from `partial` (R rows of 16, or 0 where
// first) and go back there, or to store where last.
template <int R, typename Store>
NNP_I8_AVX2 void panel_tile(const int16_t* a16, int64_t stride, const int16_t* panel, int64_t q0, int64_t q1,
                            int32_t* partial, bool first, bool last, const Store& store, int64_t i, int64_t j,
                            int64_t count) {
  __m256i acc00 = _mm256_setzero_si256(), acc01 = acc00, acc10 = acc00, acc11 = acc00, acc20 = acc00, acc21 = acc00,
          acc30 = acc00, acc31 = acc00, acc40 = acc00, acc41 = acc00, acc50 = acc00, acc51 = acc00;
  auto at = [&](int r, int h) { return reinterpret_cast<__m256i*>(partial + r * kPanel + 8 * h); };
  if (!first) {
    acc00 = _mm256_load_si256(at(0, 0)), acc01 = _mm256_load_si256(at(0, 1));
    if (R > 1) acc10 = _mm256_load_si256(at(1, 0)), acc11 = _mm256_load_si256(at(1, 1));
    if (R > 2) acc20 = _mm256_load_si256(at(2, 0)), acc21 = _mm256_load_si256(at(2, 1));
    if (R > 3) acc30 = _mm256_load_si256(at(3, 0)), acc31 = _mm256_load_si256(at(3, 1));
    if (R > 4) acc40 = _mm256_load_si256(at(4, 0)), acc41 = _mm256_load_si256(at(4, 1));
    if (R > 5) acc50 = _mm256_load_si256(at(5, 0)), acc51 = _mm256_load_si256(at(5, 1));
  }
  for (int64_t q = q0; q < q1; ++q) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + q * 2 * kPanel));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + q * 2 * kPanel + kPanel));
    const int16_t* a_at = a16 + 2 * q;
    NNP_I8_PANEL_ROW(0)
    NNP_I8_PANEL_ROW(1)
    NNP_I8_PANEL_ROW(2)
    NNP_I8_PANEL_ROW(3)
    NNP_I8_PANEL_ROW(4)
    NNP_I8_PANEL_ROW(5)
  }
  const __m256i rows[6][2] = {{acc00, acc01}, {acc10, acc11}, {acc20, acc21},
                              {acc30, acc31}, {acc40, acc41}, {acc50, acc51}};
  for (int r = 0; r < R; ++r) {
    _mm256_store_si256(at(r, 0), rows[r][0]);
    _mm256_store_si256(at(r, 1), rows[r][1]);
    if (last) store(partial + r * kPanel, i + r, j, count);
  }
}
#undef NNP_I8_PANEL_ROW

// Panels [first, last) of the product: each packed into this thread's
// scratch, then every row of a against it, k in blocks of kPairBlock
// pairs so that the panel's block (8 KB) and a's rows stay in L1 together
// (a whole panel at K = 784 is 25 KB, and with a's rows it filled L1); the
// sums wait in `partial` ([M][16] int32) between blocks.
template <typename Store>
NNP_I8_AVX2 void panels_avx2(const int16_t* a16, int64_t stride, const int8_t* b, const Store& store, int64_t m,
                             int64_t n, int64_t k, int64_t first, int64_t last, int16_t* panel, int32_t* partial) {
  const int64_t pairs = (k + 1) / 2;
  for (int64_t t = first; t < last; ++t) {
    const int64_t j = t * kPanel, count = std::min(kPanel, n - j);
    pack_panel(b, n, k, j, pairs, panel);
    for (int64_t q0 = 0; q0 < pairs; q0 += kPairBlock) {
      const int64_t q1 = std::min(pairs, q0 + kPairBlock);
      const bool begins = q0 == 0, ends = q1 == pairs;
      int64_t i = 0;
      for (; i + 6 <= m; i += 6)
        panel_tile<6>(a16 + i * stride, stride, panel, q0, q1, partial + i * kPanel, begins, ends, store, i, j, count);
      const int16_t* rest = a16 + i * stride;
      int32_t* rest_partial = partial + i * kPanel;
      switch (m - i) {
        case 5: panel_tile<5>(rest, stride, panel, q0, q1, rest_partial, begins, ends, store, i, j, count); break;
        case 4: panel_tile<4>(rest, stride, panel, q0, q1, rest_partial, begins, ends, store, i, j, count); break;
        case 3: panel_tile<3>(rest, stride, panel, q0, q1, rest_partial, begins, ends, store, i, j, count); break;
        case 2: panel_tile<2>(rest, stride, panel, q0, q1, rest_partial, begins, ends, store, i, j, count); break;
        case 1: panel_tile<1>(rest, stride, panel, q0, q1, rest_partial, begins, ends, store, i, j, count); break;
        default: break;
      }
    }
  }
}

// a as int16, rows padded with zeros to stride.
NNP_I8_AVX2 void widen_rows(const int8_t* a, int64_t m, int64_t k, int64_t stride, int16_t* a16) {
  for (int64_t i = 0; i < m; ++i) {
    int16_t* row = a16 + i * stride;
    int64_t p = 0;
    for (; p + 16 <= k; p += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + p), widen16(a + i * k + p));
    for (; p < stride; ++p) row[p] = p < k ? a[i * k + p] : 0;
  }
}

// x quantized as quantized_gemm defines, as int16 rows padded with zeros
// to stride: eight floats a step, rounded half to even by vcvtps2dq (the
// default rounding mode), clamped before (so a huge value gives 127, not
// the conversion's overflow value), NaN taken as 0 first.
NNP_I8_AVX2 void quantize_to_i16(const float* x, int64_t m, int64_t k, int64_t stride, float inv_scale,
                                 int32_t offset_min, int16_t* a16) {
  const __m256 inv = _mm256_set1_ps(inv_scale), lo = _mm256_set1_ps(static_cast<float>(offset_min)),
               hi = _mm256_set1_ps(127.0f);
  for (int64_t i = 0; i < m; ++i) {
    const float* src = x + i * k;
    int16_t* row = a16 + i * stride;
    int64_t p = 0;
    for (; p + 16 <= k; p += 16) {
      __m256i q[2];
      for (int h = 0; h < 2; ++h) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + p + 8 * h), inv);
        v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
        q[h] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi));
      }
      // packs works within 128-bit lanes: [q0 lo, q1 lo, q0 hi, q1 hi] back in order.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(row + p),
                          _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xd8));
    }
    for (; p < stride; ++p) {
      if (p >= k) {
        row[p] = 0;
        continue;
      }
      const float v = src[p] * inv_scale;
      row[p] = static_cast<int16_t>(
          v != v ? 0
                 : static_cast<int32_t>(std::nearbyint(std::min(std::max(v, static_cast<float>(offset_min)), 127.0f))));
    }
  }
}

// ---- AVX512-VNNI ----
// vpdpbusd multiplies unsigned bytes by signed ones: a is shifted into u8
// once per call (a + 128, the sign bit flipped) into a scratch copy whose
// rows are padded with zeros to 64 bytes. Its products then carry
// 128 * sum_k b[n, k], which is subtracted per column. int32 lanes wrap,
// and the true result fits (|a.b| <= 2^30), so the wrapped arithmetic is
// exact. A tile of 4 rows of a by 4 rows of b keeps 16 accumulators of 16
// lanes; one transposing reduction turns them into the tile's 16 sums.
#define NNP_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))

// Lane 4q + c of the result: the sum of the 16 lanes of acc[4q + c].
NNP_VNNI_TARGET __attribute__((always_inline)) inline __m512i sums_of_16(const __m512i (&acc)[16]) {
  __m512i pairs[8], quads[4];
  for (int i = 0; i < 8; ++i)  // per 128-bit lane: [x0+x2, y0+y2, x1+x3, y1+y3] of x = acc[2i], y = acc[2i+1]
    pairs[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(acc[2 * i], acc[2 * i + 1]),
                                _mm512_unpackhi_epi32(acc[2 * i], acc[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // per 128-bit lane: a partial sum of each of acc[4i] .. acc[4i+3]
    quads[i] = _mm512_add_epi32(_mm512_unpacklo_epi64(pairs[2 * i], pairs[2 * i + 1]),
                                _mm512_unpackhi_epi64(pairs[2 * i], pairs[2 * i + 1]));
  // Adding the four 128-bit lanes of quad q lands in lane q.
  const __m512i h01 =
      _mm512_add_epi32(_mm512_shuffle_i32x4(quads[0], quads[1], 0x88), _mm512_shuffle_i32x4(quads[0], quads[1], 0xdd));
  const __m512i h23 =
      _mm512_add_epi32(_mm512_shuffle_i32x4(quads[2], quads[3], 0x88), _mm512_shuffle_i32x4(quads[2], quads[3], 0xdd));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(h01, h23, 0x88), _mm512_shuffle_i32x4(h01, h23, 0xdd));
}

NNP_VNNI_TARGET inline __mmask64 tail_mask(int64_t left) {
  return left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
}

// 128 * sum_k b[j + c, k] for the 4 rows of b at b0, in lanes 4q + c.
NNP_VNNI_TARGET inline __m512i shifted_column_sums(const int8_t* b0, int64_t k) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i acc[16];
  for (auto& v : acc) v = _mm512_setzero_si512();
  for (int64_t p = 0; p < k; p += 64)
    for (int c = 0; c < 4; ++c)
      acc[c] = _mm512_dpbusd_epi32(acc[c], ones, _mm512_maskz_loadu_epi8(tail_mask(k - p), b0 + c * k + p));
  for (int q = 1; q < 4; ++q)
    for (int c = 0; c < 4; ++c) acc[4 * q + c] = acc[c];
  return _mm512_slli_epi32(sums_of_16(acc), 7);
}

// Rows [i, i + R) by columns [j, j + 4) of out; a_u8 points at row i. The
// 16 accumulators are named variables: GCC keeps an array of them in
// memory, storing each after every vpdpbusd.
#define NNP_VNNI_ROW(r)                                          \
  if (R > r) {                                                   \
    const __m512i x = _mm512_loadu_si512(a_u8 + r * stride + p); \
    acc##r##0 = _mm512_dpbusd_epi32(acc##r##0, x, w0);           \
    acc##r##1 = _mm512_dpbusd_epi32(acc##r##1, x, w1);           \
    acc##r##2 = _mm512_dpbusd_epi32(acc##r##2, x, w2);           \
    acc##r##3 = _mm512_dpbusd_epi32(acc##r##3, x, w3);           \
  }
template <int R, typename Store>
NNP_VNNI_TARGET inline void vnni_tile(const uint8_t* a_u8, int64_t stride, const int8_t* b0, int64_t k, __m512i shift,
                                      const Store& store, int64_t i, int64_t j) {
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc00 = zero, acc01 = zero, acc02 = zero, acc03 = zero, acc10 = zero, acc11 = zero, acc12 = zero,
          acc13 = zero, acc20 = zero, acc21 = zero, acc22 = zero, acc23 = zero, acc30 = zero, acc31 = zero,
          acc32 = zero, acc33 = zero;
  for (int64_t p = 0; p < k; p += 64) {
    const __mmask64 mask = tail_mask(k - p);
    const __m512i w0 = _mm512_maskz_loadu_epi8(mask, b0 + p), w1 = _mm512_maskz_loadu_epi8(mask, b0 + k + p),
                  w2 = _mm512_maskz_loadu_epi8(mask, b0 + 2 * k + p),
                  w3 = _mm512_maskz_loadu_epi8(mask, b0 + 3 * k + p);
    NNP_VNNI_ROW(0)
    NNP_VNNI_ROW(1)
    NNP_VNNI_ROW(2)
    NNP_VNNI_ROW(3)
  }
  const __m512i acc[16] = {acc00, acc01, acc02, acc03, acc10, acc11, acc12, acc13,
                           acc20, acc21, acc22, acc23, acc30, acc31, acc32, acc33};
  alignas(64) int32_t sums[16];
  _mm512_store_si512(sums, _mm512_sub_epi32(sums_of_16(acc), shift));
  for (int r = 0; r < R; ++r) store(sums + 4 * r, i + r, j, 4);
}
#undef NNP_VNNI_ROW

template <typename Store>
NNP_VNNI_TARGET void columns_vnni(const uint8_t* a_u8, int64_t stride, const int8_t* b, const Store& store, int64_t m,
                                  int64_t n0, int64_t n1, int64_t k) {
  int64_t j = n0;
  for (; j + 4 <= n1; j += 4) {
    const int8_t* b0 = b + j * k;
    const __m512i shift = shifted_column_sums(b0, k);
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) vnni_tile<4>(a_u8 + i * stride, stride, b0, k, shift, store, i, j);
    const uint8_t* rest = a_u8 + i * stride;
    switch (m - i) {
      case 3: vnni_tile<3>(rest, stride, b0, k, shift, store, i, j); break;
      case 2: vnni_tile<2>(rest, stride, b0, k, shift, store, i, j); break;
      case 1: vnni_tile<1>(rest, stride, b0, k, shift, store, i, j); break;
      default: break;
    }
  }
  for (; j < n1; ++j)  // the last n % 4 columns
    for (int64_t i = 0; i < m; ++i) {
      int32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += (int32_t{a_u8[i * stride + p]} - 128) * int32_t{b[j * k + p]};
      store(&sum, i, j, 1);
    }
}

// a + 128 as bytes, rows padded with zeros to a multiple of 64 (the padding
// meets b's masked-off bytes, so it only needs to be there to be read).
NNP_VNNI_TARGET void shift_to_u8(const int8_t* a, int64_t m, int64_t k, int64_t stride, uint8_t* a_u8) {
  const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < stride; p += 64) {
      const __mmask64 mask = p < k ? tail_mask(k - p) : 0;
      const __m512i v = _mm512_maskz_loadu_epi8(mask, a + i * k + p);
      _mm512_storeu_si512(a_u8 + i * stride + p, _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(v, sign)));
    }
}

// x quantized as quantized_gemm defines, plus 128, as bytes: rows padded
// with zeros to `stride`, as shift_to_u8.
NNP_VNNI_TARGET void quantize_to_u8(const float* x, int64_t m, int64_t k, int64_t stride, float inv_scale,
                                    int32_t offset_min, uint8_t* a_u8) {
  const __m512 inv = _mm512_set1_ps(inv_scale), lo = _mm512_set1_ps(static_cast<float>(offset_min)),
               hi = _mm512_set1_ps(127.0f);
  const __m512i shift = _mm512_set1_epi32(128);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < stride; p += 16) {
      const __mmask16 mask = p >= k ? 0 : (k - p >= 16 ? 0xffff : static_cast<__mmask16>((1u << (k - p)) - 1));
      __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i * k + p), inv);
      v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
      v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      const __m512i u = _mm512_maskz_add_epi32(mask, _mm512_cvtps_epi32(v), shift);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(a_u8 + i * stride + p), _mm512_cvtepi32_epi8(u));
    }
}

#endif

// The kernel table's form: the widest this CPU has, or a narrower one
// NNP_CPU_GEMM_I8 asks for (avx2, scalar: to compare them, or to test them
// on a wider CPU).
Int8Form path() { return kernel_table().int8_gemm; }

// Scratch that grows to the largest size asked on this thread, then is
// reused: no allocation per call in steady state. Slot tells apart two
// buffers of one type that a thread holds at once (a call's operand and,
// on the thread that called, a panel the pool's task packs).
template <typename T, int Slot = 0>
T* scratch(size_t count) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < count) buffer.resize(count);
  return buffer.data();
}

// out = a @ b^T in int32 on the scalar path; the pool splits the columns
// (rows of b) in blocks of four.
void products_scalar(const int8_t* a, const int8_t* b, int32_t* out, int64_t m, int64_t n, int64_t k) {
  parallel_for((n + 3) / 4, 4 * m * k, [&](int64_t first, int64_t last) {
    const int64_t n0 = first * 4, n1 = std::min(n, last * 4);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = n0; j < n1; ++j) out[i * n + j] = dot_scalar(a + i * k, b + j * k, k);
  });
}

#if defined(__x86_64__)
// The AVX2 product of a16 (stride values per row) and b, stored by store;
// the pool splits the columns in panels of 16 (or blocks of two below
// kPanelRows rows).
template <typename Store>
void products_avx2(const int16_t* a16, int64_t stride, const int8_t* b, const Store& store, int64_t m, int64_t n,
                   int64_t k) {
  if (m >= kPanelRows) {
    parallel_for((n + kPanel - 1) / kPanel, kPanel * m * k, [&](int64_t first, int64_t last) {
      // partial: 32-byte aligned rows of 16 sums.
      int32_t* partial = scratch<int32_t, 1>(static_cast<size_t>(m * kPanel + 8));
      partial = reinterpret_cast<int32_t*>((reinterpret_cast<uintptr_t>(partial) + 31) & ~uintptr_t{31});
      panels_avx2(a16, stride, b, store, m, n, k, first, last,
                  scratch<int16_t, 1>(static_cast<size_t>(((k + 1) / 2) * 2 * kPanel)), partial);
    });
    return;
  }
  parallel_for((n + 1) / 2, 2 * m * k, [&](int64_t first, int64_t last) {
    columns_avx2(a16, stride, b, store, m, first * 2, std::min(n, last * 2), k);
  });
}

// The VNNI product of a_u8 (stride bytes per row) and b, stored by store;
// the pool splits the columns in blocks of four.
template <typename Store>
void products_vnni(const uint8_t* a_u8, int64_t stride, const int8_t* b, const Store& store, int64_t m, int64_t n,
                   int64_t k) {
  parallel_for((n + 3) / 4, 4 * m * k, [&](int64_t first, int64_t last) {
    columns_vnni(a_u8, stride, b, store, m, first * 4, std::min(n, last * 4), k);
  });
}
#endif

int8_t quantize_scalar(float x, float inv_scale, int32_t offset_min) {
  const float v = x * inv_scale;
  if (std::isnan(v)) return 0;
  const float r = std::min(std::max(std::nearbyint(v), static_cast<float>(offset_min)), 127.0f);
  return static_cast<int8_t>(r);
}

}  // namespace

nnp_status gemm_i8(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  if (a->dtype != NNP_I8 || b->dtype != NNP_I8 || out->dtype != NNP_I32 || a->ndim != 2 || b->ndim != 2 ||
      out->ndim != 2 || a->shape[1] != b->shape[1] || out->shape[0] != a->shape[0] || out->shape[1] != b->shape[0])
    return fail(NNP_INVALID_ARGUMENT, "gemm_i8: expects i8 a [M,K], i8 b [N,K] and i32 out [M,N]");
  const int64_t m = a->shape[0], n = b->shape[0], k = a->shape[1];
  const auto* pa = static_cast<const int8_t*>(a->data);
  const auto* pb = static_cast<const int8_t*>(b->data);
  auto* po = static_cast<int32_t*>(out->data);
#if defined(__x86_64__)
  if (path() == Int8Form::vnni) {
    const int64_t stride = (k + 63) / 64 * 64;
    uint8_t* a_u8 = scratch<uint8_t>(static_cast<size_t>(m * stride));
    shift_to_u8(pa, m, k, stride, a_u8);
    products_vnni(a_u8, stride, pb, StoreSums{po, n}, m, n, k);
    return NNP_OK;
  }
  if (path() == Int8Form::avx2) {
    const int64_t stride = (k + 15) / 16 * 16;
    int16_t* a16 = scratch<int16_t>(static_cast<size_t>(m * stride));
    widen_rows(pa, m, k, stride, a16);
    products_avx2(a16, stride, pb, StoreSums{po, n}, m, n, k);
    return NNP_OK;
  }
#endif
  products_scalar(pa, pb, po, m, n, k);
  return NNP_OK;
}

nnp_status quantized_gemm(const nnp_kernel_ctx*, const nnp_view* x, float inv_scale, int32_t offset_min,
                          const nnp_view* w, const nnp_view* scale, const nnp_view* bias, const nnp_view* out) {
  if (x->dtype != NNP_F32 || w->dtype != NNP_I8 || scale->dtype != NNP_F32 || out->dtype != NNP_F32 ||
      (bias && bias->dtype != NNP_F32) || x->ndim != 2 || w->ndim != 2 || out->ndim != 2 ||
      x->shape[1] != w->shape[1] || out->shape[0] != x->shape[0] || out->shape[1] != w->shape[0] || offset_min < -128 ||
      offset_min > 0)
    return fail(NNP_INVALID_ARGUMENT,
                "quantized_gemm: expects f32 x [M,K], i8 w [N,K], f32 scale and bias [N], f32 out [M,N] and "
                "-128 <= offset_min <= 0");
  const int64_t m = x->shape[0], n = w->shape[0], k = x->shape[1];
  const auto* px = static_cast<const float*>(x->data);
  const auto* pw = static_cast<const int8_t*>(w->data);
  const StoreScaled store{static_cast<float*>(out->data), n, static_cast<const float*>(scale->data),
                          bias ? static_cast<const float*>(bias->data) : nullptr};
#if defined(__x86_64__)
  if (path() == Int8Form::vnni) {
    // The activations are quantized as they are packed, rows split over
    // the pool, and the sums rescaled as each tile stores them.
    const int64_t stride = (k + 63) / 64 * 64;
    uint8_t* a_u8 = scratch<uint8_t>(static_cast<size_t>(m * stride));
    parallel_for(m, k, [&](int64_t first, int64_t last) {
      quantize_to_u8(px + first * k, last - first, k, stride, inv_scale, offset_min, a_u8 + first * stride);
    });
    products_vnni(a_u8, stride, pw, store, m, n, k);
    return NNP_OK;
  }
  if (path() == Int8Form::avx2) {
    const int64_t stride = (k + 15) / 16 * 16;
    int16_t* a16 = scratch<int16_t>(static_cast<size_t>(m * stride));
    parallel_for(m, k, [&](int64_t first, int64_t last) {
      quantize_to_i16(px + first * k, last - first, k, stride, inv_scale, offset_min, a16 + first * stride);
    });
    products_avx2(a16, stride, pw, store, m, n, k);
    return NNP_OK;
  }
#endif
  int8_t* q = scratch<int8_t>(static_cast<size_t>(m * k));
  parallel_for(m * k, 1, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) q[i] = quantize_scalar(px[i], inv_scale, offset_min);
  });
  int32_t* sums = scratch<int32_t>(static_cast<size_t>(m * n));
  products_scalar(q, pw, sums, m, n, k);
  parallel_for(m, n, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) store(sums + i * n, i, 0, n);
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
