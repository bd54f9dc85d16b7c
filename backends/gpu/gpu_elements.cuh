// Element access in device code: values read as double (floating dtypes) or
// int64 (integers, bool) at an element offset, as the reference backend
// does, so both compute the same things; f16/bf16 round through float as
// every backend must (nnp/half.h).
#pragma once

#include <nnp/half.h>
#include <nnp/plugin.h>

#include <cstdint>

namespace nnp::gpu {

__host__ __device__ inline bool is_float(nnp_dtype d) {
  return d == NNP_F32 || d == NNP_F64 || d == NNP_F16 || d == NNP_BF16;
}

__device__ inline double load_f(const nnp_view& v, int64_t o) {
  switch (v.dtype) {
    case NNP_F32: return static_cast<const float*>(v.data)[o];
    case NNP_F64: return static_cast<const double*>(v.data)[o];
    case NNP_F16: return nnp_f16_to_float(static_cast<const uint16_t*>(v.data)[o]);
    case NNP_BF16: return nnp_bf16_to_float(static_cast<const uint16_t*>(v.data)[o]);
    case NNP_I64: return static_cast<double>(static_cast<const int64_t*>(v.data)[o]);
    case NNP_I32: return static_cast<const int32_t*>(v.data)[o];
    default: return static_cast<const uint8_t*>(v.data)[o];  // U8, BOOL (0 or 1)
  }
}

__device__ inline int64_t load_i(const nnp_view& v, int64_t o) {
  switch (v.dtype) {
    case NNP_I64: return static_cast<const int64_t*>(v.data)[o];
    case NNP_I32: return static_cast<const int32_t*>(v.data)[o];
    case NNP_U8: return static_cast<const uint8_t*>(v.data)[o];
    case NNP_BOOL: return static_cast<const uint8_t*>(v.data)[o] ? 1 : 0;
    default: return static_cast<int64_t>(load_f(v, o));
  }
}

__device__ inline void store_f(const nnp_view& v, int64_t o, double x) {
  switch (v.dtype) {
    case NNP_F32: static_cast<float*>(v.data)[o] = static_cast<float>(x); break;
    case NNP_F64: static_cast<double*>(v.data)[o] = x; break;
    case NNP_F16: static_cast<uint16_t*>(v.data)[o] = nnp_float_to_f16(static_cast<float>(x)); break;
    case NNP_BF16: static_cast<uint16_t*>(v.data)[o] = nnp_float_to_bf16(static_cast<float>(x)); break;
    case NNP_I64: static_cast<int64_t*>(v.data)[o] = static_cast<int64_t>(x); break;
    case NNP_I32: static_cast<int32_t*>(v.data)[o] = static_cast<int32_t>(x); break;
    case NNP_U8: static_cast<uint8_t*>(v.data)[o] = static_cast<uint8_t>(static_cast<int64_t>(x)); break;
    default: static_cast<uint8_t*>(v.data)[o] = x != 0.0; break;
  }
}

__device__ inline void store_i(const nnp_view& v, int64_t o, int64_t x) {
  switch (v.dtype) {
    case NNP_I64: static_cast<int64_t*>(v.data)[o] = x; break;
    case NNP_I32: static_cast<int32_t*>(v.data)[o] = static_cast<int32_t>(x); break;
    case NNP_U8: static_cast<uint8_t*>(v.data)[o] = static_cast<uint8_t>(x); break;
    case NNP_BOOL: static_cast<uint8_t*>(v.data)[o] = x != 0; break;
    default: store_f(v, o, static_cast<double>(x)); break;
  }
}

// The row-major multi-index of `linear` over shape.
__device__ inline void unravel(int64_t linear, const int64_t* shape, int32_t ndim, int64_t* index) {
  for (int32_t i = ndim - 1; i >= 0; --i) {
    index[i] = linear % shape[i];
    linear /= shape[i];
  }
}

__device__ inline int64_t offset_of(const nnp_view& v, const int64_t* index) {
  int64_t offset = 0;
  for (int32_t i = 0; i < v.ndim; ++i) offset += index[i] * v.strides[i];
  return offset;
}

__host__ __device__ inline int64_t numel_of(const nnp_view& v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= v.shape[i];
  return n;
}

}  // namespace nnp::gpu
