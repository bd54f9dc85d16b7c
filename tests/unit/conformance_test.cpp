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

// A case's detail quotes the backend's error text, and the backend's name
// is the user's or the plugin's: the report prints every string escaped, so
// no control byte reaches the terminal and no line can be forged.
TEST(Conformance, TheReportEscapesWhatTheBackendSaid) {
  nnp::conformance::Report report;
  report.backend = "vendor\x1b]0;title\x07";
  nnp::conformance::Case c;
  c.op = "add\r";
  c.dtype = "f32";
  c.layout = "contiguous\n  ok    forged";
  c.detail = "backend: \x1b[2Jcleared\nFAIL nothing";
  report.cases.push_back(c);
  report.failed = 1;
  report.note = "note\x1b[31m";
  std::ostringstream out;
  nnp::conformance::print(report, out, true);
  const std::string text = out.str();
  for (char byte : text)
    EXPECT_TRUE(byte == '\n' || (byte >= 0x20 && byte < 0x7f)) << "a raw control byte " << int(byte) << " in:\n" << text;
  EXPECT_NE(text.find("backend: \\x1b[2Jcleared\\x0aFAIL nothing"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n  ok    forged"), std::string::npos) << text;
}
