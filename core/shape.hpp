// Shapes and strides of up to NNP_MAX_DIMS dimensions, held inline so that
// op paths never allocate for them.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>
#include <string>

namespace nnp::core {

struct Dims {
  int32_t ndim = 0;
  int64_t d[NNP_MAX_DIMS] = {};

  Dims() = default;
  // Validates a caller's shape array (count, negative sizes) for `what`.
  static Dims from_user(const char* what, const int64_t* values, int32_t ndim);
  int64_t operator[](int32_t i) const { return d[i]; }
  int64_t& operator[](int32_t i) { return d[i]; }
  int64_t numel() const;
  bool operator==(const Dims& other) const;
  bool operator!=(const Dims& other) const { return !(*this == other); }
};

// Inline: every op makes and compares shapes, and an out-of-line Dims
// returned through the stack was read back before its stores had landed.
inline int64_t Dims::numel() const {
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; ++i) n *= d[i];
  return n;
}

inline bool Dims::operator==(const Dims& other) const {
  if (ndim != other.ndim) return false;
  for (int32_t i = 0; i < ndim; ++i)
    if (d[i] != other.d[i]) return false;
  return true;
}

// "[2,3]"; used by every shape message.
std::string format_dims(const int64_t* values, int32_t ndim);
inline std::string format_dims(const Dims& dims) { return format_dims(dims.d, dims.ndim); }

// Row-major strides for a shape, written over the first shape.ndim entries
// of `strides` (the rest stay as they are: zero in a fresh Dims). In place
// for the tensor every op makes: a Dims built on the stack and copied is
// read back, 16 bytes at a time, before its 8-byte stores have landed.
inline void set_contiguous_strides(const Dims& shape, Dims& strides) {
  strides.ndim = shape.ndim;
  int64_t running = 1;
  for (int32_t i = shape.ndim - 1; i >= 0; --i) {
    strides.d[i] = running;
    running *= shape.d[i] > 0 ? shape.d[i] : 1;
  }
}

inline Dims contiguous_strides(const Dims& shape) {
  Dims strides;
  set_contiguous_strides(shape, strides);
  return strides;
}

// Maps a possibly negative dim into [0, ndim) or throws naming `what`.
int32_t wrap_dim(const char* what, int64_t dim, int32_t ndim);

// Whether the product of the non-zero sizes fits int64 (so numel and every
// contiguous stride do too), setting *numel when it does.
bool sizes_fit(const int64_t* sizes, int32_t ndim, int64_t* numel);
// Throws NNP_INVALID_ARGUMENT "<what>: shape [..] is too large ..." unless
// sizes_fit.
void require_sizes_fit(const char* what, const int64_t* sizes, int32_t ndim);

// numel * itemsize, or throws when it overflows.
size_t checked_bytes(const char* what, const Dims& shape, size_t itemsize);

}  // namespace nnp::core
