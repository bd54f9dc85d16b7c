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

// "[2,3]"; used by every shape message.
std::string format_dims(const int64_t* values, int32_t ndim);
inline std::string format_dims(const Dims& dims) { return format_dims(dims.d, dims.ndim); }

// Row-major strides for a shape.
Dims contiguous_strides(const Dims& shape);

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
