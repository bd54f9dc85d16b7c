// The cpu backend's SIMD bf16 runs (backends/cpu/cpu_bf16_vector.cpp,
// compiled in) give the scalar Traits<BFloat16>'s bits on every bf16 value:
// NaNs (signalling ones made quiet), infinities, both zeros, subnormals,
// and at every run length up to two vectors and a tail. ctest runs this
// twice: as the CPU is, and capped to AVX2 (NNP_CPU_ISA=avx2), so both the
// AVX-512 and the AVX2 paths are checked on an AVX-512 machine. The bf16
// softmax row (cpu_softmax_row.cpp) must give the f32 row's result rounded.
#include "cpu_bf16_vector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu_isa.hpp"
#include "cpu_softmax_row.hpp"
#include "cpu_types.hpp"

namespace {

using nnp::cpu::BFloat16;
using nnp::cpu::Traits;

float value_of(uint16_t bits) { return Traits<BFloat16>::load(BFloat16{bits}); }
uint16_t bits_of(float v) { return Traits<BFloat16>::store(v).bits; }

// Every bf16 bit pattern once, in an order that mixes signs and classes.
std::vector<uint16_t> every_bf16() {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i * 40503u);  // odd: a permutation
  return all;
}

// The run lengths to try: every tail of up to two vectors of 16, and long.
const int64_t kLengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 65536};

std::string where(int64_t n, size_t i) { return "length " + std::to_string(n) + ", element " + std::to_string(i); }

bool simd_present() { return nnp::cpu::cpu_isa().avx2 || nnp::cpu::cpu_isa().avx512f; }

TEST(CpuBf16Vector, WideningGivesTheValueOfEveryBf16) {
  if (!simd_present()) GTEST_SKIP() << "this CPU (or NNP_CPU_ISA) has neither AVX2 nor AVX-512";
  const std::vector<uint16_t> all = every_bf16();
  for (int64_t n : kLengths) {
    std::vector<float> out(static_cast<size_t>(n) + 1, 7.0f);
    ASSERT_TRUE(nnp::cpu::bf16_to_f32_run(all.data(), out.data(), n));
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      uint32_t got, want;
      const float expected = value_of(all[i]);
      std::memcpy(&got, &out[i], 4);
      std::memcpy(&want, &expected, 4);
      ASSERT_EQ(got, want) << where(n, i);
    }
    EXPECT_EQ(out[static_cast<size_t>(n)], 7.0f) << "wrote past the run of " << n;
  }
}

TEST(CpuBf16Vector, RoundingGivesTheScalarBitsOfAnyF32) {
  if (!simd_present()) GTEST_SKIP() << "this CPU (or NNP_CPU_ISA) has neither AVX2 nor AVX-512";
  std::mt19937 rng(3);
  std::vector<float> in(65536);
  for (size_t i = 0; i < in.size(); ++i) {
    // Random bit patterns, and every tie (low half 0x8000) of every bf16.
    uint32_t word = i % 2 == 0 ? static_cast<uint32_t>(rng()) : (static_cast<uint32_t>(i) << 16) | 0x8000u;
    std::memcpy(&in[i], &word, 4);
  }
  for (int64_t n : kLengths) {
    std::vector<uint16_t> out(static_cast<size_t>(n) + 1, 0xABCD);
    ASSERT_TRUE(nnp::cpu::f32_to_bf16_run(in.data(), out.data(), n));
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) ASSERT_EQ(out[i], bits_of(in[i])) << where(n, i);
    EXPECT_EQ(out[static_cast<size_t>(n)], 0xABCD) << "wrote past the run of " << n;
  }
}

TEST(CpuBf16Vector, ReluGivesTheScalarBitsOfEveryBf16) {
  if (!simd_present()) GTEST_SKIP() << "this CPU (or NNP_CPU_ISA) has neither AVX2 nor AVX-512";
  const std::vector<uint16_t> all = every_bf16();
  for (int64_t n : kLengths) {
    std::vector<uint16_t> out(static_cast<size_t>(n) + 1, 0xABCD);
    ASSERT_TRUE(nnp::cpu::bf16_relu_run(all.data(), out.data(), n));
    for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
      const float x = value_of(all[i]);
      ASSERT_EQ(out[i], bits_of(x < 0.0f ? 0.0f : x)) << where(n, i) << " (bits " << all[i] << ")";
    }
    EXPECT_EQ(out[static_cast<size_t>(n)], 0xABCD) << "wrote past the run of " << n;
  }
}

TEST(CpuBf16Vector, ArithmeticGivesTheScalarBitsAgainstARunAndAScalar) {
  if (!simd_present()) GTEST_SKIP() << "this CPU (or NNP_CPU_ISA) has neither AVX2 nor AVX-512";
  const std::vector<uint16_t> a = every_bf16();
  std::vector<uint16_t> b(a.size());
  std::mt19937 rng(5);
  for (uint16_t& x : b) x = static_cast<uint16_t>(rng());
  const nnp_binary_op ops[] = {NNP_BINARY_ADD, NNP_BINARY_SUB, NNP_BINARY_MUL, NNP_BINARY_DIV};
  for (nnp_binary_op op : ops) {
    auto apply = [op](float x, float y) {
      switch (op) {
        case NNP_BINARY_ADD: return x + y;
        case NNP_BINARY_SUB: return x - y;
        case NNP_BINARY_MUL: return x * y;
        default: return x / y;
      }
    };
    for (int64_t b_step : {int64_t{1}, int64_t{0}}) {
      for (int64_t n : kLengths) {
        std::vector<uint16_t> out(static_cast<size_t>(n) + 1, 0xABCD);
        ASSERT_TRUE(nnp::cpu::bf16_arithmetic_run(op, a.data(), b.data(), b_step, out.data(), n));
        for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
          const float y = value_of(b[b_step == 0 ? 0 : i]);
          ASSERT_EQ(out[i], bits_of(apply(value_of(a[i]), y)))
              << "op " << op << ", b_step " << b_step << ", " << where(n, i);
        }
        EXPECT_EQ(out[static_cast<size_t>(n)], 0xABCD) << "wrote past the run of " << n;
      }
    }
  }
  std::vector<uint16_t> out(4);
  EXPECT_FALSE(nnp::cpu::bf16_arithmetic_run(NNP_BINARY_POW, a.data(), b.data(), 1, out.data(), 4));
}

TEST(CpuBf16Vector, SoftmaxRowGivesTheF32RowRounded) {
  if (!nnp::cpu::cpu_isa().avx2 || !nnp::cpu::cpu_isa().fma) GTEST_SKIP() << "the softmax rows need AVX2 and FMA";
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (int64_t n : {1, 5, 8, 13, 16, 64, 67, 300}) {
    for (bool log : {false, true}) {
      std::vector<uint16_t> x(static_cast<size_t>(n));
      for (uint16_t& v : x) v = bits_of(normal(rng));
      if (n > 3) x[2] = 0xFF80;  // -inf: a masked score, exp 0
      std::vector<float> wide(x.size()), expected(x.size()), scratch(x.size());
      for (size_t i = 0; i < x.size(); ++i) wide[i] = value_of(x[i]);
      ASSERT_TRUE(nnp::cpu::softmax_row_f32(wide.data(), n, log, expected.data()));
      std::vector<uint16_t> out(x.size() + 1, 0xABCD);
      ASSERT_TRUE(nnp::cpu::softmax_row_bf16(x.data(), n, log, out.data(), scratch.data()));
      for (size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(out[i], bits_of(expected[i])) << (log ? "log " : "") << where(n, i);
      EXPECT_EQ(out[x.size()], 0xABCD) << "wrote past the row of " << n;
    }
  }
  // A NaN or +inf, or a row all -inf, goes to the caller's exact path untouched.
  const std::vector<uint16_t> bad[] = {{0x3F80, 0x7FC0}, {0x7F80, 0}, {0xFF80, 0xFF80}};
  for (const std::vector<uint16_t>& row : bad) {
    std::vector<uint16_t> out(row.size(), 0xABCD);
    std::vector<float> scratch(row.size());
    EXPECT_FALSE(nnp::cpu::softmax_row_bf16(row.data(), 2, false, out.data(), scratch.data()));
    EXPECT_EQ(out[0], 0xABCD);
  }
}

}  // namespace
