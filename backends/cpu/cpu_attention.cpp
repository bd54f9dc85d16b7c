// Scaled dot-product attention in one pass (nnp_kernels.attention): for a
// block of query rows, the scores against every key are computed into a
// row of scratch that stays in L1, softmaxed there and multiplied into the
// values, so the [L, S] scores are never written out and read back (the
// composition writes them three times: the product, the softmax, and reads
// them for the second product). The keys are laid out transposed and the
// values padded once per block of rows, so each inner step is one vector
// load and a broadcast multiply-add per query row. Query rows go in groups
// of eight: the second product then keeps sixteen accumulators (eight
// rows by 32 columns), enough multiply-adds in flight to hide their
// latency, and the softmax runs over four rows at once, where one row's
// four vectors of exp were a chain of dependent steps (W7's rows: 64
// scores, a quarter of the kernel's time in that wait).
// GCC 12's AVX-512 shuffles and lane reductions start from
// _mm512_undefined_ps(), which its -W(maybe-)uninitialized reports (GCC
// bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_channels_first.hpp"
#include "cpu_exp_avx2.hpp"
#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"
#include "cpu_vector_math.hpp"

namespace nnp::cpu {
namespace {

using vmath::vf;
using vmath::vi;

constexpr int64_t kLanes = 16;
constexpr int64_t kCols = 2 * kLanes;  // scores or value columns per register block
constexpr int64_t kRowBlock = 32;      // query rows per task: the keys' layout is made once for them
constexpr int kGroup = 8;              // query rows whose scores are computed and weighed together

struct Problem {
  const nnp_view *q, *k, *v, *mask, *out;
  float scale;
  int64_t L, S, E, Ev, s_pad, ev_pad;
};

const float* at(const nnp_view& t, int64_t b, int64_t i, int64_t j) {
  return static_cast<const float*>(t.data) + b * t.strides[0] + i * t.strides[1] + j * t.strides[2];
}

// Writes n values of one output row (out_step apart).
__attribute__((always_inline)) inline void store_row(const float* lanes, int64_t n, float* out, int64_t out_step) {
  if (out_step == 1) {
    std::memcpy(out, lanes, static_cast<size_t>(n) * sizeof(float));
  } else {
    for (int64_t c = 0; c < n; ++c) out[c * out_step] = lanes[c];
  }
}

// sums[r][c] = sum_t a[r][t * a_step] * b[t * ld + c] over t < depth, for
// four rows and 32 columns: both of attention's products (the scores: q
// against kt; the output: the weights against vp). Named accumulators (GCC
// keeps an array of vectors in memory), each row's multiply-adds in a
// lambda GCC inlines.
__attribute__((always_inline)) inline void product_block(const float* const* a, int64_t a_step, const float* b,
                                                         int64_t ld, int64_t depth, float* sums) {
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
  vf s00{}, s01{}, s10{}, s11{}, s20{}, s21{}, s30{}, s31{};
  for (int64_t t = 0; t < depth; ++t, b += ld) {
    const vf b0 = vmath::load(b), b1 = vmath::load(b + kLanes);
    const int64_t at = t * a_step;
    auto row = [&](float x, vf& c0, vf& c1) {
      const vf splat = vmath::splat(x);
      c0 += splat * b0;
      c1 += splat * b1;
    };
    row(a0[at], s00, s01);
    row(a1[at], s10, s11);
    row(a2[at], s20, s21);
    row(a3[at], s30, s31);
  }
  const vf all[8] = {s00, s01, s10, s11, s20, s21, s30, s31};
  for (int i = 0; i < 8; ++i) vmath::store(sums + i * kLanes, all[i]);
}

// scores[r][j] = scale * sum_e q[r][e] * kt[e][j] for four rows.
__attribute__((always_inline)) inline void score_rows(const float* const* q_rows, int64_t q_step, const float* kt,
                                                      const Problem& p, float* scores) {
  for (int64_t jc = 0; jc < p.s_pad; jc += kCols) {
    float sums[4 * kCols];
    product_block(q_rows, q_step, kt + jc, p.s_pad, p.E, sums);
    for (int r = 0; r < 4; ++r)
      for (int64_t c = 0; c < kCols; ++c) scores[r * p.s_pad + jc + c] = sums[r * kCols + c] * p.scale;
  }
}

// out[r][c] = inv_sum[r] * sum_j weights[r][j] * vp[j][c] for the first
// `rows` of four rows (all four computed).
__attribute__((always_inline)) inline void weigh_rows(const float* weights, const float* vp, const Problem& p,
                                                      const float* inv_sum, float* const* out_rows, int64_t out_step,
                                                      int rows) {
  const float* w_rows[4] = {weights, weights + p.s_pad, weights + 2 * p.s_pad, weights + 3 * p.s_pad};
  for (int64_t cc = 0; cc < p.ev_pad; cc += kCols) {
    float sums[4 * kCols];
    product_block(w_rows, 1, vp + cc, p.ev_pad, p.S, sums);
    for (int r = 0; r < rows; ++r) {
      float* lanes = sums + r * kCols;
      for (int64_t c = 0; c < kCols; ++c) lanes[c] *= inv_sum[r];
      store_row(lanes, std::min(kCols, p.Ev - cc), out_rows[r] + cc * out_step, out_step);
    }
  }
}

// The same two products with AVX-512 intrinsics, for CPUs that have it:
// GCC's generic vectors broadcast a value through a shuffle, which competes
// with the multiply-adds for one port; these broadcast from memory. Four
// rows by 64 scores: 16 accumulators.
#define NNP_ATTENTION_AVX512 __attribute__((target("avx512f,fma")))

NNP_ATTENTION_AVX512 void score_rows_avx512(const float* const* q_rows, int64_t q_step, const float* kt,
                                            const Problem& p, float* scores) {
  const float *q0 = q_rows[0], *q1 = q_rows[1], *q2 = q_rows[2], *q3 = q_rows[3];
  const __m512 scale = _mm512_set1_ps(p.scale);
  for (int64_t jc = 0; jc < p.s_pad; jc += 4 * kLanes) {  // s_pad is a multiple of 64
    __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00,
           a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
    const float* column = kt + jc;
    for (int64_t e = 0; e < p.E; ++e, column += p.s_pad) {
      const __m512 k0 = _mm512_loadu_ps(column), k1 = _mm512_loadu_ps(column + 16), k2 = _mm512_loadu_ps(column + 32),
                   k3 = _mm512_loadu_ps(column + 48);
      const int64_t at_e = e * q_step;
      auto row = [&](const float* x, __m512& c0, __m512& c1, __m512& c2, __m512& c3) NNP_ATTENTION_AVX512 {
        const __m512 b = _mm512_set1_ps(*x);
        c0 = _mm512_fmadd_ps(b, k0, c0);
        c1 = _mm512_fmadd_ps(b, k1, c1);
        c2 = _mm512_fmadd_ps(b, k2, c2);
        c3 = _mm512_fmadd_ps(b, k3, c3);
      };
      row(q0 + at_e, a00, a01, a02, a03);
      row(q1 + at_e, a10, a11, a12, a13);
      row(q2 + at_e, a20, a21, a22, a23);
      row(q3 + at_e, a30, a31, a32, a33);
    }
    const __m512 sums[4][4] = {{a00, a01, a02, a03}, {a10, a11, a12, a13}, {a20, a21, a22, a23}, {a30, a31, a32, a33}};
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        _mm512_storeu_ps(scores + r * p.s_pad + jc + c * kLanes, _mm512_mul_ps(sums[r][c], scale));
  }
}

// Eight rows of weights by 32 columns of values (their rows value_step
// apart: vp's, or v's own where it needs no padding): 16 accumulators.
NNP_ATTENTION_AVX512 void weigh_rows_avx512(const float* weights, const float* values, int64_t value_step,
                                            const Problem& p, const float* inv_sum, float* const* out_rows,
                                            int64_t out_step, int rows) {
  for (int64_t cc = 0; cc < p.ev_pad; cc += kCols) {
    __m512 sums[kGroup][2];
#pragma GCC unroll 8
    for (int r = 0; r < kGroup; ++r) sums[r][0] = sums[r][1] = _mm512_setzero_ps();
    const float* value = values + cc;
    for (int64_t j = 0; j < p.S; ++j, value += value_step) {
      const __m512 v0 = _mm512_loadu_ps(value), v1 = _mm512_loadu_ps(value + 16);
#pragma GCC unroll 8
      for (int r = 0; r < kGroup; ++r) {
        const __m512 b = _mm512_set1_ps(weights[r * p.s_pad + j]);
        sums[r][0] = _mm512_fmadd_ps(b, v0, sums[r][0]);
        sums[r][1] = _mm512_fmadd_ps(b, v1, sums[r][1]);
      }
    }
    const int64_t n = std::min(kCols, p.Ev - cc);
    for (int r = 0; r < rows; ++r) {
      const __m512 inv = _mm512_set1_ps(inv_sum[r]);
      float* out = out_rows[r] + cc * out_step;
      const bool whole = out_step == 1 && n == kCols;
      float lanes[kCols];
      _mm512_storeu_ps(whole ? out : lanes, _mm512_mul_ps(sums[r][0], inv));
      _mm512_storeu_ps((whole ? out : lanes) + 16, _mm512_mul_ps(sums[r][1], inv));
      if (!whole) store_row(lanes, n, out, out_step);
    }
  }
}

// Which of the three forms runs: the kernel table's (the widest the CPU
// has, or the generic vectors where NNP_CPU_ATTENTION=generic asks).
enum class Form { avx512, avx2, generic };
Form form() {
  const Tier tier = kernel_table().attention;
  return tier == Tier::avx512 ? Form::avx512 : tier == Tier::avx2 ? Form::avx2 : Form::generic;
}

// exp(x) for x <= 0 with AVX-512: vmath::exp's reduction and polynomial,
// 2^n applied by vscalefps (which takes results down through the
// subnormals to 0 itself), x below -104 taken as -104 (its exp is 0 in
// f32). Half the instructions of the generic vectors' exp, which was half
// of W7's attention.
NNP_ATTENTION_AVX512 inline __m512 exp_nonpositive_avx512(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 q = _mm512_set1_ps(1.9875691500e-4f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.3981999507e-3f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(8.3334519073e-3f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(4.1665795894e-2f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.6666665459e-1f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(5.0000001201e-1f));
  q = _mm512_fmadd_ps(_mm512_mul_ps(q, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(q, n);
}

// The softmax of four rows of scores (s_pad apart) in place, with
// AVX-512, leaving exp(score - the row's largest) and setting inv_sum[r]
// to 1 / the row's sum, or NaN where the composition gives a row of NaN.
// The four rows interleave so that their exps overlap: the largest score
// and NaN in one pass, exp and the sums in a second, lanes reduced in
// registers.
NNP_ATTENTION_AVX512 void softmax_rows_avx512(float* scores, int64_t S, int64_t s_pad, float* inv_sum) {
  constexpr int kRows = 4;
  __m512 top[kRows], shift[kRows], sum[kRows];
  __mmask16 nan[kRows];
  bool bad[kRows];
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    top[r] = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    nan[r] = 0;
  }
  for (int64_t j = 0; j < s_pad; j += kLanes)
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m512 x = _mm512_load_ps(scores + r * s_pad + j);
      nan[r] |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
      top[r] = _mm512_max_ps(top[r], x);
    }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const float largest = _mm512_reduce_max_ps(top[r]);
    bad[r] = nan[r] || !std::isfinite(largest);
    shift[r] = _mm512_set1_ps(bad[r] ? 0.0f : largest);  // a bad row's values are not used
    sum[r] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < s_pad; j += kLanes)
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      float* at_j = scores + r * s_pad + j;
      const __m512 e = exp_nonpositive_avx512(_mm512_sub_ps(_mm512_load_ps(at_j), shift[r]));
      _mm512_store_ps(at_j, e);
      sum[r] = _mm512_add_ps(sum[r], e);
    }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    for (int64_t j = S; j < s_pad; ++j) scores[r * s_pad + j] = 0;
    inv_sum[r] = bad[r] ? std::numeric_limits<float>::quiet_NaN() : 1.0f / _mm512_reduce_add_ps(sum[r]);
  }
}

// The same three steps with AVX2 and FMA intrinsics, for CPUs without
// AVX-512 (AMD's Zen 3, Intel's client cores): eight lanes a register and
// sixteen registers, so query rows go in groups of six and the blocks are
// six rows by 16 columns: 12 accumulators, two loads and a broadcast (the
// 6 x 16 of BLIS's Haswell GEMM), each load feeding six multiply-adds. The
// generic vectors' 16-lane blocks need 16 accumulators plus their operands,
// more registers than AVX2 has, and their build for AVX2 has no fused
// multiply-add.
#define NNP_ATTENTION_AVX2 __attribute__((target("avx2,fma")))
constexpr int64_t kLanes8 = 8;
constexpr int kGroupAvx2 = 6;  // query rows a group of the AVX2 form
static_assert(kGroupAvx2 <= kGroup, "the AVX2 form's scores fit the scratch of kGroup rows");

NNP_ATTENTION_AVX2 inline float max_of(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

NNP_ATTENTION_AVX2 inline float sum_of(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The named accumulators of a 6 x 16 block, and its six rows' multiply-adds
// by the two vectors x0 and x1 (broadcasting from a0 .. a5 at offset at).
#define NNP_AVX2_ACCUMULATORS                                                                                    \
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00, \
         c40 = c00, c41 = c00, c50 = c00, c51 = c00
#define NNP_AVX2_ROW(r, a)                     \
  {                                            \
    const __m256 b = _mm256_broadcast_ss(a);   \
    c##r##0 = _mm256_fmadd_ps(b, x0, c##r##0); \
    c##r##1 = _mm256_fmadd_ps(b, x1, c##r##1); \
  }
#define NNP_AVX2_BLOCK                                                       \
  {                                                                          \
    {c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, { c50, c51 } \
  }

// scores[r][j] = scale * sum_e q[r][e] * kt[e][j] for six rows. kUnit:
// q's rows are contiguous (the broadcasts then index by e, where a general
// step made GCC step six pointers: a third more instructions a step).
// kTop: each row's largest score goes into top[r] as the scores are stored
// (NaN scores aside), which spares the softmax a pass where the scores are
// final here (no mask, no padding).
template <bool kUnit, bool kTop>
NNP_ATTENTION_AVX2 void score_rows_avx2(const float* const* q_rows, int64_t q_step, const float* kt, const Problem& p,
                                        float* scores, __m256* top) {
  const float *q0 = q_rows[0], *q1 = q_rows[1], *q2 = q_rows[2], *q3 = q_rows[3], *q4 = q_rows[4], *q5 = q_rows[5];
  const __m256 scale = _mm256_set1_ps(p.scale);
  const int64_t depth = p.E, s_pad = p.s_pad;
  if (kTop)
    for (int r = 0; r < kGroupAvx2; ++r) top[r] = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t jc = 0; jc < s_pad; jc += 2 * kLanes8) {
    NNP_AVX2_ACCUMULATORS;
    const float* column = kt + jc;
    for (int64_t e = 0; e < depth; ++e, column += s_pad) {
      const __m256 x0 = _mm256_load_ps(column), x1 = _mm256_load_ps(column + kLanes8);
      const int64_t at = kUnit ? e : e * q_step;
      NNP_AVX2_ROW(0, q0 + at)
      NNP_AVX2_ROW(1, q1 + at)
      NNP_AVX2_ROW(2, q2 + at)
      NNP_AVX2_ROW(3, q3 + at)
      NNP_AVX2_ROW(4, q4 + at)
      NNP_AVX2_ROW(5, q5 + at)
    }
    const __m256 sums[kGroupAvx2][2] = NNP_AVX2_BLOCK;
    for (int r = 0; r < kGroupAvx2; ++r)
      for (int c = 0; c < 2; ++c) {
        const __m256 x = _mm256_mul_ps(sums[r][c], scale);
        _mm256_store_ps(scores + r * s_pad + jc + c * kLanes8, x);
        if (kTop) top[r] = _mm256_max_ps(x, top[r]);  // (max keeps its second operand where x is NaN)
      }
  }
}

// softmax_rows_avx512 in eight lanes: kRows rows interleaved, the largest
// score in one pass (or given in known_top, from score_rows_avx2), exp and
// the sums in a second. A NaN score, which max passes over, reaches its
// row's sum through exp.
template <int kRows, bool kKnownTop>
NNP_ATTENTION_AVX2 void softmax_rows_avx2(float* scores, int64_t S, int64_t s_pad, const __m256* known_top,
                                          float* inv_sum) {
  __m256 top[kRows], shift[kRows], sum[kRows];
  bool bad[kRows];
#pragma GCC unroll 6
  for (int r = 0; r < kRows; ++r)
    top[r] = kKnownTop ? known_top[r] : _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  if (!kKnownTop)
    for (int64_t j = 0; j < s_pad; j += kLanes8)
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) top[r] = _mm256_max_ps(_mm256_load_ps(scores + r * s_pad + j), top[r]);
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    const float largest = max_of(top[r]);
    bad[r] = !std::isfinite(largest);
    shift[r] = _mm256_set1_ps(bad[r] ? 0.0f : largest);  // a bad row's values are not used
    sum[r] = _mm256_setzero_ps();
  }
  for (int64_t j = 0; j < s_pad; j += kLanes8)
#pragma GCC unroll 6
    for (int r = 0; r < kRows; ++r) {
      float* at_j = scores + r * s_pad + j;
      const __m256 e = exp_nonpositive_avx2(_mm256_sub_ps(_mm256_load_ps(at_j), shift[r]));
      _mm256_store_ps(at_j, e);
      sum[r] = _mm256_add_ps(sum[r], e);
    }
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
    for (int64_t j = S; j < s_pad; ++j) scores[r * s_pad + j] = 0;
    const float total = sum_of(sum[r]);
    inv_sum[r] = bad[r] || std::isnan(total) ? std::numeric_limits<float>::quiet_NaN() : 1.0f / total;
  }
}

// out[r][c] = inv_sum[r] * sum_j weights[r][j] * values[j][c] for the
// first `rows` of six rows: six rows by 16 columns of values, their rows
// value_step apart (vp's, or v's own where it needs no padding).
NNP_ATTENTION_AVX2 void weigh_rows_avx2(const float* weights, const float* values, int64_t value_step, const Problem& p,
                                        const float* inv_sum, float* const* out_rows, int64_t out_step, int rows) {
  const float *w0 = weights, *w1 = w0 + p.s_pad, *w2 = w1 + p.s_pad, *w3 = w2 + p.s_pad, *w4 = w3 + p.s_pad,
              *w5 = w4 + p.s_pad;
  const int64_t length = p.S;
  for (int64_t cc = 0; cc < p.Ev; cc += 2 * kLanes8) {  // (ev_pad's last 16 columns may be padding only)
    NNP_AVX2_ACCUMULATORS;
    const float* value = values + cc;
    for (int64_t j = 0; j < length; ++j, value += value_step) {
      const __m256 x0 = _mm256_loadu_ps(value), x1 = _mm256_loadu_ps(value + kLanes8);
      NNP_AVX2_ROW(0, w0 + j)
      NNP_AVX2_ROW(1, w1 + j)
      NNP_AVX2_ROW(2, w2 + j)
      NNP_AVX2_ROW(3, w3 + j)
      NNP_AVX2_ROW(4, w4 + j)
      NNP_AVX2_ROW(5, w5 + j)
    }
    const __m256 sums[kGroupAvx2][2] = NNP_AVX2_BLOCK;
    const int64_t n = std::min(2 * kLanes8, p.Ev - cc);
    for (int r = 0; r < rows; ++r) {
      const __m256 inv = _mm256_set1_ps(inv_sum[r]);
      float* out = out_rows[r] + cc * out_step;
      const bool whole = out_step == 1 && n == 2 * kLanes8;
      float lanes[2 * kLanes8];
      _mm256_storeu_ps(whole ? out : lanes, _mm256_mul_ps(sums[r][0], inv));
      _mm256_storeu_ps((whole ? out : lanes) + kLanes8, _mm256_mul_ps(sums[r][1], inv));
      if (!whole) store_row(lanes, n, out, out_step);
    }
  }
}
#undef NNP_AVX2_ACCUMULATORS
#undef NNP_AVX2_ROW
#undef NNP_AVX2_BLOCK

// Adds the mask to row i's scores and fills the padding's with -inf (the
// padding's keys weigh 0).
__attribute__((always_inline)) inline void mask_row(float* row, const Problem& p, int64_t b, int64_t i) {
  if (p.mask) {
    const nnp_view& m = *p.mask;
    const float* base = at(m, b, i, 0);
    for (int64_t j = 0; j < p.S; ++j) row[j] += base[j * m.strides[2]];
  }
  std::fill(row + p.S, row + p.s_pad, -std::numeric_limits<float>::infinity());
}

// Softmax of one masked row of scores in place, without AVX-512; returns
// 1 / sum, or NaN where the composition gives a row of NaN.
__attribute__((always_inline)) inline float softmax_row(float* row, const Problem& p) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  vf top = vmath::splat(minus_inf);
  vi nan{};
  for (int64_t j = 0; j < p.s_pad; j += kLanes) {
    const vf x = vmath::load(row + j);
    nan |= x != x;
    top = x > top ? x : top;
  }
  float largest = minus_inf;
  bool any_nan = false;
  for (int64_t l = 0; l < kLanes; ++l) {
    largest = std::max(largest, top[l]);
    any_nan |= nan[l] != 0;
  }
  if (any_nan || !std::isfinite(largest)) return std::numeric_limits<float>::quiet_NaN();
  vf sum{};
  const vf shift = vmath::splat(largest);
  for (int64_t j = 0; j < p.s_pad; j += kLanes) {
    const vf e = vmath::exp(vmath::load(row + j) - shift);
    vmath::store(row + j, e);
    sum += e;
  }
  for (int64_t j = p.S; j < p.s_pad; ++j) row[j] = 0;  // exp's floor is not quite 0
  float total = 0;
  for (int64_t l = 0; l < kLanes; ++l) total += sum[l];
  return 1.0f / total;
}

// NaN in every output of a row whose softmax is NaN (inv_sum NaN).
__attribute__((always_inline)) inline void nan_rows(const Problem& p, const float* inv_sum, float* const* out_rows,
                                                    int rows) {
  for (int r = 0; r < rows; ++r)
    if (std::isnan(inv_sum[r]))
      for (int64_t c = 0; c < p.Ev; ++c) out_rows[r][c * p.out->strides[2]] = std::numeric_limits<float>::quiet_NaN();
}

// Query rows [i0, i0 + rows) of batch b, rows at most kGroup; missing
// rows repeat the first and are not written. Scores go in blocks of four
// rows (16 accumulators of 64 scores).
__attribute__((always_inline)) inline void row_group(const Problem& p, int64_t b, int64_t i0, int rows, const float* kt,
                                                     const float* vp, const float* values, int64_t value_step,
                                                     float* scores) {
  const float* q_rows[kGroup];
  float* out_rows[kGroup];
  for (int r = 0; r < kGroup; ++r) {
    const int64_t i = i0 + (r < rows ? r : 0);
    q_rows[r] = at(*p.q, b, i, 0);
    out_rows[r] = const_cast<float*>(at(*p.out, b, i, 0));
  }
  const bool avx512 = form() == Form::avx512;
  for (int r = 0; r < kGroup; r += 4) {
    if (avx512)
      score_rows_avx512(q_rows + r, p.q->strides[2], kt, p, scores + r * p.s_pad);
    else
      score_rows(q_rows + r, p.q->strides[2], kt, p, scores + r * p.s_pad);
  }
  float inv_sum[kGroup];
  for (int r = 0; r < kGroup; ++r) mask_row(scores + r * p.s_pad, p, b, i0 + (r < rows ? r : 0));
  if (avx512) {
    for (int r = 0; r < kGroup; r += 4) softmax_rows_avx512(scores + r * p.s_pad, p.S, p.s_pad, inv_sum + r);
    weigh_rows_avx512(scores, values, value_step, p, inv_sum, out_rows, p.out->strides[2], rows);
  } else {
    for (int r = 0; r < kGroup; ++r) inv_sum[r] = softmax_row(scores + r * p.s_pad, p);
    for (int r = 0; r < kGroup; r += 4)
      weigh_rows(scores + r * p.s_pad, vp, p, inv_sum + r, out_rows + r, p.out->strides[2], std::clamp(rows - r, 0, 4));
  }
  nan_rows(p, inv_sum, out_rows, rows);
}

// row_group for the AVX2 form: rows at most kGroupAvx2.
__attribute__((always_inline)) inline void row_group_avx2(const Problem& p, int64_t b, int64_t i0, int rows,
                                                          const float* kt, const float* values, int64_t value_step,
                                                          float* scores) {
  const float* q_rows[kGroupAvx2];
  float* out_rows[kGroupAvx2];
  for (int r = 0; r < kGroupAvx2; ++r) {
    const int64_t i = i0 + (r < rows ? r : 0);
    q_rows[r] = at(*p.q, b, i, 0);
    out_rows[r] = const_cast<float*>(at(*p.out, b, i, 0));
  }
  float inv_sum[kGroupAvx2];
  if (!p.mask && p.S == p.s_pad) {  // the scores are final as stored: their maxima come with them
    __m256 top[kGroupAvx2];
    if (p.q->strides[2] == 1)
      score_rows_avx2<true, true>(q_rows, 1, kt, p, scores, top);
    else
      score_rows_avx2<false, true>(q_rows, p.q->strides[2], kt, p, scores, top);
    softmax_rows_avx2<6, true>(scores, p.S, p.s_pad, top, inv_sum);
  } else {
    if (p.q->strides[2] == 1)
      score_rows_avx2<true, false>(q_rows, 1, kt, p, scores, nullptr);
    else
      score_rows_avx2<false, false>(q_rows, p.q->strides[2], kt, p, scores, nullptr);
    for (int r = 0; r < kGroupAvx2; ++r) mask_row(scores + r * p.s_pad, p, b, i0 + (r < rows ? r : 0));
    softmax_rows_avx2<3, false>(scores, p.S, p.s_pad, nullptr, inv_sum);
    softmax_rows_avx2<3, false>(scores + 3 * p.s_pad, p.S, p.s_pad, nullptr, inv_sum + 3);
  }
  weigh_rows_avx2(scores, values, value_step, p, inv_sum, out_rows, p.out->strides[2], rows);
  nan_rows(p, inv_sum, out_rows, rows);
}

// One task: query rows [i0, i1) of batch b (built for AVX-512, AVX2 and the
// baseline by NNP_CPU_CLONES below, under GCC).
NNP_CPU_INLINE void attend_body(const Problem& p, int64_t b, int64_t i0, int64_t i1, float* kt, float* vp,
                                float* scores, int64_t& packed_batch) {
  const nnp_view &k = *p.k, &v = *p.v;
  // The AVX-512 and AVX2 forms read v where it lies when its rows need no
  // padding (a whole number of their 32- or 16-column blocks, contiguous):
  // no copy per batch.
  const bool v_in_place =
      v.strides[2] == 1 && ((form() == Form::avx512 && p.Ev % kCols == 0) || (form() == Form::avx2 && p.Ev % 16 == 0));
  if (packed_batch != b) {  // a thread's tasks come in order: the next rows of b reuse the layout
    // Key by key, each read once where it lies (keys of one head sit a row
    // of the projection apart: 16 KB in W7, all in one L1 set), each
    // column written into kt, which stays in L1.
    const float* key = at(k, b, 0, 0);
    if (form() == Form::avx512 && k.strides[2] == 1) {
      transpose_rows(key, k.strides[1], p.S, p.E, kt, p.s_pad);
    } else if (form() == Form::avx2 && k.strides[2] == 1) {
      transpose_rows_avx2(key, k.strides[1], p.S, p.E, kt, p.s_pad);
    } else {
      for (int64_t j = 0; j < p.S; ++j, key += k.strides[1]) {
        if (j + 8 < p.S) __builtin_prefetch(key + 8 * k.strides[1]);  // a page apart: no hardware prefetch
        for (int64_t e = 0; e < p.E; ++e) kt[e * p.s_pad + j] = key[e * k.strides[2]];
      }
    }
    for (int64_t e = 0; e < p.E; ++e) std::fill(kt + e * p.s_pad + p.S, kt + (e + 1) * p.s_pad, 0.0f);
    const float* value = at(v, b, 0, 0);
    for (int64_t j = 0; j < (v_in_place ? 0 : p.S); ++j, value += v.strides[1]) {
      if (j + 8 < p.S) __builtin_prefetch(value + 8 * v.strides[1]);
      float* row = vp + j * p.ev_pad;
      if (v.strides[2] == 1) {
        std::memcpy(row, value, static_cast<size_t>(p.Ev) * sizeof(float));
      } else {
        for (int64_t c = 0; c < p.Ev; ++c) row[c] = value[c * v.strides[2]];
      }
      std::fill(row + p.Ev, row + p.ev_pad, 0.0f);
    }
    packed_batch = b;
  }
  const float* values = v_in_place ? at(v, b, 0, 0) : vp;
  const int64_t value_step = v_in_place ? v.strides[1] : p.ev_pad;
  if (form() == Form::avx2) {
    for (int64_t i = i0; i < i1; i += kGroupAvx2)
      row_group_avx2(p, b, i, static_cast<int>(std::min<int64_t>(kGroupAvx2, i1 - i)), kt, values, value_step, scores);
    return;
  }
  for (int64_t i = i0; i < i1; i += kGroup)
    row_group(p, b, i, static_cast<int>(std::min<int64_t>(kGroup, i1 - i)), kt, vp, values, value_step, scores);
}
#if defined(__clang__)
// One build under clang, as before the builds were capped: its inlining of
// the generic vectors' helpers differs from GCC's, and a helper left out of
// line would take its 16-float vectors by another ABI in each build.
void attend(const Problem& p, int64_t b, int64_t i0, int64_t i1, float* kt, float* vp, float* scores,
            int64_t& packed_batch) {
  attend_body(p, b, i0, i1, kt, vp, scores, packed_batch);
}
#else
NNP_CPU_CLONES(void, attend,
               (const Problem& p, int64_t b, int64_t i0, int64_t i1, float* kt, float* vp, float* scores,
                int64_t& packed_batch),
               (p, b, i0, i1, kt, vp, scores, packed_batch), attend_body)
#endif

bool shaped(const nnp_view* t, int64_t b, int64_t rows, int64_t cols) {
  return t && t->dtype == NNP_F32 && t->ndim == 3 && t->shape[0] == b && t->shape[1] == rows && t->shape[2] == cols;
}

}  // namespace

nnp_status attention(const nnp_kernel_ctx*, const nnp_view* q, const nnp_view* k, const nnp_view* v,
                     const nnp_view* mask, float scale, const nnp_view* out) {
  if (!q || q->ndim != 3 || !k || k->ndim != 3 || !v || v->ndim != 3)
    return fail(NNP_INVALID_ARGUMENT, "attention: q, k and v are f32 views of rank 3");
  const int64_t B = q->shape[0], L = q->shape[1], E = q->shape[2], S = k->shape[1], Ev = v->shape[2];
  if (!shaped(q, B, L, E) || !shaped(k, B, S, E) || !shaped(v, B, S, Ev) || !shaped(out, B, L, Ev) ||
      (mask && !shaped(mask, B, L, S)) || B < 1 || L < 1 || E < 1 || S < 1 || Ev < 1 || E > 1024 || Ev > 1024 ||
      !std::isfinite(scale))
    return fail(NNP_INVALID_ARGUMENT,
                "attention: expects f32 q [B, L, E], k [B, S, E], v [B, S, Ev], out [B, L, Ev] and mask [B, L, S] "
                "or none, every size >= 1, E and Ev at most 1024, a finite scale");
  Problem p{q,
            k,
            v,
            mask,
            out,
            scale,
            L,
            S,
            E,
            Ev,
            (S + 2 * kCols - 1) / (2 * kCols) * (2 * kCols),
            (Ev + kCols - 1) / kCols * kCols};
  // Threads take whole batches (each packs its keys and values once) where
  // there are enough of them to go round, else blocks of query rows.
  const int64_t blocks = (L + kRowBlock - 1) / kRowBlock;
  const int64_t unit = B >= ThreadPool::instance().size() ? blocks : 1;
  // parallel_for's grain counts elements of an elementwise op; a vector of
  // 16 multiply-adds costs about as much as one.
  const int64_t cost = std::max<int64_t>(1, std::min(L, kRowBlock) * S * (E + Ev) * unit / 16);
  parallel_for(B * blocks / unit, cost, [&](int64_t first_unit, int64_t last_unit) {
    const int64_t first = first_unit * unit, last = last_unit * unit;
    // 64-byte aligned: every row of kt, vp and the scores is a whole number
    // of cache lines (s_pad and ev_pad are multiples of 32), so no vector
    // load splits across two lines.
    thread_local std::vector<float> scratch;
    const size_t need = static_cast<size_t>(E * p.s_pad + S * p.ev_pad + kGroup * p.s_pad) + kLanes;
    if (scratch.size() < need) scratch.resize(need);
    float* kt = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t{63});
    float* vp = kt + E * p.s_pad;
    float* scores = vp + S * p.ev_pad;
    int64_t packed_batch = -1;
    // A thread's consecutive blocks of one batch go as one range: the AVX2
    // form's groups of six rows then leave one ragged group per batch, not
    // one per block of 32 rows (a ninth of its products wasted in W7).
    for (int64_t t = first; t < last;) {
      const int64_t b = t / blocks, i0 = t % blocks * kRowBlock, batch_end = std::min(last, (b + 1) * blocks);
      attend(p, b, i0, std::min(L, (batch_end - b * blocks) * kRowBlock), kt, vp, scores, packed_batch);
      t = batch_end;
    }
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
