// Philox4x32-10 against the known-answer vector of Random123 (Salmon et al.)
// and the mapping from words to values every backend shares.
#include <gtest/gtest.h>
#include <nnp/philox.h>

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
