// Layer normalization of contiguous f32 rows in one kernel: per row, the
// mean, the centred variance and the scaled, shifted output in three passes
// over memory the row's cache lines already hold, where the composed path
// makes eight tensors the size of x (mean, centred, square, variance, rstd,
// product, weight and bias products). Rows are split over the pool. Sums
// run in f32 over 16 independent lanes (vectorised; each lane adds N/16
// values), of differences from the row's first element for the mean and from
// the mean for the variance, so a row with a large mean keeps its precision.
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

constexpr int kLanes = 16;

// The lanes' total, pairwise (four dependent adds, not sixteen).
inline float lane_total(float* lanes) {
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  return lanes[0];
}

// One row, compiled for AVX-512, AVX2 and the baseline (the loader picks
// the widest the CPU has): the lane loops below vectorise without
// reassociating a sum, so every clone gives the same result.
__attribute__((target_clones("avx512f", "avx2", "default"))) void normalize_row(const float* x, int64_t n,
                                                                                const float* w, const float* b,
                                                                                float eps, float* out) {
  // sum_j (x[j] - x[0]): a row far from 0 sums its small differences.
  const float shift = x[0];
  float lanes[kLanes] = {};
  const int64_t whole = n / kLanes * kLanes;
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[j + l] - shift;
  float sum = 0;
  for (int64_t j = whole; j < n; ++j) sum += x[j] - shift;
  sum += lane_total(lanes);
  const float mean = shift + sum / static_cast<float>(n);
  float squares[kLanes] = {};
  for (int64_t j = 0; j < whole; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float d = x[j + l] - mean;
      squares[l] += d * d;
    }
  float var = 0;
  for (int64_t j = whole; j < n; ++j) var += (x[j] - mean) * (x[j] - mean);
  var += lane_total(squares);
  const float rstd = 1.0f / __builtin_sqrtf(var / static_cast<float>(n) + eps);
  if (w && b) {
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - mean) * rstd * w[j] + b[j];
  } else if (w) {
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - mean) * rstd * w[j];
  } else if (b) {
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - mean) * rstd + b[j];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = (x[j] - mean) * rstd;
  }
}

}  // namespace

nnp_status layer_norm(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* weight, const nnp_view* bias,
                      double eps, const nnp_view* out) {
  if (x->dtype != NNP_F32) return fail(NNP_DTYPE_MISMATCH, "layer_norm: the cpu kernel takes f32");
  const int64_t n = x->shape[x->ndim - 1];
  const int64_t rows = n == 0 ? 0 : view_numel(*x) / n;
  const float* in = static_cast<const float*>(x->data);
  float* result = static_cast<float*>(out->data);
  const float* w = weight ? static_cast<const float*>(weight->data) : nullptr;
  const float* b = bias ? static_cast<const float*>(bias->data) : nullptr;
  const float epsilon = static_cast<float>(eps);
  parallel_for(rows, n * 4, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) normalize_row(in + r * n, n, w, b, epsilon, result + r * n);
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
