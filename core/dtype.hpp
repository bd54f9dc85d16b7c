// Element types: names as PyTorch spells them in messages, sizes, categories.
#pragma once

#include <nnp/nnp.h>

#include <cstddef>

namespace nnp::core {

inline bool is_valid_dtype(nnp_dtype dtype) { return dtype >= 0 && dtype < NNP_DTYPE_COUNT; }
const char* dtype_name(nnp_dtype dtype);     // nullptr when unknown
// static: a function-local constexpr array is copied onto the stack at
// every call, and tensor data pointers are computed with this at every op.
inline constexpr size_t kDtypeSizes[NNP_DTYPE_COUNT] = {4, 8, 2, 2, 8, 4, 1, 1, 1, 2, 2, 4, 8};
inline size_t dtype_size(nnp_dtype dtype) {  // 0 when unknown
  return is_valid_dtype(dtype) ? kDtypeSizes[dtype] : 0;
}
inline bool is_floating(nnp_dtype dtype) {
  return dtype == NNP_F32 || dtype == NNP_F64 || dtype == NNP_F16 || dtype == NNP_BF16;
}
inline bool is_integral(nnp_dtype dtype) {
  return dtype == NNP_I64 || dtype == NNP_I32 || dtype == NNP_U8 || dtype == NNP_I8 || dtype == NNP_I16 ||
         dtype == NNP_U16 || dtype == NNP_U32 || dtype == NNP_U64;
}

// Throws NNP_INVALID_ARGUMENT naming `what` when dtype is not a known one.
void check_dtype(const char* what, nnp_dtype dtype);

}  // namespace nnp::core
