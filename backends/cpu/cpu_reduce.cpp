// Reductions over the trailing dimensions of a view, and softmax.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu_bf16_vector.hpp"
#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"
#include "cpu_softmax_row.hpp"

namespace nnp::cpu {
namespace {

// The reduced dimensions of x, merged where memory allows, so that the
// common case (one contiguous run) is a single strided loop.
struct ReducedDims {
  int32_t ndim = 0;
  int64_t shape[NNP_MAX_DIMS];
  int64_t strides[NNP_MAX_DIMS];
  int64_t count = 1;
};

ReducedDims reduced_dims(const nnp_view& x, int32_t nreduce) {
  ReducedDims r;
  for (int32_t i = x.ndim - nreduce; i < x.ndim; ++i) {
    int64_t size = x.shape[i], stride = x.strides[i];
    r.count *= size;
    if (size == 1) continue;
    if (r.ndim > 0 && r.strides[r.ndim - 1] == stride * size) {
      r.shape[r.ndim - 1] *= size;  // the previous dim steps over this one exactly
      r.strides[r.ndim - 1] = stride;
      continue;
    }
    r.shape[r.ndim] = size;
    r.strides[r.ndim++] = stride;
  }
  return r;
}

// Calls visit(offset, position) for every reduced element in row-major order.
template <typename Visit>
void walk_reduced(const ReducedDims& r, int64_t base, Visit&& visit) {
  if (r.ndim == 0) {
    if (r.count > 0) visit(base, int64_t{0});
    return;
  }
  if (r.ndim == 1) {
    for (int64_t i = 0; i < r.shape[0]; ++i) visit(base + i * r.strides[0], i);
    return;
  }
  int64_t index[NNP_MAX_DIMS] = {};
  int64_t offset = base;
  for (int64_t position = 0; position < r.count; ++position) {
    visit(offset, position);
    for (int32_t i = r.ndim - 1; i >= 0; --i) {
      offset += r.strides[i];
      if (++index[i] < r.shape[i]) break;
      offset -= r.strides[i] * index[i];
      index[i] = 0;
    }
  }
}

// The sum of n contiguous elements in double, with independent accumulators
// so the adds pipeline (and vectorise) instead of waiting on each other.
template <typename T>
double contiguous_sum_scalar(const T* data, int64_t n) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) acc[j] += static_cast<double>(Traits<T>::load(data[i + j]));
  for (; i < n; ++i) acc[0] += static_cast<double>(Traits<T>::load(data[i]));
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

template <typename T>
double contiguous_squared_deviations_scalar(const T* data, int64_t n, double mean) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) {
      const double d = static_cast<double>(Traits<T>::load(data[i + j])) - mean;
      acc[j] += d * d;
    }
  for (; i < n; ++i) {
    const double d = static_cast<double>(Traits<T>::load(data[i])) - mean;
    acc[0] += d * d;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

#if defined(__x86_64__)
// The same four accumulators as one AVX2 vector of doubles for f32 and bf16
// rows (softmax's backward sums 64-element rows of them; GCC leaves the
// loop above scalar): each accumulator adds the same elements in the same
// order, so the result is the same bits.
__attribute__((target("avx2"))) inline __m256d four_doubles(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
__attribute__((target("avx2"))) inline __m256d four_doubles(const BFloat16* p) {
  const __m128i bits = _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(bits, 16)));
}
template <typename T>
__attribute__((target("avx2"))) double contiguous_sum_avx2(const T* data, int64_t n) {
  __m256d acc = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) acc = _mm256_add_pd(acc, four_doubles(data + i));
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, acc);
  for (; i < n; ++i) lanes[0] += static_cast<double>(Traits<T>::load(data[i]));
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// (No FMA in this build: the squares and their sums round as the scalar
// loop's separate multiply and add do.)
template <typename T>
__attribute__((target("avx2"))) double contiguous_squared_deviations_avx2(const T* data, int64_t n, double mean) {
  const __m256d centre = _mm256_set1_pd(mean);
  __m256d acc = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d d = _mm256_sub_pd(four_doubles(data + i), centre);
    acc = _mm256_add_pd(acc, _mm256_mul_pd(d, d));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, acc);
  for (; i < n; ++i) {
    const double d = static_cast<double>(Traits<T>::load(data[i])) - mean;
    lanes[0] += d * d;
  }
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}
#endif

template <typename T>
double contiguous_sum(const T* data, int64_t n) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
    static const bool avx2 = kernel_table().reductions == Tier::avx2;
    if (avx2) return contiguous_sum_avx2(data, n);
  }
#endif
  return contiguous_sum_scalar(data, n);
}
template <typename T>
double contiguous_squared_deviations(const T* data, int64_t n, double mean) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) {
    static const bool avx2 = kernel_table().reductions == Tier::avx2;
    if (avx2) return contiguous_squared_deviations_avx2(data, n, mean);
  }
#endif
  return contiguous_squared_deviations_scalar(data, n, mean);
}
// The maximum (or minimum) of n contiguous floats, or NaN when any is NaN
// (the caller then finds the first NaN as the scalar loop does). Eight
// independent lanes of AVX2 instead of one compare-and-branch per element.
#if defined(__x86_64__)
__attribute__((target("avx2"))) bool contiguous_extreme_avx2(const float* data, int64_t n, bool want_max,
                                                             float* result) {
  __m256 best[4];
  for (auto& b : best) b = _mm256_set1_ps(data[0]);
  __m256 unordered = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int j = 0; j < 4; ++j) {
      const __m256 v = _mm256_loadu_ps(data + i + 8 * j);
      unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      best[j] = want_max ? _mm256_max_ps(v, best[j]) : _mm256_min_ps(v, best[j]);  // ties keep the earlier
    }
  if (_mm256_movemask_ps(unordered) != 0) return false;
  alignas(32) float lanes[32];
  for (int j = 0; j < 4; ++j) _mm256_store_ps(lanes + 8 * j, best[j]);
  float r = lanes[0];
  for (float v : lanes) r = want_max ? std::max(r, v) : std::min(r, v);
  for (; i < n; ++i) {
    if (std::isnan(data[i])) return false;
    r = want_max ? std::max(r, data[i]) : std::min(r, data[i]);
  }
  *result = r;
  return true;
}
#endif

bool contiguous_extreme(const float* data, int64_t n, bool want_max, float* result) {
#if defined(__x86_64__)
  static const bool avx2 = kernel_table().reductions == Tier::avx2;
  if (avx2 && n >= 64) return contiguous_extreme_avx2(data, n, want_max, result);
#endif
  return false;
}

// acc[j] += row[j] for j < n, in double: the inner loop of column_sums,
// built for AVX-512 and AVX2 beside the baseline (8 or 4 doubles an
// instruction instead of SSE2's 2; each column's sum runs in the same
// order, so the results are the same bits). W7's bias gradients under
// autocast are such sums over 2048 rows of bf16.
NNP_CPU_INLINE void accumulate_floats_body(const float* row, int64_t n, double* acc) {
  for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<double>(row[j]);
}
NNP_CPU_CLONES(void, accumulate_row, (const float* row, int64_t n, double* acc), (row, n, acc), accumulate_floats_body)
NNP_CPU_INLINE void accumulate_bf16_body(const BFloat16* row, int64_t n, double* acc) {
  for (int64_t j = 0; j < n; ++j) {
    const uint32_t bits = static_cast<uint32_t>(row[j].bits) << 16;
    float v;
    __builtin_memcpy(&v, &bits, 4);
    acc[j] += static_cast<double>(v);
  }
}
NNP_CPU_CLONES(void, accumulate_row, (const BFloat16* row, int64_t n, double* acc), (row, n, acc), accumulate_bf16_body)

// Sums over the reduced dimensions where the outputs' innermost dimension is
// contiguous in x: the columns of a matrix (a bias gradient: x is [C, N]
// with strides [1, C]), a mean over a sequence (x [B, E, L] with strides
// [L * E, 1, E]), or a bias gradient of a transposed activation (W7's
// attention: [E, L, N] with strides [1, E, N * E], two reduced dimensions
// that do not merge; walked per output it took ten times as long).
// Walking each output's reduced dimensions would jump a row per step;
// adding whole rows into a block of accumulators, the rows in the walk's
// order, reads memory in order and gives the walk's sums.
template <typename T>
void column_sums(nnp_reduce_op op, const nnp_view& x, int32_t nkeep, const ReducedDims& r, const nnp_view& out) {
  using Tr = Traits<T>;
  using C = typename Tr::compute;
  const T* data = static_cast<const T*>(x.data);
  T* result = static_cast<T*>(out.data);
  const double scale = op == NNP_REDUCE_MEAN ? 1.0 / static_cast<double>(r.count) : 1.0;
  const int64_t inner = x.shape[nkeep - 1], outer_stride = nkeep == 2 ? x.strides[0] : 0;
  parallel_for(view_numel(out), r.count, [&](int64_t begin, int64_t end) {
    constexpr int64_t kBlock = 256;
    double acc[kBlock];
    for (int64_t first = begin; first < end;) {
      const int64_t outer = first / inner, j0 = first % inner;
      const int64_t n = std::min({kBlock, end - first, inner - j0});
      std::fill(acc, acc + n, 0.0);
      walk_reduced(r, outer * outer_stride + j0, [&](int64_t at, int64_t) {
        const T* row = data + at;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>)
          accumulate_row(row, n, acc);
        else
          for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<double>(Tr::load(row[j]));
      });
      for (int64_t j = 0; j < n; ++j) result[first + j] = Tr::store(static_cast<C>(acc[j] * scale));
      first += n;
    }
  });
}

template <typename T>
void reduce_typed(nnp_reduce_op op, const nnp_view& x, int32_t nreduce, double correction, const nnp_view& out) {
  using Tr = Traits<T>;
  using C = typename Tr::compute;
  const int32_t nkeep = x.ndim - nreduce;
  const ReducedDims r = reduced_dims(x, nreduce);
  if constexpr (is_floating_v<T>) {
    if ((op == NNP_REDUCE_SUM || op == NNP_REDUCE_MEAN) && (nkeep == 1 || (nkeep == 2 && x.shape[1] > 1)) &&
        x.strides[nkeep - 1] == 1 && r.ndim >= 1 && r.count > 0)
      return column_sums<T>(op, x, nkeep, r, out);
  }
  const T* data = static_cast<const T*>(x.data);
  const int64_t outputs = view_numel(out);
  // out is contiguous (the core allocates it).
  parallel_for(outputs, r.count, [&](int64_t begin, int64_t end) {
    // Each output's first reduced element: unravelled once, then stepped.
    int64_t kept[NNP_MAX_DIMS] = {};
    int64_t next_base = 0;
    for (int64_t i = nkeep - 1, rest = begin; i >= 0; --i) {
      kept[i] = rest % x.shape[i];
      rest /= x.shape[i];
      next_base += kept[i] * x.strides[i];
    }
    for (int64_t o = begin; o < end; ++o) {
      const int64_t base = next_base;
      for (int32_t i = nkeep - 1; i >= 0; --i) {
        next_base += x.strides[i];
        if (++kept[i] < x.shape[i]) break;
        next_base -= x.strides[i] * kept[i];
        kept[i] = 0;
      }
      if (op == NNP_REDUCE_SUM || op == NNP_REDUCE_MEAN || op == NNP_REDUCE_VAR) {
        if constexpr (is_floating_v<T>) {
          const bool contiguous = r.count > 0 && r.ndim == 1 && r.strides[0] == 1;
          double sum = 0;
          if (contiguous)
            sum = contiguous_sum(data + base, r.count);
          else
            walk_reduced(r, base, [&](int64_t at, int64_t) { sum += static_cast<double>(Tr::load(data[at])); });
          double mean = sum / static_cast<double>(r.count);
          double result = op == NNP_REDUCE_SUM ? sum : mean;
          if (op == NNP_REDUCE_VAR) {
            double squares = 0;
            if (contiguous)
              squares = contiguous_squared_deviations(data + base, r.count, mean);
            else
              walk_reduced(r, base, [&](int64_t at, int64_t) {
                double d = static_cast<double>(Tr::load(data[at])) - mean;
                squares += d * d;
              });
            double denominator = static_cast<double>(r.count) - correction;
            result = squares / (denominator > 0 ? denominator : 0.0);
          }
          static_cast<T*>(out.data)[o] = Tr::store(static_cast<C>(result));
        } else {
          uint64_t sum = 0;  // integer sums wrap, as PyTorch's
          walk_reduced(r, base, [&](int64_t at, int64_t) { sum += static_cast<uint64_t>(Tr::load(data[at])); });
          static_cast<T*>(out.data)[o] = static_cast<T>(sum);
        }
        continue;
      }
      const bool want_max = op == NNP_REDUCE_MAX || op == NNP_REDUCE_ARGMAX;
      if constexpr (std::is_same_v<T, float>) {
        float extreme;
        if ((op == NNP_REDUCE_MAX || op == NNP_REDUCE_MIN) && r.ndim == 1 && r.strides[0] == 1 &&
            contiguous_extreme(data + base, r.count, want_max, &extreme)) {
          static_cast<float*>(out.data)[o] = extreme;
          continue;
        }
      }
      C best = Tr::load(data[base]);
      int64_t best_at = 0;
      bool done = false;
      walk_reduced(r, base, [&](int64_t at, int64_t position) {
        if (done) return;
        C v = Tr::load(data[at]);
        if constexpr (std::is_floating_point_v<C>) {
          if (std::isnan(best)) {  // NaN wins and keeps its first index
            done = true;
            return;
          }
          if (std::isnan(v)) {
            best = v;
            best_at = position;
            done = true;
            return;
          }
        }
        if (want_max ? v > best : v < best) {
          best = v;
          best_at = position;
        }
      });
      if (op == NNP_REDUCE_ARGMAX || op == NNP_REDUCE_ARGMIN)
        static_cast<int64_t*>(out.data)[o] = best_at;
      else
        static_cast<T*>(out.data)[o] = Tr::store(best);
    }
  });
}

template <typename T>
void softmax_typed(const nnp_view& x, int32_t dim, bool log, const nnp_view& out) {
  using Tr = Traits<T>;
  using C = typename Tr::compute;
  const int64_t length = x.shape[dim];
  const int64_t xs = x.strides[dim], os = out.strides[dim];
  // Rows are all positions of the other dimensions.
  int64_t rows = 1;
  for (int32_t i = 0; i < x.ndim; ++i)
    if (i != dim) rows *= x.shape[i];
  // Rows of contiguous views over their last dimension start length apart
  // (attention's scores): no divisions a row, which cost as much as a
  // 64-element row's softmax.
  const bool packed_rows = dim == x.ndim - 1 && is_contiguous(x) && is_contiguous(out);
  auto row_offset = [&](const nnp_view& v, int64_t row) {
    if (packed_rows) return row * length;
    int64_t offset = 0;
    for (int32_t i = v.ndim - 1; i >= 0; --i) {
      if (i == dim) continue;
      offset += (row % v.shape[i]) * v.strides[i];
      row /= v.shape[i];
    }
    return offset;
  };
  const T* in = static_cast<const T*>(x.data);
  T* result = static_cast<T*>(out.data);
  parallel_for(rows, length * 8, [&](int64_t begin, int64_t end) {
    // 16-bit rows (autocast's attention) run through f32 in a thread's
    // buffer: one conversion each way instead of three loads.
    constexpr bool bf16 = std::is_same_v<T, BFloat16>, f16 = std::is_same_v<T, Half>;
    thread_local std::vector<float> buffer;
    if ((bf16 || f16) && xs == 1 && os == 1) buffer.resize(static_cast<size_t>(2 * length));
    for (int64_t row = begin; row < end; ++row) {
      const T* src = in + row_offset(x, row);
      T* dst = result + row_offset(out, row);
      if constexpr (std::is_same_v<T, float>)
        if (xs == 1 && os == 1 && softmax_row_f32(src, length, log, dst)) continue;
      if constexpr (bf16)  // vector code all through (cpu_softmax_row.hpp)
        if (xs == 1 && os == 1 &&
            softmax_row_bf16(reinterpret_cast<const uint16_t*>(src), length, log, reinterpret_cast<uint16_t*>(dst),
                             buffer.data()))
          continue;
      if constexpr (f16) {
        if (xs == 1 && os == 1) {
          float* widened = buffer.data();
          for (int64_t j = 0; j < length; ++j) widened[j] = Tr::load(src[j]);
          if (softmax_row_f32(widened, length, log, widened + length)) {
            for (int64_t j = 0; j < length; ++j) dst[j] = Tr::store(widened[length + j]);
            continue;
          }
        }
      }
      C max = -std::numeric_limits<C>::infinity();
      for (int64_t j = 0; j < length; ++j) {
        C v = Tr::load(src[j * xs]);
        if (std::isnan(v) || v > max) max = v;
        if (std::isnan(max)) break;
      }
      double sum = 0;
      for (int64_t j = 0; j < length; ++j) sum += static_cast<double>(std::exp(Tr::load(src[j * xs]) - max));
      if (log) {
        const C log_sum = static_cast<C>(std::log(sum));
        for (int64_t j = 0; j < length; ++j) dst[j * os] = Tr::store(Tr::load(src[j * xs]) - max - log_sum);
      } else {
        const C scale = static_cast<C>(1.0 / sum);
        for (int64_t j = 0; j < length; ++j) dst[j * os] = Tr::store(std::exp(Tr::load(src[j * xs]) - max) * scale);
      }
    }
  });
}

}  // namespace

nnp_status reduce(const nnp_kernel_ctx*, nnp_reduce_op op, const nnp_view* x, int32_t nreduce, double correction,
                  const nnp_view* out) {
  dispatch(x->dtype, [&](auto tag) { reduce_typed<typename decltype(tag)::type>(op, *x, nreduce, correction, *out); });
  return NNP_OK;
}

nnp_status softmax(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, int32_t log, const nnp_view* out) {
  return dispatch(x->dtype, [&](auto tag) -> nnp_status {
    using T = typename decltype(tag)::type;
    if constexpr (is_floating_v<T>) {
      softmax_typed<T>(*x, dim, log != 0, *out);
      return NNP_OK;
    } else {
      return fail(NNP_DTYPE_MISMATCH, "softmax: needs a floating-point tensor");
    }
  });
}

}  // namespace nnp::cpu
