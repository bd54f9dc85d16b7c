// Storing a double into host memory of any dtype (arange's values).
#pragma once

#include <nnp/convert.h>
#include <nnp/half.h>
#include <nnp/nnp.h>

#include <cstdint>

namespace nnp::core {

inline void store_host(nnp_dtype dtype, void* base, int64_t i, double v) {
  switch (dtype) {
    case NNP_F32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case NNP_F64: static_cast<double*>(base)[i] = v; break;
    case NNP_F16: static_cast<uint16_t*>(base)[i] = nnp_float_to_f16(static_cast<float>(v)); break;
    case NNP_BF16: static_cast<uint16_t*>(base)[i] = nnp_float_to_bf16(static_cast<float>(v)); break;
    case NNP_I64: static_cast<int64_t*>(base)[i] = nnp_float_to_i64(v); break;
    case NNP_I32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(nnp_float_to_i64(v)); break;
    case NNP_U8: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(nnp_float_to_i64(v)); break;
    case NNP_I8: static_cast<int8_t*>(base)[i] = static_cast<int8_t>(nnp_float_to_i64(v)); break;
    case NNP_I16: static_cast<int16_t*>(base)[i] = static_cast<int16_t>(nnp_float_to_i64(v)); break;
    case NNP_U16: static_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(nnp_float_to_i64(v)); break;
    case NNP_U32: static_cast<uint32_t*>(base)[i] = static_cast<uint32_t>(nnp_float_to_i64(v)); break;
    case NNP_U64: static_cast<uint64_t*>(base)[i] = static_cast<uint64_t>(nnp_float_to_i64(v)); break;
    default: static_cast<uint8_t*>(base)[i] = v != 0.0; break;
  }
}

}  // namespace nnp::core
