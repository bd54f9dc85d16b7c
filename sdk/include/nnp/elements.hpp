// nnp/elements.hpp - element code written once for host and device: reading
// and writing any dtype at a strided offset as double (floating dtypes) or
// int64 (integers, bool), walking multi-indices, and the scalar body of every
// unary and binary op. The reference backend and the GPU backends (nvcc,
// hipcc) compute with these, so they agree by construction; a vendor's
// backend may use them for its own slow paths.
//
// Conversions follow nnp/half.h (f16/bf16 round through float) and
// nnp/convert.h (floats to integers truncate; NaN and out-of-range values
// give INT64_MIN, then the low bits for narrower types).
#pragma once

#include <math.h>
#include <nnp/convert.h>
#include <nnp/half.h>
#include <nnp/plugin.h>
#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define NNP_HOST_DEVICE __host__ __device__ inline
#else
#define NNP_HOST_DEVICE inline
#endif

namespace nnp::elements {

NNP_HOST_DEVICE bool is_float(nnp_dtype d) { return d == NNP_F32 || d == NNP_F64 || d == NNP_F16 || d == NNP_BF16; }
// Without <cmath>'s std::isnan, which device code lacks.
NNP_HOST_DEVICE bool is_nan(double x) { return x != x; }

NNP_HOST_DEVICE int64_t numel_of(const nnp_view& v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= v.shape[i];
  return n;
}

NNP_HOST_DEVICE int64_t offset_of(const nnp_view& v, const int64_t* index) {
  int64_t offset = 0;
  for (int32_t i = 0; i < v.ndim; ++i) offset += index[i] * v.strides[i];
  return offset;
}

// Steps a row-major multi-index over shape; false once it wraps around.
NNP_HOST_DEVICE bool next_index(int64_t* index, const int64_t* shape, int32_t ndim) {
  for (int32_t i = ndim - 1; i >= 0; --i) {
    if (++index[i] < shape[i]) return true;
    index[i] = 0;
  }
  return false;
}

// The row-major multi-index of `linear` over shape.
NNP_HOST_DEVICE void unravel(int64_t linear, const int64_t* shape, int32_t ndim, int64_t* index) {
  for (int32_t i = ndim - 1; i >= 0; --i) {
    index[i] = linear % shape[i];
    linear /= shape[i];
  }
}

// ---- loads and stores (bool is stored as one byte, 0 or 1) ----

NNP_HOST_DEVICE double load_f(const nnp_view& v, int64_t o) {
  switch (v.dtype) {
    case NNP_F32: return static_cast<const float*>(v.data)[o];
    case NNP_F64: return static_cast<const double*>(v.data)[o];
    case NNP_F16: return nnp_f16_to_float(static_cast<const uint16_t*>(v.data)[o]);
    case NNP_BF16: return nnp_bf16_to_float(static_cast<const uint16_t*>(v.data)[o]);
    case NNP_I64: return static_cast<double>(static_cast<const int64_t*>(v.data)[o]);
    case NNP_I32: return static_cast<const int32_t*>(v.data)[o];
    case NNP_U8: return static_cast<const uint8_t*>(v.data)[o];
    case NNP_I8: return static_cast<const int8_t*>(v.data)[o];
    case NNP_I16: return static_cast<const int16_t*>(v.data)[o];
    case NNP_U16: return static_cast<const uint16_t*>(v.data)[o];
    case NNP_U32: return static_cast<const uint32_t*>(v.data)[o];
    case NNP_U64: return static_cast<double>(static_cast<const uint64_t*>(v.data)[o]);
    default: return static_cast<const uint8_t*>(v.data)[o] ? 1.0 : 0.0;
  }
}

NNP_HOST_DEVICE int64_t load_i(const nnp_view& v, int64_t o) {
  switch (v.dtype) {
    case NNP_I64: return static_cast<const int64_t*>(v.data)[o];
    case NNP_I32: return static_cast<const int32_t*>(v.data)[o];
    case NNP_U8: return static_cast<const uint8_t*>(v.data)[o];
    case NNP_I8: return static_cast<const int8_t*>(v.data)[o];
    case NNP_I16: return static_cast<const int16_t*>(v.data)[o];
    case NNP_U16: return static_cast<const uint16_t*>(v.data)[o];
    case NNP_U32: return static_cast<const uint32_t*>(v.data)[o];
    // u64 travels as int64's bits (values past 2^63 read negative); the
    // binary ops compare and divide it as unsigned (binary_u64).
    case NNP_U64: return static_cast<int64_t>(static_cast<const uint64_t*>(v.data)[o]);
    case NNP_BOOL: return static_cast<const uint8_t*>(v.data)[o] ? 1 : 0;
    default: return nnp_float_to_i64(load_f(v, o));
  }
}

NNP_HOST_DEVICE void store_f(const nnp_view& v, int64_t o, double x) {
  switch (v.dtype) {
    case NNP_F32: static_cast<float*>(v.data)[o] = static_cast<float>(x); break;
    case NNP_F64: static_cast<double*>(v.data)[o] = x; break;
    // Through float first, as every device rounds: double -> float -> 16 bits.
    case NNP_F16: static_cast<uint16_t*>(v.data)[o] = nnp_float_to_f16(static_cast<float>(x)); break;
    case NNP_BF16: static_cast<uint16_t*>(v.data)[o] = nnp_float_to_bf16(static_cast<float>(x)); break;
    case NNP_I64: static_cast<int64_t*>(v.data)[o] = nnp_float_to_i64(x); break;
    case NNP_I32: static_cast<int32_t*>(v.data)[o] = static_cast<int32_t>(nnp_float_to_i64(x)); break;
    case NNP_U8: static_cast<uint8_t*>(v.data)[o] = static_cast<uint8_t>(nnp_float_to_i64(x)); break;
    case NNP_I8: static_cast<int8_t*>(v.data)[o] = static_cast<int8_t>(nnp_float_to_i64(x)); break;
    case NNP_I16: static_cast<int16_t*>(v.data)[o] = static_cast<int16_t>(nnp_float_to_i64(x)); break;
    case NNP_U16: static_cast<uint16_t*>(v.data)[o] = static_cast<uint16_t>(nnp_float_to_i64(x)); break;
    case NNP_U32: static_cast<uint32_t*>(v.data)[o] = static_cast<uint32_t>(nnp_float_to_i64(x)); break;
    case NNP_U64: static_cast<uint64_t*>(v.data)[o] = static_cast<uint64_t>(nnp_float_to_i64(x)); break;
    default: static_cast<uint8_t*>(v.data)[o] = x != 0.0 ? 1 : 0; break;
  }
}

NNP_HOST_DEVICE void store_i(const nnp_view& v, int64_t o, int64_t x) {
  switch (v.dtype) {
    case NNP_I64: static_cast<int64_t*>(v.data)[o] = x; break;
    case NNP_I32: static_cast<int32_t*>(v.data)[o] = static_cast<int32_t>(x); break;
    case NNP_U8: static_cast<uint8_t*>(v.data)[o] = static_cast<uint8_t>(x); break;
    case NNP_I8: static_cast<int8_t*>(v.data)[o] = static_cast<int8_t>(x); break;
    case NNP_I16: static_cast<int16_t*>(v.data)[o] = static_cast<int16_t>(x); break;
    case NNP_U16: static_cast<uint16_t*>(v.data)[o] = static_cast<uint16_t>(x); break;
    case NNP_U32: static_cast<uint32_t*>(v.data)[o] = static_cast<uint32_t>(x); break;
    case NNP_U64: static_cast<uint64_t*>(v.data)[o] = static_cast<uint64_t>(x); break;
    case NNP_BOOL: static_cast<uint8_t*>(v.data)[o] = x != 0 ? 1 : 0; break;
    default: store_f(v, o, static_cast<double>(x)); break;
  }
}

// ---- scalar op bodies ----

NNP_HOST_DEVICE double unary_f(nnp_unary_op op, double x) {
  switch (op) {
    case NNP_UNARY_NEG: return -x;
    case NNP_UNARY_ABS: return fabs(x);
    case NNP_UNARY_EXP: return exp(x);
    case NNP_UNARY_LOG: return log(x);
    case NNP_UNARY_SQRT: return sqrt(x);
    case NNP_UNARY_RSQRT: return 1.0 / sqrt(x);
    case NNP_UNARY_SIN: return sin(x);
    case NNP_UNARY_COS: return cos(x);
    case NNP_UNARY_TANH: return tanh(x);
    case NNP_UNARY_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case NNP_UNARY_RELU: return is_nan(x) ? x : (x > 0 ? x : 0.0);
    case NNP_UNARY_GELU: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case NNP_UNARY_SILU: return x / (1.0 + exp(-x));
    case NNP_UNARY_ERF: return erf(x);
    case NNP_UNARY_ROUND: return nearbyint(x);               // the default rounding mode: ties to even
    default: return static_cast<double>((x > 0) - (x < 0));  // SIGN; NaN gives 0
  }
}

// Integer negation wraps (two's complement), as PyTorch's does.
NNP_HOST_DEVICE int64_t unary_i(nnp_unary_op op, int64_t x) {
  switch (op) {
    case NNP_UNARY_NEG: return static_cast<int64_t>(0ull - static_cast<uint64_t>(x));
    case NNP_UNARY_ABS: return x < 0 ? static_cast<int64_t>(0ull - static_cast<uint64_t>(x)) : x;
    case NNP_UNARY_RELU: return x > 0 ? x : 0;
    default: return (x > 0) - (x < 0);
  }
}

// Works on doubles (floating dtypes) and int64 (the rest) alike.
template <typename V>
NNP_HOST_DEVICE bool compare(nnp_binary_op op, V a, V b) {
  switch (op) {
    case NNP_BINARY_EQ: return a == b;
    case NNP_BINARY_NE: return a != b;
    case NNP_BINARY_LT: return a < b;
    case NNP_BINARY_LE: return a <= b;
    case NNP_BINARY_GT: return a > b;
    default: return a >= b;
  }
}

// maximum and minimum propagate NaN, as PyTorch's do.
NNP_HOST_DEVICE double binary_f(nnp_binary_op op, double a, double b) {
  switch (op) {
    case NNP_BINARY_ADD: return a + b;
    case NNP_BINARY_SUB: return a - b;
    case NNP_BINARY_MUL: return a * b;
    case NNP_BINARY_DIV: return a / b;
    case NNP_BINARY_POW: return pow(a, b);
    case NNP_BINARY_MAXIMUM: return is_nan(a) || is_nan(b) ? NAN : (a > b ? a : b);
    default: return is_nan(a) || is_nan(b) ? NAN : (a < b ? a : b);  // MINIMUM
  }
}

// base^exponent (exponent >= 0) modulo 2^64 by squaring: a huge exponent
// costs 64 steps, not 2^63. Narrower types take the low bits, which is their
// own wrapping power.
NNP_HOST_DEVICE uint64_t wrapping_pow(uint64_t base, int64_t exponent) {
  uint64_t result = 1;
  for (uint64_t e = static_cast<uint64_t>(exponent); e > 0; e >>= 1) {
    if (e & 1u) result *= base;
    base *= base;
  }
  return result;
}

// Integer arithmetic wraps (two's complement), as PyTorch's does; false for
// what integers cannot do (a negative power, division).
NNP_HOST_DEVICE bool binary_i(nnp_binary_op op, int64_t a, int64_t b, int64_t* out) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case NNP_BINARY_ADD: *out = static_cast<int64_t>(ua + ub); return true;
    case NNP_BINARY_SUB: *out = static_cast<int64_t>(ua - ub); return true;
    case NNP_BINARY_MUL: *out = static_cast<int64_t>(ua * ub); return true;
    case NNP_BINARY_MAXIMUM: *out = a > b ? a : b; return true;
    case NNP_BINARY_MINIMUM: *out = a < b ? a : b; return true;
    case NNP_BINARY_POW:
      if (b < 0) return false;
      *out = static_cast<int64_t>(wrapping_pow(ua, b));
      return true;
    default: return false;
  }
}

// u64's unary ops on its int64 bits: abs and relu are the identity, sign is
// 0 or 1, neg wraps.
NNP_HOST_DEVICE int64_t unary_u64(nnp_unary_op op, int64_t x) {
  switch (op) {
    case NNP_UNARY_NEG: return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
    case NNP_UNARY_SIGN: return x != 0 ? 1 : 0;
    default: return x;  // abs, relu, round
  }
}

// An order key for u64 carried as int64's bits: compared as int64, the keys
// order the values as unsigned.
NNP_HOST_DEVICE int64_t u64_order(int64_t x) { return static_cast<int64_t>(static_cast<uint64_t>(x) ^ (uint64_t{1} << 63)); }

// u64 travels through load_i as int64's bits: maximum and minimum see them
// unsigned (comparisons: compare on uint64_t); the wrapping arithmetic is
// the same bits either way.
NNP_HOST_DEVICE bool binary_u64(nnp_binary_op op, int64_t a, int64_t b, int64_t* out) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case NNP_BINARY_MAXIMUM: *out = static_cast<int64_t>(ua > ub ? ua : ub); return true;
    case NNP_BINARY_MINIMUM: *out = static_cast<int64_t>(ua < ub ? ua : ub); return true;
    case NNP_BINARY_POW: *out = static_cast<int64_t>(wrapping_pow(ua, b)); return true;  // every exponent is >= 0
    default: return binary_i(op, a, b, out);
  }
}

}  // namespace nnp::elements
