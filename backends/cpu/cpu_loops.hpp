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
#include <cmath>
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

// The parts a threaded loop over [0, units) is cut into (guided
// scheduling): each part takes about 1/(2 x threads) of the units still
// left, so the first parts are large and the last ones small, and a thread
// whose core runs slower ends up taking fewer of them (the pool hands parts
// out in order as threads come free). Cores do run unevenly: on a shared
// machine a core's other hardware thread or a neighbouring guest can take a
// fifth of its speed for seconds, and with one part a thread every threaded
// op then waits for the slow core's half. Where they run evenly the large
// first parts keep the cost of cutting small: W7's products in 16 equal
// parts ran 1-2.5 % slower than in halves, in these parts as fast.
//
// Part p begins where units x (1 - 1/(2 x threads))^p are left, until a
// part would be smaller than min_units; the rest is cut in parts of
// min_units. Computed per part, nothing stored: the count is whatever the
// work affords. min_units is at most a thread's share, so every thread has
// a part where there are as many units.
class GuidedParts {
 public:
  GuidedParts(int64_t units, int threads, int64_t min_units) : units_(std::max<int64_t>(units, 0)) {
    if (threads <= 1 || units_ < 2) {
      count_ = 1;
      return;
    }
    min_ = std::clamp<int64_t>(min_units, 1, std::max<int64_t>(1, units_ / threads));
    keep_ = 1.0 - 0.5 / threads;
    // Geometric parts while a part (what is left / (2 x threads)) >= min_.
    const double first = static_cast<double>(units_) * (1.0 - keep_);
    geometric_ = first < static_cast<double>(min_)
                     ? 0
                     : static_cast<int64_t>(std::log(static_cast<double>(min_) / first) / std::log(keep_)) + 1;
    tail_ = geometric_begin(geometric_);
    count_ = geometric_ + (units_ - tail_ + min_ - 1) / min_;
  }
  int64_t count() const { return count_; }
  int64_t begin(int64_t part) const {
    if (count_ == 1) return part == 0 ? 0 : units_;
    if (part <= geometric_) return geometric_begin(part);
    return std::min(units_, tail_ + (part - geometric_) * min_);
  }
  int64_t end(int64_t part) const { return part + 1 >= count_ ? units_ : begin(part + 1); }

 private:
  int64_t geometric_begin(int64_t part) const {
    return units_ - static_cast<int64_t>(static_cast<double>(units_) * std::pow(keep_, static_cast<double>(part)));
  }
  int64_t units_, count_ = 1, geometric_ = 0, min_ = 1;
  int64_t tail_ = 0;  // where the parts of min_ units begin
  double keep_ = 1.0;
};

// The least work (in kParallelGrain's units) a part of a loop cut finer
// than one part a thread does.
constexpr int64_t kGuidedPartCost = 4 * kParallelGrain;

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
  const GuidedParts parts(total, threads, (kGuidedPartCost + cost_per_item - 1) / std::max<int64_t>(1, cost_per_item));
  pool.run(parts.count(), [&](int64_t part) { body(parts.begin(part), parts.end(part)); });
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
