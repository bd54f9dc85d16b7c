// nnplug run (tools/nnplug/cmd_run.cpp): an exported model run on inputs
// from .npy and safetensors files gives the module's own outputs (within
// 1e-5 compiled, exactly as written), writes them where asked under names
// that stay inside the output folder, and refuses bad inputs by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <string>

#include "../../tools/bench/workload_models.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;

class NnplugRun : public nnp::test::TempDirTest {
 protected:
  nnp::test::CommandResult run(const std::string& arguments) {
    return nnp::test::run_command(std::string(NNPLUG_BINARY) + " run " + arguments + " 2>&1");
  }
};

TEST_F(NnplugRun, AnExportedModelGivesTheModulesOutputs) {
  manual_seed(41);
  nn::ModuleHandle model = bench::w3_model();
  model.eval();
  onnx::export_model(model, {randn({3, 1, 28, 28})}, path("w3.onnx"));
  const Tensor x = randn({5, 1, 28, 28});
  save_npy(x, path("x.npy"));
  save_safetensors({{"input", x}, {"noise", randn({3})}}, path("x.safetensors"));
  Tensor want;
  {
    NoGradGuard no_grad;
    want = model(x);
  }
  const auto compiled = run(path("w3.onnx") + " --input " + path("x.npy") + " --output " + path("out") + " -v");
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  EXPECT_NE(compiled.output.find("last call: the captured plan"), std::string::npos) << compiled.output;
  EXPECT_NE(compiled.output.find("output: [5,10] f32"), std::string::npos) << compiled.output;
  nnp::test::expect_close(load_npy(path("out/output.npy")), want, 1e-5);
  // By the input's name from a safetensors file, as written, into one file.
  const auto eager = run(path("w3.onnx") + " --input input=" + path("x.safetensors") + " --output " +
                         path("y.safetensors") + " --no-compile");
  ASSERT_EQ(eager.status, 0) << eager.output;
  const NamedTensors written = load_safetensors(path("y.safetensors"));
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].first, "output");
  nnp::test::expect_close(written[0].second, want, 1e-5);  // an imported graph runs its plan (packed convolutions)
}

TEST_F(NnplugRun, OutputNamesStayInsideTheFolder) {
  nn::ModuleHandle model = bench::w1_model();
  model.eval();
  onnx::ExportOptions options;
  options.output_names = {"../escaped/logits"};
  onnx::export_model(model, {randn({2, 784})}, path("w1.onnx"), options);
  save_npy(randn({2, 784}), path("x.npy"));
  const auto r = run(path("w1.onnx") + " --input " + path("x.npy") + " --output " + path("out"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(path("out/.._escaped_logits.npy"))) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("escaped")));
}

TEST_F(NnplugRun, BadInputsAreRefusedByName) {
  nn::ModuleHandle model = bench::w1_model();
  onnx::export_model(model, {randn({2, 784})}, path("w1.onnx"));
  save_safetensors({{"a", randn({2, 784})}, {"b", randn({2, 784})}}, path("two.safetensors"));
  std::ofstream(path("cut.npy"), std::ios::binary) << std::string("\x93NUMPY\x01\x00\x10\x00{'descr'", 18);
  std::ofstream(path("x.csv")) << "1,2\n";
  struct Case {
    std::string arguments, says;
  };
  const Case cases[] = {
      {"--input " + path("cut.npy"), "cut.npy"},
      {"--input " + path("x.csv"), "give a .npy file or a .safetensors file"},
      {"--input " + path("two.safetensors"), "holds 2 tensors: name the one to take"},
      {"--input c=" + path("two.safetensors"), "has no tensor 'c' (it holds a, b)"},
      {"--input a=" + path("two.safetensors"), "the model's input 'input' is not given"},
      {"", "give each input with --input"},
  };
  for (const Case& c : cases) {
    const auto r = run(path("w1.onnx") + " " + c.arguments + " --output " + path("out"));
    EXPECT_NE(r.status, 0) << c.arguments;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.arguments << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(path("out"))) << "a refused run wrote its output folder";
}

}  // namespace
