// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>
#include <string>
#include <vector>

namespace nnp::test {

// Runs `body`, expecting an nnp::Error with `status` whose message contains
// every one of `fragments`.
template <typename Body>
void expect_error(Body&& body, nnp_status status, const std::vector<std::string>& fragments) {
  try {
    body();
    ADD_FAILURE() << "expected " << api().status_name(status) << ", but the call succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << api().status_name(e.status()) << ": " << e.what();
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

// A fixture with a fresh folder per test (named after the process and the
// test), removed after it.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("nnp_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

// Each element within tolerance * (1 + |want|) of the wanted one.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * (1 + std::fabs(want[i]))) << "element " << i;
}
inline void expect_close(const Tensor& got, const Tensor& want, double tolerance) {
  ASSERT_EQ(got.shape(), want.shape());
  expect_close(got.contiguous().to_vector<float>(), want.contiguous().to_vector<float>(), tolerance);
}

// The names of named tensors (parameters, buffers), in order.
inline std::vector<std::string> names_of(const NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, t] : named) out.push_back(name);
  return out;
}
inline std::vector<float> floats(const Tensor& t) { return t.to(Dtype::f32).to_vector<float>(); }

// A shell command's output (stdout and stderr: append 2>&1) and exit status.
struct CommandResult {
  std::string output;
  int status = -1;
};
inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The names of the op events one call of m on x leaves, in order.
inline std::vector<std::string> ops_of_call(nn::ModuleHandle& m, const Tensor& x) {
  profiler::Profiler p;
  m(x);
  std::vector<std::string> names;
  for (const profiler::Event& e : p.stop().events())
    if (e.kind == profiler::EventKind::Op) names.push_back(e.name);
  return names;
}

#ifdef NNP_CORPUS_DIR
// The path of the test plugin library `name` built into the hostile plugin corpus (tests/plugins/).
inline std::string corpus(const std::string& name) { return std::string(NNP_CORPUS_DIR) + "/lib" + name + ".so"; }
#endif

}  // namespace nnp::test
