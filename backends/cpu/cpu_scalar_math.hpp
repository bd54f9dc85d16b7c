// One element of the unary and binary ops, as the cpu backend computes it:
// shared by the elementwise kernels and the elementwise chain, so a fused
// chain gives the values the ops give one at a time.
#pragma once

#include <nnp/plugin.h>

#include <cmath>
#include <cstdint>
#include <nnp/elements.hpp>
#include <type_traits>

namespace nnp::cpu {

template <typename C>
inline C unary_value(nnp_unary_op op, C x) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case NNP_UNARY_NEG: return -x;
      case NNP_UNARY_ABS: return std::fabs(x);
      case NNP_UNARY_EXP: return std::exp(x);
      case NNP_UNARY_LOG: return std::log(x);
      case NNP_UNARY_SQRT: return std::sqrt(x);
      case NNP_UNARY_RSQRT: return C(1) / std::sqrt(x);
      case NNP_UNARY_SIN: return std::sin(x);
      case NNP_UNARY_COS: return std::cos(x);
      case NNP_UNARY_TANH: return std::tanh(x);
      case NNP_UNARY_SIGMOID: return C(1) / (C(1) + std::exp(-x));
      case NNP_UNARY_RELU: return std::isnan(x) ? x : (x > C(0) ? x : C(0));
      case NNP_UNARY_GELU: return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
      case NNP_UNARY_SILU: return x / (C(1) + std::exp(-x));
      case NNP_UNARY_ERF: return std::erf(x);
      case NNP_UNARY_ROUND: return std::nearbyint(x);  // ties to even, as torch.round
      default: return static_cast<C>((x > C(0)) - (x < C(0)));
    }
  } else if constexpr (std::is_same_v<C, bool>) {
    return op == NNP_UNARY_SIGN || op == NNP_UNARY_ABS || op == NNP_UNARY_RELU ? x
                                                                               : !x;  // never asked: core refuses bool
  } else {
    using U = std::make_unsigned_t<C>;
    switch (op) {
      case NNP_UNARY_NEG: return static_cast<C>(U(0) - static_cast<U>(x));
      case NNP_UNARY_ABS: return x < C(0) ? static_cast<C>(U(0) - static_cast<U>(x)) : x;
      case NNP_UNARY_RELU: return x > C(0) ? x : C(0);
      default: return static_cast<C>((x > C(0)) - (x < C(0)));
    }
  }
}

template <typename C>
inline C arithmetic(nnp_binary_op op, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case NNP_BINARY_ADD: return a + b;
      case NNP_BINARY_SUB: return a - b;
      case NNP_BINARY_MUL: return a * b;
      case NNP_BINARY_DIV: return a / b;
      case NNP_BINARY_POW: return std::pow(a, b);
      case NNP_BINARY_MAXIMUM: return (std::isnan(a) || std::isnan(b)) ? C(NAN) : (a > b ? a : b);
      default: return (std::isnan(a) || std::isnan(b)) ? C(NAN) : (a < b ? a : b);
    }
  } else if constexpr (std::is_same_v<C, bool>) {
    return op == NNP_BINARY_MAXIMUM ? (a || b) : (a && b);
  } else {
    // Wrapping arithmetic, as PyTorch's, in an unsigned type at least as
    // wide as unsigned int: 16-bit operands would otherwise be promoted to
    // int, whose products overflow.
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    switch (op) {
      case NNP_BINARY_ADD: return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
      case NNP_BINARY_SUB: return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
      case NNP_BINARY_MUL: return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
      case NNP_BINARY_POW:  // the core refuses negative integer exponents before this runs
        return static_cast<C>(
            elements::wrapping_pow(static_cast<uint64_t>(static_cast<int64_t>(a)), static_cast<int64_t>(b)));
      case NNP_BINARY_MAXIMUM: return a > b ? a : b;
      default: return a < b ? a : b;
    }
  }
}

}  // namespace nnp::cpu
