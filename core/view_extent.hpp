// What a kernel view (nnp_view) covers: its element count, how many elements
// its bytes span from its first (strides are never negative), and whether it
// is dense row-major. Shared by the kernel fallbacks (what to copy) and the
// captured step's tape (what a recorded call touches).
#pragma once

#include <nnp/plugin.h>

#include <cstdint>

namespace nnp::core {

inline int64_t view_numel(const nnp_view& v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v.ndim; ++d) n *= v.shape[d];
  return n;
}

// Elements from data to the last one reached, that one included (0 when empty).
inline int64_t view_span(const nnp_view& v) {
  int64_t last = 0;
  for (int32_t d = 0; d < v.ndim; ++d) {
    if (v.shape[d] == 0) return 0;
    last += v.strides[d] * (v.shape[d] - 1);
  }
  return last + 1;
}

// Row-major without gaps (dimensions of size 1 may have any stride).
inline bool view_is_contiguous(const nnp_view& v) {
  int64_t expected = 1;
  for (int32_t d = v.ndim - 1; d >= 0; --d) {
    if (v.shape[d] != 1 && v.strides[d] != expected) return false;
    expected *= v.shape[d];
  }
  return true;
}

}  // namespace nnp::core
