// Philox4x32-10 against the known-answer vector of Random123 (Salmon et al.)
// and the mapping from words to values every backend shares.
#include <gtest/gtest.h>
#include <nnp/philox.h>

#include <cmath>
#include <iostream>

TEST(Philox, KnownAnswerForZeroCounterAndKey) {
  nnp_philox_words r = nnp_philox4x32_10(0, 0);
  EXPECT_EQ(r.w[0], 0x6627e8d5u);
  EXPECT_EQ(r.w[1], 0xe169c58du);
  EXPECT_EQ(r.w[2], 0xbc57ac4cu);
  EXPECT_EQ(r.w[3], 0x9b00dbd8u);
}

TEST(Philox, ValuesStayInRange) {
  for (uint64_t counter = 0; counter < 10000; ++counter) {
    double u = nnp_philox_value(0, 123, counter, 0.0, 1.0);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    int64_t k = nnp_philox_int(nnp_philox4x32_10(counter, 123), -3, 4);
    ASSERT_GE(k, -3);
    ASSERT_LT(k, 4);
    ASSERT_TRUE(std::isfinite(nnp_philox_value(1, 123, counter, 0.0, 1.0)));
  }
}

// The logarithm and cosine philox.h computes itself (libm's differ between
// devices in the last bit) agree with the host's libm to within 2 ulp over
// every input Box-Muller can give them: u = (w + 1)/2^32 and t = w/2^32.
TEST(Philox, OwnLogAndCosineAreAccurate) {
  auto ulps = [](double got, double want) {
    double ulp = std::nextafter(std::abs(want), INFINITY) - std::abs(want);
    return std::abs(got - want) / ulp;
  };
  double worst_log = 0, worst_cos = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    // Spread over the words' range, with the ends included.
    uint32_t w = i < 4 ? static_cast<uint32_t>(i) : static_cast<uint32_t>(i * 2654435761u);
    if (i == 4) w = 0xffffffffu;
    double u = (static_cast<double>(w) + 1.0) / 4294967296.0, t = static_cast<double>(w) / 4294967296.0;
    if (u < 1.0) worst_log = std::max(worst_log, ulps(nnp_philox_log(u), std::log(u)));
    EXPECT_EQ(nnp_philox_log(1.0), 0.0);
    // The reference in long double, its argument reduced exactly too: 2 pi t
    // rounded first would be off by thousands of ulp near the zeros.
    const long double x = 4.0L * t, q = std::floor(x + 0.5L), a = (x - q) * 1.570796326794896619231321691639751L;
    const long double quarter[4] = {std::cos(a), -std::sin(a), -std::cos(a), std::sin(a)};
    const double want = static_cast<double>(quarter[static_cast<int>(q) & 3]);
    worst_cos = std::max(worst_cos, ulps(nnp_philox_cos_2pi(t), want));
  }
  EXPECT_LE(worst_log, 2.0);
  EXPECT_LE(worst_cos, 2.0);
  EXPECT_EQ(nnp_philox_cos_2pi(0.0), 1.0);
  EXPECT_EQ(nnp_philox_cos_2pi(0.5), -1.0);
  EXPECT_EQ(nnp_philox_cos_2pi(0.25), 0.0 * -1.0);
  std::cout << "worst error: log " << worst_log << " ulp, cos " << worst_cos << " ulp\n";
}
