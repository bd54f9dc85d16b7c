#include "shape.hpp"

#include <limits>

#include "error.hpp"

namespace nnp::core {

Dims Dims::from_user(const char* what, const int64_t* values, int32_t ndim) {
  if (ndim < 0 || ndim > NNP_MAX_DIMS)
    fail(NNP_INVALID_ARGUMENT, what, ": ", ndim, " dimensions requested; nnplug supports 0 to ", NNP_MAX_DIMS);
  if (ndim > 0 && values == nullptr) fail(NNP_INVALID_ARGUMENT, what, ": shape is NULL but ndim is ", ndim);
  Dims dims;
  dims.ndim = ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    if (values[i] < 0)
      fail(NNP_INVALID_ARGUMENT, what, ": shape ", format_dims(values, ndim), " has a negative size at dimension ", i);
    dims.d[i] = values[i];
  }
  require_sizes_fit(what, values, ndim);
  return dims;
}

bool sizes_fit(const int64_t* sizes, int32_t ndim, int64_t* numel) {
  int64_t product = 1;
  bool zero = false;
  for (int32_t i = 0; i < ndim; ++i) {
    if (sizes[i] == 0) {
      zero = true;
      continue;
    }
    if (sizes[i] < 0 || __builtin_mul_overflow(product, sizes[i], &product)) return false;
  }
  if (numel) *numel = zero ? 0 : product;
  return true;
}

void require_sizes_fit(const char* what, const int64_t* sizes, int32_t ndim) {
  if (!sizes_fit(sizes, ndim, nullptr))
    fail(NNP_INVALID_ARGUMENT, what, ": shape ", format_dims(sizes, ndim),
         " is too large: its sizes multiply past 2^63-1 elements");
}

std::string format_dims(const int64_t* values, int32_t ndim) {
  std::string out = "[";
  for (int32_t i = 0; i < ndim; ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "]";
}

int32_t wrap_dim(const char* what, int64_t dim, int32_t ndim) {
  int64_t extent = ndim > 0 ? ndim : 1;  // a 0-d tensor accepts dim 0 and -1
  if (dim < -extent || dim >= extent)
    fail(NNP_INVALID_ARGUMENT, what, ": dimension ", dim, " is out of range for a tensor of ", ndim,
         " dimensions (expected ", -extent, " to ", extent - 1, ")");
  return static_cast<int32_t>(dim < 0 ? dim + extent : dim);
}

size_t checked_bytes(const char* what, const Dims& shape, size_t itemsize) {
  // Multiplications checked by the processor's overflow flag, not by a
  // division per dimension: this runs for every tensor an op makes.
  uint64_t total = itemsize;
  for (int32_t i = 0; i < shape.ndim; ++i) {
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(shape.d[i]), &total) ||
        total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(NNP_OUT_OF_MEMORY, what, ": shape ", format_dims(shape), " is too large to allocate");
  }
  return static_cast<size_t>(total);
}

}  // namespace nnp::core
