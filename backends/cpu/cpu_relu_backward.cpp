// ReLU's backward and the column sums of its result in one pass (ABI 1.26's
// optional relu_backward): a captured step's tape asks for it in place of
// the le, where and reduce the eager backward makes of a hidden layer's
// ReLU and its Linear's bias gradient, which read and write the gradient
// three times.
//
// The sums run down each column in row order in double and are rounded
// once, as the reduce kernel's column sums do (cpu_reduce.cpp): the same
// bits as the ops it stands for.
#include <immintrin.h>

#include <algorithm>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

constexpr int64_t kColumns = 32;  // a block of columns: its sums stay in eight registers

// The baseline: grad_in = result <= 0 ? 0 : grad (a NaN result passes the
// gradient: the comparison is false) over the columns [first, last) of m
// rows of n, each column's sum added in double down the rows when `sums`.
void columns_baseline(const float* result, const float* grad, float* grad_in, float* sums, int64_t m, int64_t n,
                      int64_t first, int64_t last) {
  for (int64_t j = first; j < last; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < m; ++i) {
      const float v = result[i * n + j] <= 0.0f ? 0.0f : grad[i * n + j];
      grad_in[i * n + j] = v;
      sum += static_cast<double>(v);
    }
    if (sums) sums[j] = static_cast<float>(sum);
  }
}

// The same for whole blocks of kColumns columns, eight lanes at a time: the
// gradient's bits masked where the result is not above 0 (unordered: a NaN
// keeps them), each lane's sum the baseline's adds in the same order.
__attribute__((target("avx2"))) void columns_avx2(const float* result, const float* grad, float* grad_in, float* sums,
                                                  int64_t m, int64_t n, int64_t first, int64_t last) {
  const __m256 zero = _mm256_setzero_ps();
  for (; first + kColumns <= last; first += kColumns) {
    __m256d acc[kColumns / 4];
    for (__m256d& a : acc) a = _mm256_setzero_pd();
    for (int64_t i = 0; i < m; ++i) {
      const int64_t at = i * n + first;
      for (int k = 0; k < kColumns / 8; ++k) {
        const __m256 keep = _mm256_cmp_ps(_mm256_loadu_ps(result + at + 8 * k), zero, _CMP_NLE_UQ);
        const __m256 v = _mm256_and_ps(_mm256_loadu_ps(grad + at + 8 * k), keep);
        _mm256_storeu_ps(grad_in + at + 8 * k, v);
        acc[2 * k] = _mm256_add_pd(acc[2 * k], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
        acc[2 * k + 1] = _mm256_add_pd(acc[2 * k + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
      }
    }
    if (sums)
      for (int k = 0; k < kColumns / 4; ++k) _mm_storeu_ps(sums + first + 4 * k, _mm256_cvtpd_ps(acc[k]));
  }
  columns_baseline(result, grad, grad_in, sums, m, n, first, last);
}

using ColumnsPass = void (*)(const float*, const float*, float*, float*, int64_t, int64_t, int64_t, int64_t);

ColumnsPass columns_pass_for_this_cpu() {
  static const ColumnsPass pass = kernel_table().relu_backward == Tier::avx2 ? columns_avx2 : columns_baseline;
  return pass;
}

bool contiguous_f32(const nnp_view* v, int32_t ndim) {
  return v != nullptr && v->dtype == NNP_F32 && v->ndim == ndim && is_contiguous(*v);
}

}  // namespace

nnp_status relu_backward(const nnp_kernel_ctx*, const nnp_view* result, const nnp_view* grad, const nnp_view* grad_in,
                         const nnp_view* column_sums) {
  if (!contiguous_f32(result, 2) || !contiguous_f32(grad, 2) || !contiguous_f32(grad_in, 2) ||
      !std::equal(result->shape, result->shape + 2, grad->shape) ||
      !std::equal(result->shape, result->shape + 2, grad_in->shape))
    return fail(NNP_INVALID_ARGUMENT, "relu_backward: result, grad and grad_in are contiguous f32 [M, N] views");
  const int64_t m = result->shape[0], n = result->shape[1];
  if (column_sums != nullptr &&
      (column_sums->dtype != NNP_F32 || view_numel(*column_sums) != n || !is_contiguous(*column_sums)))
    return fail(NNP_INVALID_ARGUMENT, "relu_backward: column_sums is a contiguous f32 [N] view or NULL");
  const auto* r = static_cast<const float*>(result->data);
  const auto* g = static_cast<const float*>(grad->data);
  auto* out = static_cast<float*>(grad_in->data);
  auto* sums = column_sums ? static_cast<float*>(column_sums->data) : nullptr;
  const ColumnsPass pass = columns_pass_for_this_cpu();
  // Threads take blocks of columns and walk every row of theirs. Without
  // sums the rows are one row of M x N columns.
  const int64_t rows = sums ? m : 1, columns = sums ? n : m * n;
  const int64_t blocks = (columns + kColumns - 1) / kColumns;
  parallel_for(blocks, rows * kColumns, [&](int64_t begin, int64_t end) {
    pass(r, g, out, sums, rows, columns, begin * kColumns, std::min(end * kColumns, columns));
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
