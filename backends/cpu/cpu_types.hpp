// Element types of the CPU backend: how each dtype is stored, what type its
// arithmetic happens in, and a dispatch from nnp_dtype to a C++ type.
#pragma once

#include <nnp/convert.h>
#include <nnp/half.h>
#include <nnp/nnp.h>

#include <cstdint>
#include <type_traits>

namespace nnp::cpu {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// compute: the type arithmetic runs in (f16/bf16 compute in float).
template <typename T>
struct Traits {
  using compute = T;
  static compute load(T v) { return v; }
  static T store(compute v) { return v; }
};
template <>
struct Traits<Half> {
  using compute = float;
  static float load(Half v) { return nnp_f16_to_float(v.bits); }
  static Half store(float v) { return Half{nnp_float_to_f16(v)}; }
};
template <>
struct Traits<BFloat16> {
  using compute = float;
  static float load(BFloat16 v) { return nnp_bf16_to_float(v.bits); }
  // nnp_float_to_bf16's bits (round to nearest even, NaN kept quiet) with
  // a select instead of its branch, so that loops over bf16 vectorize.
  static BFloat16 store(float v) {
    uint32_t u;
    __builtin_memcpy(&u, &v, 4);
    const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet = (u >> 16) | 0x40u;
    return BFloat16{static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet : rounded)};
  }
};

template <typename T>
inline constexpr bool is_floating_v = std::is_floating_point_v<typename Traits<T>::compute>;

// Converts a compute value of one type to the storage of another, with C's
// conversions (floats truncate into integers, anything nonzero is true).
template <typename To, typename FromCompute>
inline To convert(FromCompute v) {
  using ToCompute = typename Traits<To>::compute;
  if constexpr (std::is_same_v<ToCompute, bool>)
    return Traits<To>::store(v != FromCompute(0));
  else if constexpr (std::is_floating_point_v<FromCompute> && std::is_integral_v<ToCompute>)
    // Through int64 as nnp/convert.h defines it (NaN and out-of-range values
    // included), as every backend does: -1.6 -> -1 -> 255 for u8.
    return Traits<To>::store(static_cast<ToCompute>(nnp_float_to_i64(static_cast<double>(v))));
  else
    return Traits<To>::store(static_cast<ToCompute>(v));
}

template <typename T>
struct Tag {
  using type = T;
};

template <typename F>
decltype(auto) dispatch(nnp_dtype dtype, F&& f) {
  switch (dtype) {
    case NNP_F32: return f(Tag<float>{});
    case NNP_F64: return f(Tag<double>{});
    case NNP_F16: return f(Tag<Half>{});
    case NNP_BF16: return f(Tag<BFloat16>{});
    case NNP_I64: return f(Tag<int64_t>{});
    case NNP_I32: return f(Tag<int32_t>{});
    case NNP_U8: return f(Tag<uint8_t>{});
    case NNP_I8: return f(Tag<int8_t>{});
    case NNP_I16: return f(Tag<int16_t>{});
    case NNP_U16: return f(Tag<uint16_t>{});
    case NNP_U32: return f(Tag<uint32_t>{});
    case NNP_U64: return f(Tag<uint64_t>{});
    default: return f(Tag<bool>{});
  }
}

inline size_t element_size(nnp_dtype dtype) {
  switch (dtype) {
    case NNP_F64:
    case NNP_I64:
    case NNP_U64: return 8;
    case NNP_F32:
    case NNP_I32:
    case NNP_U32: return 4;
    case NNP_F16:
    case NNP_BF16:
    case NNP_I16:
    case NNP_U16: return 2;
    default: return 1;
  }
}

}  // namespace nnp::cpu
