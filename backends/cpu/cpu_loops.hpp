// Strided iteration and threading for the CPU kernels (ThreadPool).
//
// for_each_run walks views of one shape as runs along the innermost
// dimension, handing the body typed-agnostic byte pointers, the innermost
// strides and the run length, so the body's inner loop is a plain (often
// vectorised) loop. Large iterations are split over threads by element
// ranges, which keeps results independent of the thread count.
#pragma once

#include <nnp/plugin.h>

#include <algorithm>
#include <cstdint>

#include "cpu_types.hpp"
#include "thread_pool.hpp"

namespace nnp::cpu {

// Elements below which threading costs more than it saves.
constexpr int64_t kParallelGrain = 32768;

inline int64_t view_numel(const nnp_view& v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= v.shape[i];
  return n;
}

// Whether v's elements lie in row-major order with no gaps (size-1
// dimensions may have any stride).
inline bool is_contiguous(const nnp_view& v) {
  int64_t expected = 1;
  for (int32_t i = v.ndim - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

// Runs body(begin, end) over [0, total) split across threads when the total
// work (total * cost_per_item) is worth it.
template <typename Body>
void parallel_for(int64_t total, int64_t cost_per_item, Body body) {
  if (total <= 0) return;
  ThreadPool& pool = ThreadPool::instance();
  const int threads = pool.size();
  if (threads <= 1 || total * cost_per_item < kParallelGrain || total < 2) {
    body(int64_t{0}, total);
    return;
  }
  const int64_t chunks = std::min<int64_t>(threads, total);
  pool.run(chunks, [&](int64_t c) {
    int64_t begin = total * c / chunks, end = total * (c + 1) / chunks;
    if (begin < end) body(begin, end);
  });
}

template <int N>
struct Run {
  char* ptr[N];
  int64_t stride[N];  // innermost strides, in elements
};

// Visits the elements [begin, end) of N same-shaped views in runs.
template <int N, typename Body>
void for_each_run_range(const nnp_view* const (&views)[N], int64_t begin, int64_t end, Body& body) {
  const nnp_view& shape_view = *views[0];
  const int32_t ndim = shape_view.ndim;
  const int64_t inner = ndim > 0 ? shape_view.shape[ndim - 1] : 1;
  if (inner == 0) return;
  size_t itemsize[N];
  Run<N> run;
  for (int k = 0; k < N; ++k) {
    itemsize[k] = element_size(views[k]->dtype);
    run.stride[k] = ndim > 0 ? views[k]->strides[ndim - 1] : 0;
  }
  // Unravel `begin` into an outer multi-index and a position in the row.
  int64_t index[NNP_MAX_DIMS] = {};
  int64_t row = begin / inner, pos = begin % inner;
  for (int32_t i = ndim - 2; i >= 0; --i) {
    index[i] = row % shape_view.shape[i];
    row /= shape_view.shape[i];
  }
  int64_t offset[N];
  for (int k = 0; k < N; ++k) {
    offset[k] = 0;
    for (int32_t i = 0; i < ndim - 1; ++i) offset[k] += index[i] * views[k]->strides[i];
  }
  int64_t current = begin;
  while (current < end) {
    int64_t count = std::min(inner - pos, end - current);
    for (int k = 0; k < N; ++k)
      run.ptr[k] = static_cast<char*>(views[k]->data) + (offset[k] + pos * run.stride[k]) * itemsize[k];
    body(run, count);
    current += count;
    pos = 0;
    for (int32_t i = ndim - 2; i >= 0; --i) {  // odometer step over outer dims
      for (int k = 0; k < N; ++k) offset[k] += views[k]->strides[i];
      if (++index[i] < shape_view.shape[i]) break;
      for (int k = 0; k < N; ++k) offset[k] -= views[k]->strides[i] * index[i];
      index[i] = 0;
    }
  }
}

template <int N, typename Body>
void for_each_run(const nnp_view* const (&views)[N], int64_t cost_per_element, Body body) {
  const nnp_view& first = *views[0];
  if (first.ndim <= 1 && (first.ndim == 0 || first.shape[0] * cost_per_element < kParallelGrain)) {
    // One short run (the common case for small, coalesced tensors).
    const int64_t n = first.ndim == 0 ? 1 : first.shape[0];
    if (n == 0) return;
    Run<N> run;
    for (int k = 0; k < N; ++k) {
      run.ptr[k] = static_cast<char*>(views[k]->data);
      run.stride[k] = first.ndim == 0 ? 0 : views[k]->strides[0];
    }
    body(run, n);
    return;
  }
  parallel_for(view_numel(*views[0]), cost_per_element,
               [&](int64_t begin, int64_t end) { for_each_run_range<N>(views, begin, end, body); });
}

}  // namespace nnp::cpu
