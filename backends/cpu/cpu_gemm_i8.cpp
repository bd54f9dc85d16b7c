// The int8 GEMM of quantized layers: out[m, n] = sum_k a[m, k] * b[n, k] in
// exact int32. Both operands are read along k, so each output is a dot
// product of two contiguous rows. With AVX2, 16 bytes at a time widen to
// int16 and vpmaddwd multiplies and adds pairs into int32 lanes (no
// saturation, unlike vpmaddubsw); a tile of 2 rows of a by 4 rows of b
// reuses every load. Without AVX2, plain loops give the same integers.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

int32_t dot_scalar(const int8_t* a, const int8_t* b, int64_t k) {
  int32_t sum = 0;
  for (int64_t i = 0; i < k; ++i) sum += int32_t{a[i]} * int32_t{b[i]};
  return sum;
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) inline __m256i widen(const int8_t* p) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__attribute__((target("avx2"))) inline int32_t horizontal_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// Columns [n0, n1) of out = a [M, K] times b [N, K]^T. Four rows of b
// (a few KB) stay in L1 while every row of a streams past them from L2, so
// b, the larger operand (a layer's weights), is read from memory once.
__attribute__((target("avx2"))) void columns_avx2(const int8_t* a, const int8_t* b, int32_t* out, int64_t m, int64_t n0,
                                                  int64_t n1, int64_t n, int64_t k) {
  const int64_t k16 = k - k % 16;
  int64_t j = n0;
  for (; j + 4 <= n1; j += 4) {
    const int8_t* b0 = b + j * k;
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) {
      const int8_t* a0 = a + i * k;
      const int8_t* a1 = a0 + k;
      __m256i acc[2][4] = {};
      for (int64_t p = 0; p < k16; p += 16) {
        const __m256i x0 = widen(a0 + p), x1 = widen(a1 + p);
        for (int c = 0; c < 4; ++c) {
          const __m256i w = widen(b0 + c * k + p);
          acc[0][c] = _mm256_add_epi32(acc[0][c], _mm256_madd_epi16(x0, w));
          acc[1][c] = _mm256_add_epi32(acc[1][c], _mm256_madd_epi16(x1, w));
        }
      }
      for (int c = 0; c < 4; ++c) {
        out[i * n + j + c] = horizontal_sum(acc[0][c]) + dot_scalar(a0 + k16, b0 + c * k + k16, k - k16);
        out[(i + 1) * n + j + c] = horizontal_sum(acc[1][c]) + dot_scalar(a1 + k16, b0 + c * k + k16, k - k16);
      }
    }
    for (; i < m; ++i) {  // the odd last row of a (all of batch 1): 1 x 4 tiles
      const int8_t* a0 = a + i * k;
      __m256i acc[4] = {};
      for (int64_t p = 0; p < k16; p += 16) {
        const __m256i x0 = widen(a0 + p);
        for (int c = 0; c < 4; ++c) acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(x0, widen(b0 + c * k + p)));
      }
      for (int c = 0; c < 4; ++c)
        out[i * n + j + c] = horizontal_sum(acc[c]) + dot_scalar(a0 + k16, b0 + c * k + k16, k - k16);
    }
  }
  for (; j < n1; ++j)
    for (int64_t i = 0; i < m; ++i) out[i * n + j] = dot_scalar(a + i * k, b + j * k, k);
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace

nnp_status gemm_i8(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  if (a->dtype != NNP_I8 || b->dtype != NNP_I8 || out->dtype != NNP_I32 || a->ndim != 2 || b->ndim != 2 ||
      out->ndim != 2 || a->shape[1] != b->shape[1] || out->shape[0] != a->shape[0] || out->shape[1] != b->shape[0])
    return fail(NNP_INVALID_ARGUMENT, "gemm_i8: expects i8 a [M,K], i8 b [N,K] and i32 out [M,N]");
  const int64_t m = a->shape[0], n = b->shape[0], k = a->shape[1];
  const auto* pa = static_cast<const int8_t*>(a->data);
  const auto* pb = static_cast<const int8_t*>(b->data);
  auto* po = static_cast<int32_t*>(out->data);
  // The pool splits the columns (rows of b) in blocks of four.
  parallel_for((n + 3) / 4, 4 * m * k, [&](int64_t first, int64_t last) {
    const int64_t n0 = first * 4, n1 = std::min(n, last * 4);
#if defined(__x86_64__)
    if (has_avx2()) {
      columns_avx2(pa, pb, po, m, n0, n1, n, k);
      return;
    }
#endif
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = n0; j < n1; ++j) po[i * n + j] = dot_scalar(pa + i * k, pb + j * k, k);
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
