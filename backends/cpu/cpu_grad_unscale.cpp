// A gradient scaler's unscale in one pass (ABI 1.27's optional
// unscale_check): each gradient is read once, multiplied by the inverse
// scale in place, and checked for inf and NaN on the way, where the core's
// composition reads it three times.
//
// v * 0 is 0 for every finite v and NaN for inf and NaN, so the products
// summed say whether any was not finite: no branch per element.
#include <atomic>

#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

template <typename T>
bool unscale_chunk(T* g, T inv_scale, int64_t begin, int64_t end) {
  constexpr int kLanes = 16;  // one probe a lane: independent sums vectorize without reassociation
  T probe[kLanes] = {};
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes)
    for (int k = 0; k < kLanes; ++k) {
      const T v = g[i + k];
      probe[k] += v * T(0);
      g[i + k] = v * inv_scale;
    }
  for (; i < end; ++i) {
    const T v = g[i];
    probe[0] += v * T(0);
    g[i] = v * inv_scale;
  }
  bool any = false;
  for (int k = 0; k < kLanes; ++k) any |= probe[k] != probe[k];  // NaN: some element was inf or NaN
  return any;
}

}  // namespace

nnp_status unscale_check(const nnp_kernel_ctx*, const nnp_view* grad, double inv_scale, const nnp_view* found) {
  if (found->dtype != NNP_F32 || view_numel(*found) != 1)
    return fail(NNP_INVALID_ARGUMENT, "unscale_check: found is an f32 view of one element");
  if (!is_contiguous(*grad)) return fail(NNP_INVALID_ARGUMENT, "unscale_check: the gradient is a contiguous view");
  const int64_t n = view_numel(*grad);
  std::atomic<bool> any{false};
  auto run = [&](auto zero) {
    using T = decltype(zero);
    T* g = static_cast<T*>(grad->data);
    const T inv = static_cast<T>(inv_scale);
    parallel_for(n, 2, [&](int64_t begin, int64_t end) {
      if (unscale_chunk(g, inv, begin, end)) any.store(true, std::memory_order_relaxed);
    });
  };
  if (grad->dtype == NNP_F32) {
    run(0.0f);
  } else if (grad->dtype == NNP_F64) {
    run(0.0);
  } else {
    return fail(NNP_DTYPE_MISMATCH, "unscale_check: the cpu backend unscales f32 and f64 gradients");
  }
  if (any.load()) *static_cast<float*>(found->data) = 1.0f;
  return NNP_OK;
}

}  // namespace nnp::cpu
