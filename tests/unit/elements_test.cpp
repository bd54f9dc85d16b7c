// nnp/elements.hpp is the element code of the reference backend and of the
// GPU kernels (compiled by nvcc and hipcc from the same lines), so what it
// answers on the host is what every GPU answers: checked here without one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nnp/elements.hpp>

namespace {

using namespace nnp::elements;

nnp_view scalar_view(void* data, nnp_dtype dtype) {
  nnp_view v{};
  v.data = data;
  v.dtype = dtype;
  v.ndim = 0;
  return v;
}

TEST(Elements, NanAndOutOfRangeFloatsBecomeInt64MinLikeTheHost) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bad : {nan, 1e300, -1e300, 9223372036854775808.0}) {
    int64_t i64 = 0;
    store_f(scalar_view(&i64, NNP_I64), 0, bad);
    EXPECT_EQ(i64, INT64_MIN) << bad;
    int32_t i32 = 7;
    store_f(scalar_view(&i32, NNP_I32), 0, bad);
    EXPECT_EQ(i32, 0) << bad;  // INT64_MIN's low 32 bits
    double source = bad;
    EXPECT_EQ(load_i(scalar_view(&source, NNP_F64), 0), INT64_MIN) << bad;
  }
}

TEST(Elements, FloatsTruncateTowardZeroThenWrapIntoNarrowTypes) {
  uint8_t u8 = 0;
  store_f(scalar_view(&u8, NNP_U8), 0, -1.6);
  EXPECT_EQ(u8, 255);  // -1.6 -> -1 -> low 8 bits
  int32_t i32 = 0;
  store_f(scalar_view(&i32, NNP_I32), 0, 2.9);
  EXPECT_EQ(i32, 2);
  uint8_t flag = 9;
  store_f(scalar_view(&flag, NNP_BOOL), 0, -0.5);
  EXPECT_EQ(flag, 1);
  store_i(scalar_view(&flag, NNP_BOOL), 0, 0);
  EXPECT_EQ(flag, 0);
}

TEST(Elements, HalfPrecisionRoundsThroughFloat) {
  uint16_t bits = 0;
  store_f(scalar_view(&bits, NNP_F16), 0, 1.0 / 3.0);
  EXPECT_FLOAT_EQ(static_cast<float>(load_f(scalar_view(&bits, NNP_F16), 0)), 0.333251953125f);
  store_f(scalar_view(&bits, NNP_BF16), 0, 1.0 / 3.0);
  EXPECT_FLOAT_EQ(static_cast<float>(load_f(scalar_view(&bits, NNP_BF16), 0)), 0.333984375f);
}

TEST(Elements, OpBodiesFollowPyTorch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(binary_f(NNP_BINARY_MAXIMUM, nan, 1.0)));
  EXPECT_TRUE(std::isnan(binary_f(NNP_BINARY_MINIMUM, 1.0, nan)));
  EXPECT_TRUE(std::isnan(unary_f(NNP_UNARY_RELU, nan)));
  EXPECT_EQ(unary_f(NNP_UNARY_SIGN, nan), 0.0);
  EXPECT_NEAR(unary_f(NNP_UNARY_GELU, 1.0), 0.8413447460685429, 1e-15);
  EXPECT_EQ(unary_i(NNP_UNARY_NEG, INT64_MIN), INT64_MIN);  // wraps
  int64_t out = 0;
  EXPECT_TRUE(binary_i(NNP_BINARY_POW, 3, 4, &out));
  EXPECT_EQ(out, 81);
  EXPECT_FALSE(binary_i(NNP_BINARY_POW, 3, -1, &out));
  EXPECT_FALSE(binary_i(NNP_BINARY_DIV, 3, 1, &out));
  EXPECT_TRUE(compare(NNP_BINARY_LE, 2.0, 2.0));
}

// Squaring, not repeated multiplication: a hostile exponent costs 64 steps.
TEST(Elements, IntegerPowerWrapsAndTakesLogarithmicSteps) {
  EXPECT_EQ(wrapping_pow(3, INT64_MAX), 12297829382473034411ull);
  EXPECT_EQ(wrapping_pow(2, 70), 0u);
  EXPECT_EQ(wrapping_pow(7, 5), 16807u);
  EXPECT_EQ(wrapping_pow(5, 0), 1u);
}

TEST(Elements, MultiIndicesWalkRowMajor) {
  const int64_t shape[2] = {2, 3};
  int64_t index[2] = {0, 0};
  int64_t visited = 1;
  while (next_index(index, shape, 2)) {
    int64_t again[2];
    unravel(visited, shape, 2, again);
    EXPECT_EQ(again[0], index[0]);
    EXPECT_EQ(again[1], index[1]);
    ++visited;
  }
  EXPECT_EQ(visited, 6);
}

}  // namespace
