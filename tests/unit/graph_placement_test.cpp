// Graph mode on backends that compile graphs (nnp_backend 1.24: capability,
// compile, execute, release): the test plugins wholegraph (claims every node
// it can run: the W3 CNN and the digits MLP compile into one call) and
// claimant (claims MatMul, Gemm, Add and Relu and has no kernels: the rest
// runs on cpu, with copies at the boundaries the profiler shows).
#include <gtest/gtest.h>

#include <nnp/compile.hpp>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>

#include "../../tools/bench/workload_models.hpp"
#include "test_support.hpp"

namespace graph_placement_test {

using namespace nnp;

const Device kCpu("cpu");

Device plugin_device(const std::string& name) {
  (void)api().load_plugin((std::string(NNP_CORPUS_DIR) + "/lib" + name + ".so").c_str());
  return Device(name);
}

nn::ModuleHandle digits_mlp() {
  return nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 64, "out_features": 32}, {"type": "nn.ReLU"},
    {"type": "nn.Dropout", "p": 0.1}, {"type": "nn.Linear", "in_features": 32, "out_features": 10}]})");
}

struct CompiledRun {
  Tensor output;                        // on cpu
  std::vector<profiler::Event> events;  // of the second call
  std::string explain;
};

// The model compiled on `device` for x, called twice (the first call makes
// the plan); the second call profiled.
CompiledRun compiled_on(nn::ModuleHandle model, const Device& device, const Tensor& x) {
  model.eval();
  model.to(device);
  const Tensor there = x.to(device);
  nn::ModuleHandle fast = compile(model, {there});
  NoGradGuard no_grad;
  (void)fast(there);
  profiler::Profiler recording;
  Tensor y = fast(there);
  CompiledRun run;
  run.events = recording.stop().events();
  EXPECT_EQ(y.device().name(), device.name()) << "the output lies where the module's would";
  run.output = y.to(kCpu);
  run.explain = compile_explain(fast);
  return run;
}

Tensor eager_on_cpu(nn::ModuleHandle model, const Tensor& x) {
  model.eval();
  NoGradGuard no_grad;
  return model(x);
}

std::vector<std::string> named(const std::vector<profiler::Event>& events, profiler::EventKind kind,
                               const std::string& prefix) {
  std::vector<std::string> out;
  for (const profiler::Event& e : events)
    if (e.kind == kind && e.name.rfind(prefix, 0) == 0) out.push_back(e.name);
  return out;
}

// W3's CNN compiled on `device`, its output checked against eager cpu's.
CompiledRun w3_compiled_on(const Device& device) {
  manual_seed(3);
  nn::ModuleHandle model = bench::w3_model();
  const Tensor x = randn({4, 1, 28, 28});
  const Tensor want = eager_on_cpu(model, x);
  CompiledRun run = compiled_on(model, device, x);
  test::expect_close(run.output, want, 1e-5);
  return run;
}

TEST(GraphPlacement, AWholeGraphCompilerRunsTheW3CnnInOneCall) {
  const CompiledRun run = w3_compiled_on(plugin_device("wholegraph"));
  EXPECT_NE(run.explain.find("wholegraph:0 runs Conv, Relu, MaxPool, Conv, Relu, MaxPool, Flatten, Gemm, Identity "
                             "(9 nodes) as one executable"),
            std::string::npos)
      << run.explain;
  EXPECT_EQ(named(run.events, profiler::EventKind::Op, "compiled on wholegraph:0").size(), 1u);
  EXPECT_TRUE(named(run.events, profiler::EventKind::Copy, "").empty()) << "nothing crosses to cpu";
  EXPECT_TRUE(named(run.events, profiler::EventKind::Op, "conv2d").empty()) << "no op runs outside the executable";
}

TEST(GraphPlacement, AClaimantOfProductsAddsAndReluLeavesTheRestToCpu) {
  const CompiledRun run = w3_compiled_on(plugin_device("claimant"));
  for (const char* line :
       {"claimant:0 runs Relu (1 node) as one executable", "claimant:0 runs Gemm, Identity (2 nodes) as one executable",
        "cpu:0 runs 0, 3, Flatten, maxpool, maxpool_1 (5 nodes, not claimed by claimant:0)",
        "3 values copied between claimant:0 and cpu:0 per call"})
    EXPECT_NE(run.explain.find(line), std::string::npos) << line << "\n" << run.explain;
  EXPECT_EQ(named(run.events, profiler::EventKind::Op, "compiled on claimant:0").size(), 3u);
  // Each value that crosses is copied once a call, each copy an event of the device.
  const std::vector<std::string> copies = named(run.events, profiler::EventKind::Copy, "copy ");
  EXPECT_EQ(copies.size(), 6u) << "the input and two ReLUs' inputs and outputs, the Gemm's input:\n"
                               << testing::PrintToString(copies);
  for (const profiler::Event& e : run.events)
    if (e.kind == profiler::EventKind::Copy) {
      EXPECT_EQ(e.device, "claimant:0") << e.name;
    }
}

TEST(GraphPlacement, TheDigitsMlpCompilesWholeOnEither) {
  for (const char* backend : {"claimant", "wholegraph"}) {
    SCOPED_TRACE(backend);
    const Device d = plugin_device(backend);
    manual_seed(5);
    nn::ModuleHandle model = digits_mlp();
    const Tensor x = rand({16, 64});
    const Tensor want = eager_on_cpu(model, x);
    const CompiledRun run = compiled_on(model, d, x);
    test::expect_close(run.output, want, 1e-5);
    EXPECT_NE(run.explain.find(d.name() + " runs Gemm, Relu, Gemm, Identity (4 nodes) as one executable"),
              std::string::npos)
        << run.explain;
  }
}

// A plan is compiled for the shapes of the call that made it, and made
// again for a call of other shapes; new weights make it again too.
TEST(GraphPlacement, OtherShapesAndNewWeightsMakeThePlanAgain) {
  const Device d = plugin_device("claimant");
  manual_seed(6);
  nn::ModuleHandle model = digits_mlp();
  model.eval();
  const Tensor x = rand({8, 64});
  nn::ModuleHandle reference = digits_mlp();
  reference.load_state_dict(model.state_dict());
  model.to(d);
  nn::ModuleHandle fast = compile(model, {x.to(d)});
  NoGradGuard no_grad;
  for (int64_t batch : {8, 3, 8}) {
    const Tensor xb = x.slice(0, 0, batch).contiguous();
    test::expect_close(fast(xb.to(d)).to(kCpu), eager_on_cpu(reference, xb), 1e-5);
  }
  // Weights written after compiling (an optimizer's step) are what runs next.
  Tensor w = model.named_parameters()[0].second;
  w.mul_(0.5);
  Tensor w_ref = reference.named_parameters()[0].second;
  w_ref.mul_(0.5);
  test::expect_close(fast(x.to(d)).to(kCpu), eager_on_cpu(reference, x), 1e-5);
}

// The user names the device that runs what the backend leaves: another
// backend (reference here), or the device itself (its own kernels, no copies).
TEST(GraphPlacement, TheFallbackIsTheDeviceTheUserNames) {
  const Device d = plugin_device("claimant");
  manual_seed(3);
  nn::ModuleHandle model = bench::w3_model();
  model.eval();
  const Tensor x = randn({2, 1, 28, 28});
  const Tensor want = eager_on_cpu(model, x);
  model.to(d);
  for (const char* fallback : {"reference", "claimant"}) {
    SCOPED_TRACE(fallback);
    CompileOptions options;
    options.fallback = fallback;
    nn::ModuleHandle fast = compile(model, {x.to(d)}, options);
    NoGradGuard no_grad;
    test::expect_close(fast(x.to(d)).to(kCpu), want, 1e-5);
    const std::string explain = compile_explain(fast);
    EXPECT_NE(explain.find(Device(fallback).name() + " runs 0, 3, Flatten, maxpool, maxpool_1 (5 nodes, not claimed by "
                                                     "claimant:0)"),
              std::string::npos)
        << explain;
    EXPECT_EQ(explain.find("values copied") == std::string::npos, std::string(fallback) == "claimant") << explain;
  }
  CompileOptions nowhere;
  nowhere.fallback = "nowhere";
  test::expect_error([&] { compile(model, {x.to(d)}, nowhere); }, NNP_NOT_FOUND, {"nowhere"});
}

// A backend that claims nodes its compile then refuses fails the call with
// its own message, naming the backend and the slot: never a wrong result.
TEST(GraphPlacement, AClaimTheBackendCannotKeepFailsNamingIt) {
  const Device d = plugin_device("boaster");
  manual_seed(3);
  nn::ModuleHandle model = bench::w3_model();
  model.eval();
  model.to(d);
  const Tensor x = randn({2, 1, 28, 28}).to(d);
  nn::ModuleHandle fast = compile(model, {x});
  NoGradGuard no_grad;
  test::expect_error([&] { (void)fast(x); }, NNP_INVALID_ARGUMENT,
                     {"compile: asked to run a Conv node it did not claim"});
}

}  // namespace graph_placement_test
