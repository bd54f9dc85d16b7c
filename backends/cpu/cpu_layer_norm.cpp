// Layer normalization of contiguous f32 rows in one kernel: per row, the
// mean, the centred variance and the scaled, shifted output in three passes
// over memory the row's cache lines already hold, where the composed path
// makes eight tensors the size of x (mean, centred, square, variance, rstd,
// product, weight and bias products). Rows are split over the pool. Sums
// run in f32 over 16 independent lanes (vectorised; each lane adds N/16
// values), of differences from the row's first element for the mean and from
// the mean for the variance, so a row with a large mean keeps its precision.
// add_layer_norm (1.23) adds a row of each operand into a row of scratch
// and normalizes that with the same loop: the same bits as the add op and
// layer_norm, without the sum's tensor written out and read back. Rows of
// whole 16-float vectors on an AVX-512 CPU go two at a time through
// intrinsics that reduce the lanes in registers (the same sums in the same
// order: the same bits; W7's add_layer_norm 180 -> 100 us a call alone).
// GCC 12's AVX-512 lane reductions start from _mm512_undefined_ps(), which
// its -W(maybe-)uninitialized reports (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cpu_kernel_table.hpp"
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

// One row, compiled for AVX-512, AVX2 and the baseline (NNP_CPU_CLONES
// picks the kernel table's tier): the lane loops below vectorise
// without reassociating a sum.
NNP_CPU_INLINE void normalize_row_body(const float* x, int64_t n, const float* w, const float* b, float eps,
                                       float* out) {
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

NNP_CPU_CLONES(void, normalize_row, (const float* x, int64_t n, const float* w, const float* b, float eps, float* out),
               (x, n, w, b, eps, out), normalize_row_body)

// sum[j] = a[j] + b[j]: the residual sum add_layer_norm normalizes, rounded
// as the add op rounds it.
NNP_CPU_INLINE void add_row_body(const float* a, const float* b, int64_t n, float* sum) {
  for (int64_t j = 0; j < n; ++j) sum[j] = a[j] + b[j];
}
NNP_CPU_CLONES(void, add_row, (const float* a, const float* b, int64_t n, float* sum), (a, b, n, sum), add_row_body)

// The rows of a view in order, from row `first`: the element offset of the
// current one, stepped without divisions.
class RowCursor {
 public:
  RowCursor(const nnp_view& v, int64_t first) : v_(v) {
    for (int32_t d = v.ndim - 2; d >= 0; --d) {
      index_[d] = first % v.shape[d];
      first /= v.shape[d];
      offset_ += index_[d] * v.strides[d];
    }
  }
  int64_t offset() const { return offset_; }
  void next() {
    for (int32_t d = v_.ndim - 2; d >= 0; --d) {
      offset_ += v_.strides[d];
      if (++index_[d] < v_.shape[d]) return;
      offset_ -= v_.strides[d] * index_[d];
      index_[d] = 0;
    }
  }

 private:
  const nnp_view& v_;
  int64_t index_[NNP_MAX_DIMS] = {};
  int64_t offset_ = 0;
};

bool rows_of(const nnp_view* v, const nnp_view& like) {
  if (!v || v->dtype != NNP_F32 || v->ndim != like.ndim || v->strides[v->ndim - 1] != 1) return false;
  for (int32_t d = 0; d < v->ndim; ++d)
    if (v->shape[d] != like.shape[d]) return false;
  return true;
}

// normalize_row with AVX-512 intrinsics for rows of whole vectors (W7's
// 128): the same sums in the same order (16 lanes, then halves added
// pairwise), but each reduced in registers, where the generic loop's lane
// arrays pass through the stack and one row's reductions wait on each
// other's stores. Two rows at a time, so one row's reductions overlap the
// other's passes.
__attribute__((target("avx512f,fma"))) inline void normalize_rows_avx512(const float* const* x, int64_t n,
                                                                         const float* w, const float* b, float eps,
                                                                         float* const* out) {
  constexpr int kRows = 2;
  __m512 lanes[kRows], shift[kRows];
#pragma GCC unroll 2
  for (int r = 0; r < kRows; ++r) {
    shift[r] = _mm512_set1_ps(x[r][0]);
    lanes[r] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < n; j += kLanes)
#pragma GCC unroll 2
    for (int r = 0; r < kRows; ++r)
      lanes[r] = _mm512_add_ps(lanes[r], _mm512_sub_ps(_mm512_loadu_ps(x[r] + j), shift[r]));
  __m512 mean[kRows], squares[kRows];
#pragma GCC unroll 2
  for (int r = 0; r < kRows; ++r) {
    mean[r] = _mm512_set1_ps(x[r][0] + _mm512_reduce_add_ps(lanes[r]) / static_cast<float>(n));
    squares[r] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < n; j += kLanes)
#pragma GCC unroll 2
    for (int r = 0; r < kRows; ++r) {
      const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x[r] + j), mean[r]);
      squares[r] = _mm512_fmadd_ps(d, d, squares[r]);
    }
  __m512 rstd[kRows];
#pragma GCC unroll 2
  for (int r = 0; r < kRows; ++r)
    rstd[r] = _mm512_set1_ps(1.0f / __builtin_sqrtf(_mm512_reduce_add_ps(squares[r]) / static_cast<float>(n) + eps));
  for (int64_t j = 0; j < n; j += kLanes) {
    const __m512 scale = w ? _mm512_loadu_ps(w + j) : _mm512_set1_ps(1.0f);
#pragma GCC unroll 2
    for (int r = 0; r < kRows; ++r) {
      const __m512 y = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x[r] + j), mean[r]), rstd[r]);
      _mm512_storeu_ps(out[r] + j,
                       b ? _mm512_fmadd_ps(y, scale, _mm512_loadu_ps(b + j)) : (w ? _mm512_mul_ps(y, scale) : y));
    }
  }
}

bool avx512_rows(int64_t n) {
  static const bool avx512 = kernel_table().layer_norm == Tier::avx512;
  return avx512 && n % kLanes == 0;
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
    if (!avx512_rows(n)) {
      for (int64_t r = begin; r < end; ++r) normalize_row(in + r * n, n, w, b, epsilon, result + r * n);
      return;
    }
    for (int64_t r = begin; r < end; r += 2) {
      const int64_t second = std::min(r + 1, end - 1);  // an odd last row goes twice
      const float* x[2] = {in + r * n, in + second * n};
      float* out_rows[2] = {result + r * n, result + second * n};
      normalize_rows_avx512(x, n, w, b, epsilon, out_rows);
    }
  });
  return NNP_OK;
}

nnp_status add_layer_norm(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* weight,
                          const nnp_view* bias, double eps, const nnp_view* out) {
  if (!a || a->ndim < 1 || a->ndim > NNP_MAX_DIMS || !rows_of(a, *a) || !rows_of(b, *a) || !rows_of(out, *a) ||
      !is_contiguous(*out) || !(eps >= 0))
    return fail(NNP_INVALID_ARGUMENT,
                "add_layer_norm: a, b and out are f32 views of one shape [..., N] whose last stride is 1, out "
                "contiguous, eps >= 0");
  const int64_t n = a->shape[a->ndim - 1];
  if ((weight && (weight->dtype != NNP_F32 || weight->ndim != 1 || weight->shape[0] != n)) ||
      (bias && (bias->dtype != NNP_F32 || bias->ndim != 1 || bias->shape[0] != n)))
    return fail(NNP_INVALID_ARGUMENT, "add_layer_norm: weight and bias are f32 [" + std::to_string(n) + "] or none");
  const int64_t rows = view_numel(*a) / n;
  if (rows == 0) return NNP_OK;
  const float* pa = static_cast<const float*>(a->data);
  const float* pb = static_cast<const float*>(b->data);
  float* result = static_cast<float*>(out->data);
  const float* w = weight ? static_cast<const float*>(weight->data) : nullptr;
  const float* shift = bias ? static_cast<const float*>(bias->data) : nullptr;
  const float epsilon = static_cast<float>(eps);
  const bool avx512 = avx512_rows(n);
  parallel_for(rows, n * 5, [&](int64_t begin, int64_t end) {
    thread_local std::vector<float> sum;  // two rows, in L1: the sums are never written out
    if (sum.size() < static_cast<size_t>(2 * n)) sum.resize(static_cast<size_t>(2 * n));
    RowCursor row_a(*a, begin), row_b(*b, begin);
    for (int64_t r = begin; r < end; r += 2) {
      const int64_t count = std::min<int64_t>(2, end - r);
      for (int64_t i = 0; i < count; ++i, row_a.next(), row_b.next())
        add_row(pa + row_a.offset(), pb + row_b.offset(), n, sum.data() + i * n);
      if (avx512) {
        const float* x[2] = {sum.data(), sum.data() + (count - 1) * n};  // an odd last row goes twice
        float* out_rows[2] = {result + r * n, result + (r + count - 1) * n};
        normalize_rows_avx512(x, n, w, shift, epsilon, out_rows);
      } else {
        for (int64_t i = 0; i < count; ++i)
          normalize_row(sum.data() + i * n, n, w, shift, epsilon, result + (r + i) * n);
      }
    }
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
