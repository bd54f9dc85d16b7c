// Flat, typed paths for the common elementwise case: out contiguous and each
// input the same contiguous layout, a scalar, or a contiguous block repeated
// along the leading dimensions (a bias row). Elements are addressed by one
// index (no per-element unravel over up to eight dimensions), loads and
// stores are typed rather than switched per element, and a launch carries two
// pointers and a period per input rather than whole 144-byte views, which
// shortens the launch itself. Values still pass through double as in the
// reference backend, so the results are the general path's bit for bit.
#pragma once

#include <nnp/elements.hpp>
#include <type_traits>

#include "gpu_backend.hpp"

namespace nnp::gpu::flat {

using namespace nnp::elements;

// An input read in out's flat order: element i is data[i % period]; period
// n is the same layout, 1 a scalar, otherwise a repeated trailing block.
struct Input {
  const void* data;
  int64_t period;
};

inline bool contiguous(const nnp_view& v) {
  int64_t expected = 1;
  for (int32_t i = v.ndim - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

// How v (shaped like out, broadcast dimensions with stride 0) reads in flat
// order, if it does: contiguous trailing dimensions, broadcast leading ones.
inline bool as_input(const nnp_view& v, Input* in) {
  int64_t period = 1;
  int32_t i = v.ndim - 1;
  for (; i >= 0; --i) {
    if (v.shape[i] == 1) continue;
    if (v.strides[i] != period) break;
    period *= v.shape[i];
  }
  for (; i >= 0; --i)
    if (v.shape[i] != 1 && v.strides[i] != 0) return false;
  *in = Input{v.data, period};
  return true;
}

template <nnp_dtype D>
using Dtype = std::integral_constant<nnp_dtype, D>;

// Calls f(Dtype<D>{}) for the floating dtypes; false for any other.
template <typename F>
bool for_float_dtype(nnp_dtype dtype, F&& f) {
  switch (dtype) {
    case NNP_F32: f(Dtype<NNP_F32>{}); return true;
    case NNP_F64: f(Dtype<NNP_F64>{}); return true;
    case NNP_F16: f(Dtype<NNP_F16>{}); return true;
    case NNP_BF16: f(Dtype<NNP_BF16>{}); return true;
    default: return false;
  }
}

// Typed loads and stores, converting as load_f / store_f do.
template <nnp_dtype D>
__device__ __forceinline__ double load(const void* p, int64_t i) {
  if constexpr (D == NNP_F32) return static_cast<const float*>(p)[i];
  if constexpr (D == NNP_F64) return static_cast<const double*>(p)[i];
  if constexpr (D == NNP_F16) return nnp_f16_to_float(static_cast<const uint16_t*>(p)[i]);
  if constexpr (D == NNP_BF16) return nnp_bf16_to_float(static_cast<const uint16_t*>(p)[i]);
}

template <nnp_dtype D>
__device__ __forceinline__ void store(void* p, int64_t i, double v) {
  if constexpr (D == NNP_F32) static_cast<float*>(p)[i] = static_cast<float>(v);
  if constexpr (D == NNP_F64) static_cast<double*>(p)[i] = v;
  if constexpr (D == NNP_F16) static_cast<uint16_t*>(p)[i] = nnp_float_to_f16(static_cast<float>(v));
  if constexpr (D == NNP_BF16) static_cast<uint16_t*>(p)[i] = nnp_float_to_bf16(static_cast<float>(v));
}

__device__ __forceinline__ int64_t at(const Input& in, int64_t i, int64_t n) {
  return in.period == n ? i : (in.period == 1 ? 0 : i % in.period);
}

#define NNP_FLAT_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)

template <nnp_dtype D>
__global__ void unary_kernel(nnp_unary_op op, const void* x, void* out, int64_t n) {
  NNP_FLAT_LOOP(i, n) store<D>(out, i, unary_f(op, load<D>(x, i)));
}

template <nnp_dtype D>
__global__ void binary_kernel(nnp_binary_op op, Input a, Input b, void* out, int64_t n) {
  NNP_FLAT_LOOP(i, n) store<D>(out, i, binary_f(op, load<D>(a.data, at(a, i, n)), load<D>(b.data, at(b, i, n))));
}

template <nnp_dtype D>
__global__ void fill_kernel(void* out, double value, int64_t n) {
  NNP_FLAT_LOOP(i, n) store<D>(out, i, value);
}

#undef NNP_FLAT_LOOP

}  // namespace nnp::gpu::flat
