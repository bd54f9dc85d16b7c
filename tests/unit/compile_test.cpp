// nnp::compile (core/graph/compiled_module.cpp): the compiled module gives
// the original's outputs within 1e-5 (W1, W3 and W7's models included) by
// its captured plan, shares the original's parameters and state dict, and
// runs the original itself wherever the plan's assumptions fail - other
// input sizes or dtypes, training mode, a gradient wanted, a module that
// cannot be captured - with explain() saying which; weights written since
// the capture are captured again.
#include <gtest/gtest.h>

#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <nnp/profiler.hpp>
#include <nnp/quantize_model.hpp>
#include <string>
#include <vector>

#include "../../tools/bench/workload_models.hpp"
#include "compile_support.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Compile, TheWorkloadModelsGiveTheirEagerOutputs) { nnp::test::expect_workloads_compile_to_eager(Device::cpu()); }

// On another device the capture is made there: the imported plan moves to
// the inputs' device (the GPU test runs the same on cuda).
TEST(Compile, TheWorkloadModelsGiveTheirEagerOutputsOnTheReferenceDevice) {
  nnp::test::expect_workloads_compile_to_eager(Device("reference"));
}

TEST(Compile, AChainOfElementwiseOpsRunsAsOneKernelAndTheStateIsTheOriginals) {
  struct Chain : nn::Module {
    Tensor bias;
    Chain() : Module("Chain") { bias = register_parameter("bias", from_vector<float>({0.5, -1, 2})); }
    Tensor forward(const Tensor& x) override { return ((x * 2.0 + bias).relu() - x).tanh() * bias; }
  };
  auto impl = std::make_shared<Chain>();
  nn::ModuleHandle model(impl);
  model.eval();
  const Tensor x = randn({4, 3});
  nn::ModuleHandle compiled = compile(model, {x});
  // The state is the original's, under _orig_mod as PyTorch's OptimizedModule.
  const auto state = compiled.state_dict();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].first, "_orig_mod.bias");
  EXPECT_EQ(compiled.named_parameters()[0].second.get(), impl->bias.get());
  NoGradGuard no_grad;
  nnp::test::expect_close(compiled(x), model(x), 1e-6);
  const std::vector<std::string> ops = nnp::test::ops_of_call(compiled, x);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "elementwise_chain"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "mul"), 0) << "the chain's ops ran one by one";
  EXPECT_TRUE(contains(compile_explain(compiled), "1 chain of elementwise ops")) << compile_explain(compiled);
  // A weight written since the capture: captured again, the new value seen.
  impl->bias.copy_(from_vector<float>({1, 1, 1}));
  nnp::test::expect_close(compiled(x), model(x), 1e-6);
  EXPECT_TRUE(contains(compile_explain(compiled), "last call: the captured plan"));
}

// A dynamically quantized model's range is found on the device (nnp_kernels
// 1.29's dynamic_quantize_linear): inputs of other ranges replay the same
// captured plan, which reads nothing on the host to check, and each gives
// the eager outputs exactly.
TEST(Compile, ADynamicallyQuantizedModelReplaysItsPlanForInputsOfEveryRange) {
  nn::ModuleHandle model = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "w", "value": "w", "shape": [6, 4, 3, 3], "dtype": "u8"},
                  {"key": "wz", "value": "wz", "shape": [], "dtype": "u8"}],
      "nodes": [{"op": "DynamicQuantizeLinear", "inputs": ["x"], "outputs": ["q", "qs", "qz"]},
                {"op": "ConvInteger", "inputs": ["q", "w", "qz", "wz"], "outputs": ["acc"]},
                {"op": "Cast", "inputs": ["acc"], "outputs": ["accf"], "attrs": {"to": 1}},
                {"op": "Mul", "inputs": ["accf", "qs"], "outputs": ["y"]}]})");
  {
    NoGradGuard no_grad;
    model.buffers()[0].copy_(randint(0, 256, {6, 4, 3, 3}, Dtype::i64).to(Dtype::u8));
    model.buffers()[1].fill_(131.0);
  }
  model.eval();
  nn::ModuleHandle compiled = compile(model, {randn({1, 4, 9, 9})});
  NoGradGuard no_grad;
  for (double scale : {1.0, 5.0, 0.01, 300.0}) {
    const Tensor x = randn({1, 4, 9, 9}) * scale + scale / 3;
    EXPECT_EQ(compiled(x).to_vector<float>(), model(x).to_vector<float>()) << "inputs scaled by " << scale;
    const std::string explain = compile_explain(compiled);
    EXPECT_TRUE(contains(explain, "last call: the captured plan")) << explain;
    EXPECT_FALSE(contains(explain, "captured again")) << explain;
  }
}

// Asked with gradients on while the parameters require grad, explain shows
// the plan a call without gradients runs (here its weight packed once, which
// a call with gradients could not use), not the program as written.
TEST(Compile, ExplainShowsThePlanThatCallsWithoutGradientsRun) {
  // A Linear as an ONNX file writes it (Gemm), whose capture is a MatMul of a weight.
  const std::string path = ::testing::TempDir() + "compile_explain_linear.onnx";
  onnx::export_model(nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Linear", "in_features": 64, "out_features": 64}, {"type": "nn.ReLU"}]})"),
                     {randn({2, 64})}, path);
  nn::ModuleHandle model = onnx::load(path);
  model.eval();
  nn::ModuleHandle compiled = compile(model, {randn({8, 64})});
  ASSERT_TRUE(is_grad_enabled());
  const std::string text = compile_explain(compiled);
  EXPECT_TRUE(contains(text, "fused with the bias Add and ReLU")) << text;
  EXPECT_FALSE(contains(text, "runs as written")) << text;
}

// An imported ONNX file keeps its initializers' names ("shape_1") on its
// GraphModule; the capture's export must not also give one to a constant it
// traces (the checker refused the duplicate and W7's file ran uncaptured).
// The capture traces the GraphModule's own plan: a value its fused nodes
// derive from the input (attention's keys, the projections' shared input)
// must be traced too, not written as a constant of the example input's
// values, so the captured plan is checked on other inputs.
TEST(Compile, AnImportedOnnxFileIsCapturedWhateverItsConstantsAreNamed) {
  manual_seed(5);
  const std::string path = ::testing::TempDir() + "compile_imported_w7.onnx";
  onnx::export_model(nnp::bench::w7_model(), {randn({2, 64, 128})}, path);
  nn::ModuleHandle model = onnx::load(path);
  model.eval();
  nn::ModuleHandle compiled = compile(model, {randn({3, 64, 128})});
  EXPECT_FALSE(contains(compile_explain(compiled), "runs eagerly")) << compile_explain(compiled);
  NoGradGuard no_grad;
  for (int64_t batch : {3, 5}) {
    const Tensor x = randn({batch, 64, 128});
    nnp::test::expect_close(compiled(x), model(x), 1e-5);
    EXPECT_TRUE(contains(compile_explain(compiled), "last call: the captured plan")) << compile_explain(compiled);
  }
}

TEST(Compile, WhereTheGuardsFailTheOriginalRunsAndExplainSaysWhy) {
  nn::ModuleHandle model = bench::w1_model();
  model.eval();
  nn::ModuleHandle compiled = compile(model, {randn({8, 784})});
  auto explained_eager = [&](const char* why) {
    const std::string text = compile_explain(compiled);
    EXPECT_TRUE(contains(text, "last call: eagerly")) << text;
    EXPECT_TRUE(contains(text, why)) << text;
  };
  {
    NoGradGuard no_grad;
    // Features other than the capture's: the original refuses them itself.
    nnp::test::expect_error([&] { compiled(randn({8, 100})); }, NNP_SHAPE_MISMATCH, {});
    explained_eager("input 0 is f32 [8,100]");
    const Tensor x64 = randn({2, 784}).to(Dtype::f64);
    model.to(Dtype::f64);  // a new dtype everywhere: captured again for the new weights
    nnp::test::expect_close(compiled(x64).to(Dtype::f32), model(x64).to(Dtype::f32), 1e-6);
    EXPECT_TRUE(contains(compile_explain(compiled), "captured: inputs f64")) << compile_explain(compiled);
    model.to(Dtype::f32);
    // Training mode: the capture is of eval mode.
    compiled.train();
    compiled(randn({2, 784}));
    explained_eager("training mode");
    compiled.eval();
    compiled(randn({2, 784}));
    EXPECT_TRUE(contains(compile_explain(compiled), "last call: the captured plan"));
  }
  // Grad mode with parameters that require grad: the original, and its
  // parameters get the gradient.
  const Tensor x = randn({2, 784});
  compiled(x).sum().backward();
  explained_eager("require grad");
  EXPECT_TRUE(model.named_parameters()[0].second.grad().defined());
}

// The int8 layers travel through the capture as nodes of their own domain
// (nn.quantized) and come back as themselves: a quantized model compiles,
// and gives its eager values exactly.
TEST(Compile, QuantizedModelsAreCapturedAsTheirLayers) {
  manual_seed(23);
  nn::ModuleHandle dynamic = quantization::quantize_dynamic(bench::w1_model());
  auto run = quantization::prepare(bench::w3_model());
  for (int i = 0; i < 3; ++i) run.model()(randn({8, 1, 28, 28}));
  nn::ModuleHandle static_int8 = run.convert();
  for (auto [model, x] : {std::pair{dynamic, randn({6, 784})}, std::pair{static_int8, randn({5, 1, 28, 28})}}) {
    model.eval();
    nn::ModuleHandle compiled = compile(model, {x});
    NoGradGuard no_grad;
    EXPECT_EQ(compiled(x).to_vector<float>(), model(x).to_vector<float>());
    const std::string text = compile_explain(compiled);
    EXPECT_TRUE(contains(text, "last call: the captured plan")) << text;
  }
}

TEST(Compile, AModuleThatCannotBeCapturedRunsItselfAndSaysWhy) {
  struct Quantizing : nn::Module {
    Quantizing() : Module("Quantizing") {}
    Tensor forward(const Tensor& x) override { return quantize_per_tensor(x, 0.1, 0, kQInt8).dequantize(); }
  };
  auto impl = std::make_shared<Quantizing>();
  nn::ModuleHandle model(impl);
  model.eval();
  const Tensor x = randn({3, 4});
  nn::ModuleHandle compiled = compile(model, {x});
  NoGradGuard no_grad;
  EXPECT_EQ(compiled(x).to_vector<float>(), model(x).to_vector<float>());
  const std::string text = compile_explain(compiled);
  EXPECT_TRUE(contains(text, "runs eagerly: it cannot be captured")) << text;
  EXPECT_TRUE(contains(text, "quantize_per_tensor")) << text;
  nnp::test::expect_error([&] { compile_explain(model); }, NNP_INVALID_ARGUMENT, {"not a module compile made"});
  nnp::test::expect_error([&] { compile(model, {}); }, NNP_INVALID_ARGUMENT, {"at least one example input"});
}

}  // namespace
