// Element access for the reference backend: every value is read as a double
// (floating dtypes) or an int64 (integers, bool) at a multi-index, the
// plainest way to be obviously right.
#pragma once

#include <nnp/convert.h>
#include <nnp/half.h>
#include <nnp/plugin.h>

#include <cstdint>

namespace nnp::reference {

inline bool is_float(nnp_dtype d) { return d == NNP_F32 || d == NNP_F64 || d == NNP_F16 || d == NNP_BF16; }

inline int64_t offset_of(const nnp_view& v, const int64_t* index) {
  int64_t offset = 0;
  for (int32_t i = 0; i < v.ndim; ++i) offset += index[i] * v.strides[i];
  return offset;
}

inline double load_f(const nnp_view& v, int64_t offset) {
  switch (v.dtype) {
    case NNP_F32: return static_cast<const float*>(v.data)[offset];
    case NNP_F64: return static_cast<const double*>(v.data)[offset];
    case NNP_F16: return nnp_f16_to_float(static_cast<const uint16_t*>(v.data)[offset]);
    case NNP_BF16: return nnp_bf16_to_float(static_cast<const uint16_t*>(v.data)[offset]);
    case NNP_I64: return static_cast<double>(static_cast<const int64_t*>(v.data)[offset]);
    case NNP_I32: return static_cast<const int32_t*>(v.data)[offset];
    case NNP_U8: return static_cast<const uint8_t*>(v.data)[offset];
    default: return static_cast<const bool*>(v.data)[offset] ? 1.0 : 0.0;
  }
}

inline int64_t load_i(const nnp_view& v, int64_t offset) {
  switch (v.dtype) {
    case NNP_I64: return static_cast<const int64_t*>(v.data)[offset];
    case NNP_I32: return static_cast<const int32_t*>(v.data)[offset];
    case NNP_U8: return static_cast<const uint8_t*>(v.data)[offset];
    case NNP_BOOL: return static_cast<const bool*>(v.data)[offset] ? 1 : 0;
    default: return nnp_float_to_i64(load_f(v, offset));
  }
}

inline void store_f(const nnp_view& v, int64_t offset, double x) {
  switch (v.dtype) {
    case NNP_F32: static_cast<float*>(v.data)[offset] = static_cast<float>(x); break;
    case NNP_F64: static_cast<double*>(v.data)[offset] = x; break;
    // Through float first, as every device rounds: double -> float -> 16 bits.
    case NNP_F16: static_cast<uint16_t*>(v.data)[offset] = nnp_float_to_f16(static_cast<float>(x)); break;
    case NNP_BF16: static_cast<uint16_t*>(v.data)[offset] = nnp_float_to_bf16(static_cast<float>(x)); break;
    case NNP_I64: static_cast<int64_t*>(v.data)[offset] = nnp_float_to_i64(x); break;
    case NNP_I32: static_cast<int32_t*>(v.data)[offset] = static_cast<int32_t>(nnp_float_to_i64(x)); break;
    case NNP_U8: static_cast<uint8_t*>(v.data)[offset] = static_cast<uint8_t>(nnp_float_to_i64(x)); break;
    default: static_cast<bool*>(v.data)[offset] = x != 0.0; break;
  }
}

inline void store_i(const nnp_view& v, int64_t offset, int64_t x) {
  switch (v.dtype) {
    case NNP_I64: static_cast<int64_t*>(v.data)[offset] = x; break;
    case NNP_I32: static_cast<int32_t*>(v.data)[offset] = static_cast<int32_t>(x); break;
    case NNP_U8: static_cast<uint8_t*>(v.data)[offset] = static_cast<uint8_t>(x); break;
    case NNP_BOOL: static_cast<bool*>(v.data)[offset] = x != 0; break;
    default: store_f(v, offset, static_cast<double>(x)); break;
  }
}

// Steps a row-major multi-index over shape; false once it wraps around.
inline bool next_index(int64_t* index, const int64_t* shape, int32_t ndim) {
  for (int32_t i = ndim - 1; i >= 0; --i) {
    if (++index[i] < shape[i]) return true;
    index[i] = 0;
  }
  return false;
}

inline int64_t numel_of(const nnp_view& v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= v.shape[i];
  return n;
}

}  // namespace nnp::reference
