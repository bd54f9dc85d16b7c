// How the cpu backend cuts a threaded loop (backends/cpu/cpu_loops.hpp,
// compiled into this test with the thread pool): GuidedParts covers its
// units exactly once in order, its parts shrink (so a faster core can take
// more of them), it honours the least part and gives each thread a part;
// parallel_for visits every index once whatever the pool's size.
#include "cpu_loops.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

namespace {

using nnp::cpu::GuidedParts;

// Fails unless parts cut [0, units) into consecutive non-empty ranges.
void expect_cover(const GuidedParts& parts, int64_t units) {
  ASSERT_GE(parts.count(), 1);
  if (parts.count() == 1) {
    EXPECT_EQ(parts.begin(0), 0);
    EXPECT_EQ(parts.end(0), units);
    return;
  }
  EXPECT_EQ(parts.begin(0), 0);
  EXPECT_EQ(parts.end(parts.count() - 1), units);
  for (int64_t p = 0; p < parts.count(); ++p) {
    EXPECT_LT(parts.begin(p), parts.end(p)) << "part " << p << " of " << units << " units is empty";
    if (p > 0) {
      EXPECT_EQ(parts.begin(p), parts.end(p - 1));
    }
  }
}

TEST(CpuParallel, GuidedPartsCoverTheUnitsOnceAndShrink) {
  for (int threads : {2, 3, 4, 16})
    for (int64_t units : {2, 3, 7, 43, 128, 2048, 262144, 1000003})
      for (int64_t least : {1, 3, 100}) {
        SCOPED_TRACE(::testing::Message() << threads << " threads, " << units << " units, least " << least);
        const GuidedParts parts(units, threads, least);
        expect_cover(parts, units);
        // one part a thread at least, where each can have a unit
        EXPECT_GE(parts.count(), std::min<int64_t>(threads, units));
        // never larger than the part before (truncation may add one)
        for (int64_t p = 1; p < parts.count(); ++p)
          EXPECT_LE(parts.end(p) - parts.begin(p), parts.end(p - 1) - parts.begin(p - 1) + 1) << "part " << p;
        // no part but the last below the least (bounded so each thread has one)
        const int64_t floor = std::clamp<int64_t>(least, 1, std::max<int64_t>(1, units / threads));
        for (int64_t p = 0; p + 1 < parts.count(); ++p) EXPECT_GE(parts.end(p) - parts.begin(p), floor) << "part " << p;
        // the count is what the least part affords, beyond a geometric run
        EXPECT_LE(parts.count(), units / floor + 2 * threads * 40);
      }
}

TEST(CpuParallel, GuidedPartsOfW7sProductsStartLargeAndEndSmall) {
  // 2048 rows in units of 48 on two threads, each part at least 3 units:
  // a quarter of what is left each time, so the two first parts hold half.
  const GuidedParts parts(43, 2, 3);
  expect_cover(parts, 43);
  const int64_t expected[] = {0, 11, 19, 25, 30, 33, 36, 39, 42, 43};
  ASSERT_EQ(parts.count(), 9);
  for (int64_t p = 0; p < parts.count(); ++p) EXPECT_EQ(parts.begin(p), expected[p]) << "part " << p;
  EXPECT_EQ(parts.end(8), 43);
}

TEST(CpuParallel, OneThreadOrOneUnitIsOnePart) {
  for (int64_t units : {0, 1, 5, 1000}) {
    const GuidedParts parts(units, 1, 1);
    EXPECT_EQ(parts.count(), 1);
    EXPECT_EQ(parts.end(0), units);
  }
  const GuidedParts one(1, 8, 1);
  EXPECT_EQ(one.count(), 1);
  EXPECT_EQ(one.end(0), 1);
}

TEST(CpuParallel, ParallelForVisitsEveryIndexOnce) {
  for (int64_t total : {1, 2, 5, 1000, 100000, 3000001})
    for (int64_t cost : {1, 16, 100000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(total));
      nnp::cpu::parallel_for(total, cost, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, total);
        for (int64_t i = begin; i < end; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
      });
      int64_t wrong = 0;
      for (auto& s : seen) wrong += s.load() != 1;
      EXPECT_EQ(wrong, 0) << total << " items of cost " << cost;
    }
}

}  // namespace
