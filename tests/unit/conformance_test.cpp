// Every kernel of the cpu backend against the reference backend.
#include <gtest/gtest.h>

#include <sstream>

#include "conformance_kit.hpp"

TEST(Conformance, CpuMatchesReference) {
  nnp::conformance::Report report = nnp::conformance::run("cpu");
  std::ostringstream table;
  nnp::conformance::print(report, table, false);
  EXPECT_EQ(report.failed, 0) << table.str();
  EXPECT_GT(report.passed, 1000) << "the kit ran fewer cases than it should";
}

TEST(Conformance, ReferenceMatchesItself) {
  nnp::conformance::Report report = nnp::conformance::run("reference");
  EXPECT_EQ(report.failed, 0);
}
