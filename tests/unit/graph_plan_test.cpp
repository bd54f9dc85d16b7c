// Graph mode's inference plan (core/graph/): a GraphModule called without
// gradients runs its program with constant subexpressions of its tensors
// computed once (constant folding) and unneeded nodes left out (dead code),
// and gives what the program as written gives; a weight written since the
// plan was made is seen; a call that needs the weights' gradients runs the
// program as written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nnp/memory.hpp>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>
#include <string>
#include <vector>

#include "onnx_runtime_client.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;
namespace F = nnp::nn::functional;

// y = x @ transpose(w + w), plus a node nothing reads (exp of x). The sum
// is a tensor of its own (a transpose alone would be a view of w, which
// shows w's new values whether or not the plan is made again).
const char* const kProgram = R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
    "tensors": [{"key": "w", "value": "w", "shape": [3, 4], "dtype": "f32", "parameter": true}],
    "nodes": [{"op": "Add", "inputs": ["w", "w"], "outputs": ["ww"]},
              {"op": "Transpose", "inputs": ["ww"], "outputs": ["wt"], "attrs": {"perm": [1, 0]}},
              {"op": "Exp", "inputs": ["x"], "outputs": ["unused"]},
              {"op": "MatMul", "inputs": ["x", "wt"], "outputs": ["y"]}]})";

struct Fixture {
  nn::ModuleHandle net = nn::GraphModule(kProgram);
  Tensor w = net.named_parameters()[0].second;
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6, 7, 8}).reshape({2, 4});
  Fixture() { set_weights(0.5f); }
  void set_weights(float scale) {
    std::vector<float> v(12);
    for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i) - 1.0f;
    NoGradGuard no_grad;
    w.copy_(from_vector<float>(v).reshape({3, 4}));
  }
  std::vector<float> expected() const {
    NoGradGuard no_grad;
    return x.matmul((w + w).t()).contiguous().to_vector<float>();
  }
};

// The cpu backend packs weights (ABI 1.21) only for its AVX-512 kernels.
bool cpu_has_avx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") != 0;
#else
  return false;
#endif
}

bool ran(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

TEST(GraphPlan, WithoutGradientsWhatTheWeightsGiveIsFoldedAndTheDeadNodeDropped) {
  Fixture f;
  std::vector<std::string> as_written, planned;
  as_written = nnp::test::ops_of_call(f.net, f.x);  // grad mode, w requires grad: the program as written
  {
    NoGradGuard no_grad;
    f.net(f.x);  // makes the plan
    planned = nnp::test::ops_of_call(f.net, f.x);
    EXPECT_EQ(f.net(f.x).to_vector<float>(), f.expected());
  }
  EXPECT_TRUE(ran(as_written, "exp"));
  EXPECT_FALSE(ran(planned, "exp")) << "dead-code elimination left the unread Exp in";
  EXPECT_LT(planned.size(), as_written.size()) << "constant folding left the sum and transpose of w in";
  EXPECT_FALSE(ran(planned, "add")) << "constant folding left w + w in";
  EXPECT_TRUE(ran(planned, "matmul"));
}

TEST(GraphPlan, AWeightWrittenSinceThePlanWasMadeIsSeen) {
  Fixture f;
  NoGradGuard no_grad;
  EXPECT_EQ(f.net(f.x).to_vector<float>(), f.expected());
  f.set_weights(-2.0f);  // an in-place write: the folded transpose is stale
  EXPECT_EQ(f.net(f.x).to_vector<float>(), f.expected());
}

TEST(GraphPlan, ACallThatNeedsTheWeightsGradientRunsTheProgramAsWritten) {
  Fixture f;
  {
    NoGradGuard no_grad;
    f.net(f.x);  // a plan exists
  }
  Tensor y = f.net(f.x);
  EXPECT_EQ(y.to_vector<float>(), f.expected());
  y.sum().backward();
  // d(sum(x @ (2w)^T)) / dw[i][j] = 2 * (the sum over the batch of x[b][j]).
  EXPECT_EQ(f.w.grad().to_vector<float>(), (std::vector<float>{12, 16, 20, 24, 12, 16, 20, 24, 12, 16, 20, 24}));
}

// A convolution whose output only a ReLU reads: under no_grad the plan runs
// them as one kernel (no relu op of its own), with the values of the
// program as written; a hook on the convolution still runs (the fused node
// then calls the layer).
const char* const kConvRelu = R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
    "layers": [{"name": "conv", "type": "nn.Conv2d",
                "attrs": {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1, "stride": 2}}],
    "nodes": [{"layer": "conv", "inputs": ["x"], "outputs": ["c"]},
              {"op": "Relu", "inputs": ["c"], "outputs": ["y"]}]})";

TEST(GraphPlan, AConvolutionAndTheReluAfterItRunAsOneKernel) {
  manual_seed(7);
  nn::ModuleHandle net = nn::GraphModule(kConvRelu);
  const Tensor x = randn({4, 2, 9, 9});
  const std::vector<float> as_written = net(x).to_vector<float>();  // grad mode: the program as written
  std::vector<std::string> planned;
  {
    NoGradGuard no_grad;
    EXPECT_EQ(net(x).to_vector<float>(), as_written);
    planned = nnp::test::ops_of_call(net, x);
  }
  // From the layer's weight, or from the weight packed once where the
  // backend packs for this geometry (the cpu backend's oneDNN form).
  EXPECT_TRUE(ran(planned, "conv2d") || ran(planned, "conv2d_packed"));
  EXPECT_FALSE(ran(planned, "relu")) << "the ReLU ran apart from the convolution";
  int calls = 0;
  nn::ModuleHandle conv = net.named_children()[0].second;
  nn::ForwardHook count = [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
    ++calls;
    return Tensor();
  };
  HookHandle hook = conv.register_forward_hook(count);
  NoGradGuard no_grad;
  EXPECT_EQ(net(x).to_vector<float>(), as_written);
  EXPECT_EQ(calls, 1) << "the convolution's hook did not run";
}

// h = relu(x @ w1 + b1): one kernel under no_grad; y = h @ w2 + x: the
// Add is a residual, not a bias, so that product runs as written (the fused
// node's fallback); and the values are the program's as written.
const char* const kMlp = R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
    "tensors": [{"key": "w1", "value": "w1", "shape": [6, 5], "dtype": "f32", "parameter": true},
                {"key": "b1", "value": "b1", "shape": [5], "dtype": "f32", "parameter": true},
                {"key": "w2", "value": "w2", "shape": [5, 6], "dtype": "f32", "parameter": true}],
    "nodes": [{"op": "MatMul", "inputs": ["x", "w1"], "outputs": ["p"]},
              {"op": "Add", "inputs": ["b1", "p"], "outputs": ["q"]},
              {"op": "Relu", "inputs": ["q"], "outputs": ["h"]},
              {"op": "MatMul", "inputs": ["h", "w2"], "outputs": ["r"]},
              {"op": "Add", "inputs": ["r", "x"], "outputs": ["y"]}]})";

TEST(GraphPlan, AMatMulWithItsBiasAndReluRunsAsOneKernel) {
  manual_seed(11);
  nn::ModuleHandle net = nn::GraphModule(kMlp);
  {
    NoGradGuard no_grad;
    for (auto& [name, p] : net.named_parameters()) p.copy_(randn(p.shape()));
  }
  const Tensor x = randn({3, 4, 6});  // [..., K]: the leading dimensions are the rows
  const Tensor as_written = net(x).detach();
  std::vector<std::string> planned;
  NoGradGuard no_grad;
  nnp::test::expect_close(net(x), as_written, 1e-5);
  planned = nnp::test::ops_of_call(net, x);
  EXPECT_EQ(std::count(planned.begin(), planned.end(), "gemm_epilogue"), 1) << "the bias chain was not fused";
  EXPECT_FALSE(ran(planned, "relu")) << "the ReLU ran apart from its product";
  EXPECT_EQ(std::count(planned.begin(), planned.end(), "add"), 1) << "only the residual Add runs as an op";
}

// A MaxPool2d layer runs the backend's kernel without the module call
// around it (no module event), with the layer's values; with a hook on it,
// the layer is called and the hook runs.
TEST(GraphPlan, AMaxPoolLayerRunsItsKernelDirectly) {
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
      "layers": [{"name": "pool", "type": "nn.MaxPool2d", "attrs": {"kernel_size": 3, "stride": 2, "padding": 1}}],
      "nodes": [{"layer": "pool", "inputs": ["x"], "outputs": ["y"]}]})");
  nn::ModuleHandle pool = net.named_children()[0].second;
  const Tensor x = randn({2, 3, 9, 8});
  const std::vector<float> as_written = pool(x).to_vector<float>();
  NoGradGuard no_grad;
  EXPECT_EQ(net(x).to_vector<float>(), as_written);
  int pool_modules = 0;
  {
    profiler::Profiler p;
    EXPECT_EQ(net(x).to_vector<float>(), as_written);
    for (const profiler::Event& e : p.stop().events())
      if (e.kind == profiler::EventKind::Module && e.name.find("MaxPool2d") != std::string::npos) ++pool_modules;
  }
  EXPECT_EQ(pool_modules, 0) << "the layer was called";
  int calls = 0;
  nn::ForwardHook count = [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
    ++calls;
    return Tensor();
  };
  HookHandle hook = pool.register_forward_hook(count);
  EXPECT_EQ(net(x).to_vector<float>(), as_written);
  EXPECT_EQ(calls, 1) << "the pooling layer's hook did not run";
}

// An op the application registered may not be a function of its inputs
// alone (this one counts its calls): it runs on every call, never folded,
// even over the module's tensors.
int g_counted_calls = 0;
nnp_status counted_identity(const nnp_tensor* const* inputs, int32_t, const nnp_attrs*, int32_t, nnp_list* outputs,
                            void*) {
  ++g_counted_calls;
  return api().list_append_tensor(outputs, "", inputs[0]);
}

TEST(GraphPlan, AnOpTheApplicationRegisteredIsNeverFolded) {
  nnp_graph_op op{};
  op.struct_size = sizeof op;
  op.op_type = "GraphPlanTestCountedIdentity";
  op.doc = "gives its input back and counts its calls";
  op.run = counted_identity;
  ASSERT_EQ(api().register_graph_op(nullptr, &op), NNP_OK) << api().last_error();
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "w", "value": "w", "shape": [3], "dtype": "f32", "data": [1, 2, 3]}],
      "nodes": [{"op": "GraphPlanTestCountedIdentity", "inputs": ["w"], "outputs": ["v"]},
                {"op": "Add", "inputs": ["x", "v"], "outputs": ["y"]}]})");
  NoGradGuard no_grad;
  const Tensor x = from_vector<float>({1, 1, 1});
  for (int call = 0; call < 3; ++call) EXPECT_EQ(net(x).to_vector<float>(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(g_counted_calls, 3);
}

// A Linear layer and the Relu after it: the GEMM with the bias and the ReLU
// in its epilogue, the layer's weight read transposed where it lies; with a
// hook on the layer, the layer is called.
TEST(GraphPlan, ALinearLayerAndTheReluAfterItRunAsOneProduct) {
  manual_seed(13);
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
      "layers": [{"name": "fc", "type": "nn.Linear", "attrs": {"in_features": 40, "out_features": 33}}],
      "nodes": [{"layer": "fc", "inputs": ["x"], "outputs": ["h"]},
                {"op": "Relu", "inputs": ["h"], "outputs": ["y"]}]})");
  const Tensor x = randn({30, 40});
  const Tensor as_written = net(x).detach();  // grad mode, the weight requires grad: the layer and the op
  NoGradGuard no_grad;
  nnp::test::expect_close(net(x), as_written, 1e-5);
  const std::vector<std::string> planned = nnp::test::ops_of_call(net, x);
  EXPECT_TRUE(ran(planned, "gemm_epilogue") || ran(planned, "gemm_packed"))
      << "the Linear layer did not run as the fused product";
  EXPECT_FALSE(ran(planned, "relu")) << "the ReLU ran apart from the product";
  int calls = 0;
  nn::ModuleHandle fc = net.named_children()[0].second;
  nn::ForwardHook count = [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
    ++calls;
    return Tensor();
  };
  HookHandle hook = fc.register_forward_hook(count);
  nnp::test::expect_close(net(x), as_written, 1e-5);
  EXPECT_EQ(calls, 1) << "the Linear layer's hook did not run";
}

// In grad mode the convolution and its ReLU are recorded as the program's
// nodes: the weight's gradient is the layer's own.
TEST(GraphPlan, AConvolutionFusedWithItsReluStillTrains) {
  manual_seed(15);
  nn::ModuleHandle net = nn::GraphModule(kConvRelu);
  const Tensor x = randn({2, 2, 7, 7});
  net(x).sum().backward();
  const Tensor weight = net.get_parameter("conv.weight"), bias = net.get_parameter("conv.bias");
  ASSERT_TRUE(weight.grad().defined()) << "no gradient reached the convolution's weight";
  const Tensor w = weight.detach().clone().requires_grad_(), b = bias.detach().clone().requires_grad_();
  F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).padding(1).stride(2)).relu().sum().backward();
  nnp::test::expect_close(weight.grad(), w.grad(), 1e-5);
  nnp::test::expect_close(bias.grad(), b.grad(), 1e-5);
}

// Without a bias, the gradient of the Linear layer's weight is still
// recorded in grad mode (the fused product, which records nothing, is not
// taken), and equals the layer's own.
TEST(GraphPlan, ALinearLayerWithoutBiasFusedWithItsReluStillTrains) {
  manual_seed(14);
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
      "layers": [{"name": "fc", "type": "nn.Linear", "attrs": {"in_features": 6, "out_features": 4, "bias": false}}],
      "nodes": [{"layer": "fc", "inputs": ["x"], "outputs": ["h"]},
                {"op": "Relu", "inputs": ["h"], "outputs": ["y"]}]})");
  const Tensor x = randn({5, 6});
  net(x).sum().backward();
  const Tensor weight = net.named_parameters()[0].second;
  ASSERT_TRUE(weight.grad().defined()) << "no gradient reached the weight";
  const Tensor want = x.matmul(weight.detach().t()).gt(zeros({1})).to(Dtype::f32).t().matmul(x);
  nnp::test::expect_close(weight.grad(), want, 1e-5);
}

// A chain of elementwise nodes runs as one kernel, up to a value the graph
// also gives back; the values are the ops' own (the kernel's sigmoid and
// tanh are vector code, within 2 ulp of libm's). Where the
// kernel does not apply (integers; an input whose gradient is wanted) the
// nodes run as written, and the gradient flows.
// Clip with its bounds as inputs (ReLU6 after MobileNet's convolutions) is
// a Max and a Min step of a chain: one pass, no maximum or minimum op.
TEST(GraphPlan, AClipRunsAsAChainOfTwoSteps) {
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "lo", "value": "lo", "shape": [], "dtype": "f32", "data": [0]},
                  {"key": "hi", "value": "hi", "shape": [], "dtype": "f32", "data": [6]}],
      "nodes": [{"op": "Clip", "inputs": ["x", "lo", "hi"], "outputs": ["y"]}]})");
  const Tensor x = randn({4, 9}) * 5.0;
  NoGradGuard no_grad;
  EXPECT_EQ(net.call({x}).to_vector<float>(), x.maximum(full({}, 0.0)).minimum(full({}, 6.0)).to_vector<float>());
  const std::vector<std::string> planned = nnp::test::ops_of_call(net, x);
  EXPECT_TRUE(ran(planned, "elementwise_chain"));
  EXPECT_FALSE(ran(planned, "maximum") || ran(planned, "minimum")) << "the Clip ran as its two ops";
}

TEST(GraphPlan, AChainOfElementwiseOpsRunsAsOnePass) {
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y", "g"], "layers": [],
      "tensors": [{"key": "s", "value": "s", "shape": [1], "dtype": "f32", "data": [1.5]},
                  {"key": "b", "value": "b", "shape": [4], "dtype": "f32", "data": [0.5, -1, 2, -3]},
                  {"key": "b2", "value": "b2", "shape": [4], "dtype": "f32", "data": [2, 4, 8, 16]}],
      "nodes": [{"op": "Mul", "inputs": ["x", "s"], "outputs": ["a"]},
                {"op": "Add", "inputs": ["a", "b"], "outputs": ["c"]},
                {"op": "Relu", "inputs": ["c"], "outputs": ["d"]},
                {"op": "Sigmoid", "inputs": ["d"], "outputs": ["e"]},
                {"op": "Sub", "inputs": ["e", "x"], "outputs": ["f"]},
                {"op": "Tanh", "inputs": ["f"], "outputs": ["g"]},
                {"op": "Div", "inputs": ["g", "b2"], "outputs": ["y"]}]})");
  manual_seed(12);
  const Tensor x = randn({3, 5, 4}) * 2.0;
  const Tensor b = from_vector<float>({0.5, -1, 2, -3}), b2 = from_vector<float>({2, 4, 8, 16});
  auto eager = [&](const Tensor& in) {
    const Tensor g = ((in * from_vector<float>({1.5}) + b).relu().sigmoid() - in).tanh();
    return std::make_pair(g / b2, g);
  };
  {
    NoGradGuard no_grad;
    const auto got = net.call_values({x});
    auto [y, g] = eager(x);
    nnp::test::expect_close(got.tensor(0), y, 1e-6);
    nnp::test::expect_close(got.tensor(1), g, 1e-6);
    const std::vector<std::string> planned = nnp::test::ops_of_call(net, x);
    EXPECT_EQ(std::count(planned.begin(), planned.end(), "elementwise_chain"), 1) << "the chain was not fused";
    for (const char* op : {"mul", "add", "relu", "sigmoid", "sub", "tanh"})
      EXPECT_FALSE(ran(planned, op)) << op << " ran apart from its chain";
    EXPECT_TRUE(ran(planned, "div")) << "the Div reads g, which the graph also gives: it stays a node";
  }
  // Gradients wanted of x: the nodes as written.
  const Tensor xg = x.clone().requires_grad_();
  net.call_values({xg}).tensor(0).sum().backward();
  const Tensor xe = x.clone().requires_grad_();
  eager(xe).first.sum().backward();
  EXPECT_EQ(xg.grad().to_vector<float>(), xe.grad().to_vector<float>());
  // Integers: not the kernel's; the nodes as written give int64 values.
  nn::ModuleHandle ints = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [], "tensors": [],
      "nodes": [{"op": "Add", "inputs": ["x", "x"], "outputs": ["a"]},
                {"op": "Neg", "inputs": ["a"], "outputs": ["y"]}]})");
  NoGradGuard no_grad;
  const Tensor y = ints(from_vector<int64_t>({1, -2, 3}));
  EXPECT_EQ(y.dtype(), Dtype::i64);
  EXPECT_EQ(y.to_vector<int64_t>(), (std::vector<int64_t>{-2, 4, -6}));
}

// A model on another device (a GPU): Reshape reads its shape on the host,
// and the plan gives it a cpu copy of the shape, made once, instead of
// copying it from the device on every call (on a GPU each such copy waits
// for the work queued there); a shape written in place is seen.
TEST(GraphPlan, AShapeReadOnTheHostIsCopiedToTheCpuOncePerPlan) {
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "shape", "value": "shape", "shape": [2], "dtype": "i64", "data": [2, 6]}],
      "nodes": [{"op": "Reshape", "inputs": ["x", "shape"], "outputs": ["r"]},
                {"op": "Relu", "inputs": ["r"], "outputs": ["y"]}]})");
  const Device reference("reference");
  net.to(reference);
  const Tensor x = randn({3, 4}).to(reference);
  NoGradGuard no_grad;
  net(x);  // makes the plan
  profiler::Profiler p;
  const Tensor y = net(x);
  int device_reads = 0;
  for (const profiler::Event& e : p.stop().events())
    if (e.kind == profiler::EventKind::Op && e.dtypes.find("i64") != std::string::npos && e.device != "cpu:0")
      ++device_reads;
  EXPECT_EQ(device_reads, 0) << "the shape was read from the device";
  EXPECT_EQ(y.device(), reference);
  EXPECT_EQ(y.shape(), (Shape{2, 6}));
  EXPECT_EQ(y.to(Device::cpu()).to_vector<float>(), x.relu().reshape({2, 6}).to(Device::cpu()).to_vector<float>());
  net.named_buffers()[0].second.copy_(from_vector<int64_t>({6, 2}).to(reference));
  EXPECT_EQ(net(x).shape(), (Shape{6, 2})) << "the shape written in place was not seen";
}

// An op's host_inputs (ABI 1.20): the inputs it marks get the cpu copy; an
// op registered with the 1.15 layout has no such field, whatever lies past
// its struct, and gets the device's tensor.
std::string g_second_input_device;
nnp_status note_second_input(const nnp_tensor* const* inputs, int32_t, const nnp_attrs*, int32_t, nnp_list* outputs,
                             void*) {
  g_second_input_device = Device(api().tensor_device(inputs[1])).name();
  return api().list_append_tensor(outputs, "", inputs[0]);
}

TEST(GraphPlan, AnOpsHostInputsGetTheCpuCopyAndAnOlderOpsDoNot) {
  nnp_graph_op op{};
  op.struct_size = sizeof op;
  op.op_type = "GraphPlanTestHostRead";
  op.doc = "gives input 0 back, reads input 1 on the host";
  op.run = note_second_input;
  op.host_inputs = uint64_t{1} << 1;
  ASSERT_EQ(api().register_graph_op(nullptr, &op), NNP_OK) << api().last_error();
  op.struct_size = NNP_GRAPH_OP_SIZE_1_15;
  op.op_type = "GraphPlanTestOlderHostRead";
  ASSERT_EQ(api().register_graph_op(nullptr, &op), NNP_OK) << api().last_error();
  const Device reference("reference");
  for (const std::string type : {"GraphPlanTestHostRead", "GraphPlanTestOlderHostRead"}) {
    nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "k", "value": "k", "shape": [1], "dtype": "i64", "data": [3]}],
        "nodes": [{"op": ")" + type + R"(", "inputs": ["x", "k"], "outputs": ["y"]}]})");
    net.to(reference);
    NoGradGuard no_grad;
    const Tensor x = ones({2}).to(reference);
    g_second_input_device.clear();
    net(x);
    EXPECT_EQ(g_second_input_device, type == "GraphPlanTestHostRead" ? "cpu:0" : "reference:0") << type;
  }
}

// Each value is released once its last reader has run, in the plan and as
// written: a chain of eight 1 MB products (the plan) or sums (as written,
// for a gradient of w) holds two or three of them at once, not all eight,
// and gives the same result as the same ops called one by one.
TEST(GraphPlan, ValuesAreReleasedAfterTheirLastReader) {
  std::string nodes;
  for (int i = 0; i < 8; ++i)
    nodes += std::string(i ? ", " : "") + R"({"op": "OP", "inputs": [")" + (i ? "v" + std::to_string(i) : "x") +
             R"(", "w"], "outputs": [")" + (i == 7 ? std::string("y") : "v" + std::to_string(i + 1)) + R"("]})";
  auto program = [&](const std::string& op, bool parameter) {
    std::string text = R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "w", "value": "w", "shape": [512, 512], "dtype": "f32", "parameter": )" +
                       std::string(parameter ? "true" : "false") + R"(}], "nodes": [)" + nodes + "]}";
    for (size_t at = text.find("OP"); at != std::string::npos; at = text.find("OP")) text.replace(at, 2, op);
    return text;
  };
  const Tensor x = randn({512, 512}) * 0.05;
  const int64_t mb = 512 * 512 * 4;
  auto peak_of = [&](nn::ModuleHandle& net, Tensor& y) {
    y = net.call({x});  // makes the plan
    y = Tensor();
    const int64_t held = memory_allocated();
    reset_peak_memory_stats();
    y = net.call({x});
    return max_memory_allocated() - held;
  };
  {
    nn::ModuleHandle net = nn::GraphModule(program("MatMul", false));
    Tensor w = net.buffers()[0];
    w.copy_(randn({512, 512}) * 0.05);
    NoGradGuard no_grad;
    Tensor y;
    const int64_t peak = peak_of(net, y);
    EXPECT_LE(peak, 3 * mb) << "the plan held " << peak / mb << " of the eight products at once";
    Tensor expected = x;
    for (int i = 0; i < 8; ++i) expected = expected.matmul(w);
    nnp::test::expect_close(y, expected, 1e-5);
  }
  {
    nn::ModuleHandle net = nn::GraphModule(program("Add", true));
    Tensor y;
    const int64_t peak = peak_of(net, y);
    EXPECT_LE(peak, 3 * mb) << "as written, the call held " << peak / mb << " of the eight sums at once";
    const Tensor w = net.parameters()[0];
    nnp::test::expect_close(y, x + w * 8.0, 1e-5);
    y.sum().backward();  // the sums' gradient still arrives
    nnp::test::expect_close(w.grad(), full({512, 512}, 8.0), 0);
  }
}

// A float16 model with float32 edges (a converter's Casts at the input and
// output) runs in f32 on the cpu, as ONNX Runtime's cpu provider runs it: its
// output is the f32 computation with the weights rounded to f16, not the
// per-op f16 rounding of the file as written. Without the Cast at the
// output, the model's f16 output stays f16.
TEST(GraphPlan, AFloat16ModelWithFloat32EdgesRunsInF32OnTheCpu) {
  auto program = [](bool cast_back) {
    const std::string last = cast_back ? R"({"op": "MatMul", "inputs": ["r", "w"], "outputs": ["q"]},
        {"op": "Cast", "inputs": ["q"], "outputs": ["y"], "attrs": {"to": 1}})"
                                       : R"({"op": "MatMul", "inputs": ["r", "w"], "outputs": ["y"]})";
    return std::string(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "w", "value": "w", "shape": [32, 32], "dtype": "f16"}],
        "nodes": [{"op": "Cast", "inputs": ["x"], "outputs": ["xh"], "attrs": {"to": 10}},
                  {"op": "MatMul", "inputs": ["xh", "w"], "outputs": ["p"]},
                  {"op": "Relu", "inputs": ["p"], "outputs": ["r"]}, )") +
           last + "]}";
  };
  manual_seed(12);
  const Tensor x = randn({8, 32}), w = (randn({32, 32}) * 0.4).to(Dtype::f16);
  const Tensor w32 = w.to(Dtype::f32);
  const Tensor in_f32 = x.matmul(w32).relu().matmul(w32);
  const Tensor per_op = x.to(Dtype::f16).matmul(w).relu().matmul(w).to(Dtype::f32);
  const double scale = in_f32.abs().amax().item<double>();
  ASSERT_GT((per_op - in_f32).abs().amax().item<double>(), 1e-4 * scale) << "the two readings must differ to tell them";
  NoGradGuard no_grad;
  nn::ModuleHandle net = nn::GraphModule(program(true));
  net.buffers()[0].copy_(w);
  const Tensor y = net.call({x});
  EXPECT_EQ(y.dtype(), Dtype::f32);
  EXPECT_LE((y - in_f32).abs().amax().item<double>(), 1e-5 * scale);
  nn::ModuleHandle half_out = nn::GraphModule(program(false));
  half_out.buffers()[0].copy_(w);
  const Tensor h = half_out.call({x});
  EXPECT_EQ(h.dtype(), Dtype::f16);
  EXPECT_LE((h.to(Dtype::f32) - per_op).abs().amax().item<double>(), 1e-2 * scale);
}

// Attention: Q scaled by a Mul, MatMul with K transposed, a mask added,
// Softmax over the last axis, MatMul with V - one kernel (the scores never
// written out), within 1e-5 of the nodes; Softmax over another axis, or a
// gradient wanted, runs the nodes as written.
std::string attention_program(int64_t softmax_axis) {
  return std::string(R"({"inputs": ["q", "k", "v", "m"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "c", "value": "c", "shape": [], "dtype": "f32", "data": [0.25]}],
      "nodes": [{"op": "Mul", "inputs": ["q", "c"], "outputs": ["qs"]},
                {"op": "Transpose", "inputs": ["k"], "outputs": ["kt"], "attrs": {"perm": [0, 2, 1]}},
                {"op": "MatMul", "inputs": ["qs", "kt"], "outputs": ["s"]},
                {"op": "Add", "inputs": ["s", "m"], "outputs": ["sm"]},
                {"op": "Softmax", "inputs": ["sm"], "outputs": ["w"], "attrs": {"axis": )") +
         std::to_string(softmax_axis) + R"(}},
                {"op": "MatMul", "inputs": ["w", "v"], "outputs": ["y"]}]})";
}

std::vector<std::string> ops_of(nn::ModuleHandle& net, const std::vector<Tensor>& args) {
  profiler::Profiler p;
  net.call(args);
  std::vector<std::string> names;
  for (const profiler::Event& e : p.stop().events())
    if (e.kind == profiler::EventKind::Op) names.push_back(e.name);
  return names;
}

TEST(GraphPlan, AnAttentionRunsAsOneKernel) {
  manual_seed(31);
  const Tensor q = randn({3, 5, 19}), k = randn({3, 37, 19}), v = randn({3, 37, 33}), m = randn({5, 37});
  auto composed = [&](const Tensor& query, int64_t axis) {
    return ((query * 0.25).matmul(k.transpose(1, 2)) + m).softmax(axis).matmul(v);
  };
  nn::ModuleHandle net = nn::GraphModule(attention_program(-1));
  {
    NoGradGuard no_grad;
    net.call({q, k, v, m});  // makes the plan
    const std::vector<std::string> ops = ops_of(net, {q, k, v, m});
    EXPECT_TRUE(ran(ops, "attention"));
    EXPECT_FALSE(ran(ops, "softmax")) << "the scores were softmaxed as a tensor of their own";
    nnp::test::expect_close(net.call({q, k, v, m}), composed(q, -1), 1e-5);
    // A NaN in one query row: that row NaN, as the composition gives, the others not.
    Tensor with_nan = q.clone();
    with_nan.index_put_({1, 2, 3}, NAN);
    const std::vector<float> got = net.call({with_nan, k, v, m}).contiguous().to_vector<float>();
    for (int64_t row = 0; row < 15; ++row)
      EXPECT_EQ(std::isnan(got[static_cast<size_t>(row * 33)]), row == 7) << "row " << row;
    // The softmax over the queries' axis is not attention.
    nn::ModuleHandle other = nn::GraphModule(attention_program(1));
    other.call({q, k, v, m});
    EXPECT_FALSE(ran(ops_of(other, {q, k, v, m}), "attention"));
    nnp::test::expect_close(other.call({q, k, v, m}), composed(q, 1), 1e-5);
  }
  // A gradient wanted of q: the nodes as written, and the gradient arrives.
  const Tensor leaf = q.clone().requires_grad_(true);
  net.call({leaf, k, v, m}).sum().backward();
  const Tensor expected = q.clone().requires_grad_(true);
  composed(expected, -1).sum().backward();
  nnp::test::expect_close(leaf.grad(), expected.grad(), 1e-5);
}

// Seq-first attention, as PyTorch's MultiheadAttention exports it: q, k and
// v are [B*H, L, E] views of [L, B*H, E] projections, and a Transpose and a
// Reshape after the attention merge the heads. The attention's output is
// laid out as its queries are, so the Reshape reads it as a view: no op
// after the attention allocates (a contiguous output had to be copied).
TEST(GraphPlan, ASeqFirstAttentionWritesTheLayoutTheHeadMergeReadsAsAView) {
  manual_seed(37);
  const int64_t L = 5, BH = 6, E = 8;
  const Tensor pq = randn({L, BH, E}), pk = randn({L, BH, E}), pv = randn({L, BH, E});
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["pq", "pk", "pv"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "c", "value": "c", "shape": [], "dtype": "f32", "data": [0.35]},
                  {"key": "shape", "value": "shape", "shape": [2], "dtype": "i64", "data": [5, 48]}],
      "nodes": [{"op": "Transpose", "inputs": ["pq"], "outputs": ["q"], "attrs": {"perm": [1, 0, 2]}},
                {"op": "Transpose", "inputs": ["pk"], "outputs": ["k"], "attrs": {"perm": [1, 0, 2]}},
                {"op": "Transpose", "inputs": ["pv"], "outputs": ["v"], "attrs": {"perm": [1, 0, 2]}},
                {"op": "Mul", "inputs": ["q", "c"], "outputs": ["qs"]},
                {"op": "Transpose", "inputs": ["k"], "outputs": ["kt"], "attrs": {"perm": [0, 2, 1]}},
                {"op": "MatMul", "inputs": ["qs", "kt"], "outputs": ["s"]},
                {"op": "Softmax", "inputs": ["s"], "outputs": ["w"], "attrs": {"axis": -1}},
                {"op": "MatMul", "inputs": ["w", "v"], "outputs": ["o"]},
                {"op": "Transpose", "inputs": ["o"], "outputs": ["ot"], "attrs": {"perm": [1, 0, 2]}},
                {"op": "Reshape", "inputs": ["ot", "shape"], "outputs": ["y"]}]})");
  NoGradGuard no_grad;
  net.call({pq, pk, pv});  // makes the plan
  profiler::Profiler p;
  const Tensor y = net.call({pq, pk, pv});
  bool attention = false;
  for (const profiler::Event& e : p.stop().events()) {
    if (e.kind != profiler::EventKind::Op) continue;
    if (e.name == "attention") {
      attention = true;
    } else if (attention) {
      EXPECT_EQ(e.bytes_allocated, 0) << e.name << " after the attention copied its output";
    }
  }
  EXPECT_TRUE(attention);
  const Tensor q = pq.transpose(0, 1), k = pk.transpose(0, 1), v = pv.transpose(0, 1);
  const Tensor expected =
      (q * 0.35).matmul(k.transpose(1, 2)).softmax(-1).matmul(v).transpose(0, 1).reshape({L, BH * E});
  nnp::test::expect_close(y, expected, 1e-5);
}

// Eval-mode folding: a convolution, the BatchNormalization after it (its
// statistics the program's tensors) and a Relu run as one convolution with
// the folded weight and bias, within 1e-5 of the nodes; a statistic written
// in place is seen (the plan is made again); a hook on the convolution runs.
const char* const kConvBatchNorm = R"({"inputs": ["x"], "outputs": ["y"],
    "tensors": [{"key": "scale", "value": "scale", "shape": [3], "dtype": "f32", "data": [1.5, 0.5, -2]},
                {"key": "beta", "value": "beta", "shape": [3], "dtype": "f32", "data": [0.1, -0.2, 0.3]},
                {"key": "mean", "value": "mean", "shape": [3], "dtype": "f32", "data": [0.25, -1, 2]},
                {"key": "var", "value": "var", "shape": [3], "dtype": "f32", "data": [4, 0.5, 1.5]}],
    "layers": [{"name": "conv", "type": "nn.Conv2d",
                "attrs": {"in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1}}],
    "nodes": [{"layer": "conv", "inputs": ["x"], "outputs": ["c"]},
              {"op": "BatchNormalization", "inputs": ["c", "scale", "beta", "mean", "var"], "outputs": ["n"],
               "attrs": {"epsilon": 0.001}},
              {"op": "Relu", "inputs": ["n"], "outputs": ["y"]}]})";

TEST(GraphPlan, ABatchNormalizationIsFoldedIntoTheConvolutionBefore) {
  manual_seed(9);
  nn::ModuleHandle net = nn::GraphModule(kConvBatchNorm);
  const Tensor x = randn({2, 2, 7, 7});
  const Tensor as_written = net(x).detach();  // grad mode: the program as written
  std::vector<std::string> planned;
  {
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), as_written, 1e-5);
    planned = nnp::test::ops_of_call(net, x);
  }
  EXPECT_TRUE(ran(planned, "conv2d"));
  for (const char* op : {"sub", "mul", "rsqrt", "relu"})
    EXPECT_FALSE(ran(planned, op)) << op << " ran: the normalisation was not folded";
  // A statistic written in place: the folded weights are made again.
  Tensor var = net.named_buffers()[3].second;
  {
    NoGradGuard no_grad;
    var.copy_(from_vector<float>({0.1f, 9, 2}));
  }
  const Tensor rewritten = net(x).detach();
  {
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), rewritten, 1e-5);
  }
  EXPECT_GT((rewritten - as_written).abs().amax().item<float>(), 0.01f) << "the new variance changed nothing";
  int calls = 0;
  nn::ForwardHook count = [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
    ++calls;
    return Tensor();
  };
  HookHandle hook = net.named_children()[0].second.register_forward_hook(count);
  NoGradGuard no_grad;
  nnp::test::expect_close(net(x), rewritten, 1e-5);
  EXPECT_EQ(calls, 1) << "the convolution's hook did not run";
}

}  // namespace

// W3's second convolution, its ReLU and a 2 x 2 max pooling: under no_grad
// one packed convolution (ABI 1.21, the weight packed once per plan) where
// the backend packs; the values within 1e-5 of the layers as written; a
// weight written in place is packed again; a hook on either layer runs.
const char* const kConvReluPool = R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
    "layers": [{"name": "conv", "type": "nn.Conv2d", "attrs": {"in_channels": 16, "out_channels": 32, "kernel_size": 5}},
               {"name": "pool", "type": "nn.MaxPool2d", "attrs": {"kernel_size": 2}}],
    "nodes": [{"layer": "conv", "inputs": ["x"], "outputs": ["c"]},
              {"op": "Relu", "inputs": ["c"], "outputs": ["r"]},
              {"layer": "pool", "inputs": ["r"], "outputs": ["y"]}]})";

TEST(GraphPlan, AConvolutionWithItsReluAndPoolingRunsFromAPackedWeight) {
  manual_seed(21);
  nn::ModuleHandle net = nn::GraphModule(kConvReluPool);
  const Tensor x = randn({3, 16, 12, 12});
  const Tensor as_written = net(x).detach();  // grad mode: the program as written
  std::vector<std::string> planned;
  {
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), as_written, 1e-5);
    planned = nnp::test::ops_of_call(net, x);
  }
  const bool packs = cpu_has_avx512();
  if (!packs) GTEST_SKIP() << "the cpu backend packs convolutions with AVX-512, which this CPU lacks";
  EXPECT_TRUE(ran(planned, "conv2d_packed")) << "the convolution was not packed";
  for (const char* op : {"conv2d", "relu", "max_pool2d"})
    EXPECT_FALSE(ran(planned, op)) << op << " ran apart from the packed convolution";
  EXPECT_FALSE(ran(planned, "conv2d_pack")) << "the weight was packed again by a call that changed nothing";
  // A weight written in place: packed again, its new values used.
  Tensor w = net.named_parameters()[0].second;
  {
    NoGradGuard no_grad;
    w.mul_(-2.0);
  }
  const Tensor rewritten = net(x).detach();
  {
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), rewritten, 1e-5);
  }
  EXPECT_GT((rewritten - as_written).abs().amax().item<float>(), 0.01f) << "the new weight changed nothing";
  for (size_t layer = 0; layer < 2; ++layer) {
    int calls = 0;
    nn::ForwardHook count = [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
      ++calls;
      return Tensor();
    };
    HookHandle hook = net.named_children()[layer].second.register_forward_hook(count);
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), rewritten, 1e-5);
    EXPECT_EQ(calls, 1) << "the hook of layer " << layer << " did not run";
  }
}

// A convolution the backend's own packed kernels do not take (3 x 3, 48
// output channels): the cpu backend packs it in oneDNN's layout once per
// plan, and one image runs as two tasks of its output channels (16 and 32).
// Its values are the reference backend's, a NaN stays NaN through the
// ReLU, and nothing but the packed kernel runs.
const char* const kWideConvRelu = R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
    "layers": [{"name": "conv", "type": "nn.Conv2d",
                "attrs": {"in_channels": 32, "out_channels": 48, "kernel_size": 3, "padding": 1}}],
    "nodes": [{"layer": "conv", "inputs": ["x"], "outputs": ["c"]},
              {"op": "Relu", "inputs": ["c"], "outputs": ["y"]}]})";

bool cpu_convolves_with_onednn() {
  nnp_device_info info{};
  info.struct_size = sizeof info;
  if (nnp::api().device_info(nnp::Device("cpu").raw(), &info) != NNP_OK || info.description == nullptr) return false;
  return std::string(info.description).find("convolutions by oneDNN") != std::string::npos;
}

TEST(GraphPlan, AWideConvolutionRunsFromItsWeightPackedInOneDnnLayout) {
  manual_seed(22);
  nn::ModuleHandle net = nn::GraphModule(kWideConvRelu);
  Tensor x = randn({1, 32, 20, 20});
  {
    NoGradGuard no_grad;
    x.index_put_({0, 3, 4, 5}, NAN);
  }
  const Device reference("reference");
  nn::ModuleHandle on_reference = nn::GraphModule(kWideConvRelu);
  on_reference.load_state_dict(net.state_dict());
  on_reference.to(reference);
  const Tensor expected = on_reference(x.to(reference)).to(Device("cpu")).detach();
  std::vector<std::string> planned;
  Tensor y;
  {
    NoGradGuard no_grad;
    y = net(x);
    planned = nnp::test::ops_of_call(net, x);
  }
  const std::vector<float> got = y.to_vector<float>(), want = expected.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  int nans = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    nans += std::isnan(want[i]) ? 1 : 0;
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " lost its NaN";
    else
      EXPECT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "element " << i;
  }
  EXPECT_EQ(nans, 9 * 48) << "a NaN in the input reaches 3 x 3 outputs of every channel";
  if (!cpu_convolves_with_onednn()) GTEST_SKIP() << "the cpu backend convolves without oneDNN here";
  EXPECT_TRUE(ran(planned, "conv2d_packed")) << "the convolution was not packed";
  for (const char* op : {"conv2d", "relu", "conv2d_pack"}) EXPECT_FALSE(ran(planned, op)) << op << " ran";
}

bool cpu_has_avx2() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") != 0;
#else
  return false;
#endif
}

// A dynamically quantized convolution as ONNX Runtime's quantize_dynamic
// writes it: DynamicQuantizeLinear, ConvInteger with a u8 weight and its
// zero point (not 128: the VNNI form corrects each window), then the
// rescaling in f32.
const char* const kDynamicQuantizedConv = R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
    "tensors": [{"key": "w", "value": "w", "shape": [24, 8, 3, 3], "dtype": "u8"},
                {"key": "wz", "value": "wz", "shape": [], "dtype": "u8"},
                {"key": "ws", "value": "ws", "shape": [], "dtype": "f32"},
                {"key": "b", "value": "b", "shape": [1, 24, 1, 1], "dtype": "f32"}],
    "nodes": [{"op": "DynamicQuantizeLinear", "inputs": ["x"], "outputs": ["q", "qs", "qz"]},
              {"op": "ConvInteger", "inputs": ["q", "w", "qz", "wz"], "outputs": ["acc"],
               "attrs": {"pads": [1, 1, 1, 1], "strides": [2, 1]}},
              {"op": "Cast", "inputs": ["acc"], "outputs": ["accf"], "attrs": {"to": 1}},
              {"op": "Mul", "inputs": ["qs", "ws"], "outputs": ["s"]},
              {"op": "Mul", "inputs": ["accf", "s"], "outputs": ["scaled"]},
              {"op": "Add", "inputs": ["scaled", "b"], "outputs": ["y"]}]})";

// Graph mode runs the DynamicQuantizeLinear as one kernel and packs the
// ConvInteger's weight once (nnp_kernels 1.29), and the result equals the reference backend's composition exactly,
// batch 1 (split by rows over the threads) and batch 3, on the AVX-512 and the AVX2 form.
TEST(GraphPlan, ADynamicallyQuantizedConvolutionRunsFromItsPackedIntegerWeight) {
  manual_seed(23);
  nn::ModuleHandle net = nn::GraphModule(kDynamicQuantizedConv);
  {
    NoGradGuard no_grad;
    std::vector<Tensor> buffers = net.buffers();
    buffers[0].copy_(randint(0, 256, {24, 8, 3, 3}, Dtype::i64).to(Dtype::u8));
    buffers[1].fill_(97.0);
    buffers[2].fill_(0.02);
    buffers[3].copy_(randn({1, 24, 1, 1}));
  }
  const Device reference("reference");
  nn::ModuleHandle on_reference = nn::GraphModule(kDynamicQuantizedConv);
  on_reference.load_state_dict(net.state_dict());
  on_reference.to(reference);
  for (int64_t batch : {1, 3}) {
    const Tensor x = randn({batch, 8, 11, 9}) * 3.0;
    const Tensor expected = on_reference(x.to(reference)).to(Device("cpu")).detach();
    std::vector<std::string> planned;
    Tensor y;
    {
      NoGradGuard no_grad;
      y = net(x);
      planned = nnp::test::ops_of_call(net, x);
    }
    ASSERT_EQ(y.shape(), (Shape{batch, 24, 6, 9}));
    EXPECT_EQ(y.to_vector<float>(), expected.to_vector<float>()) << "batch " << batch;
    if (!cpu_has_avx2()) continue;
    EXPECT_TRUE(ran(planned, "conv2d_integer_packed")) << "the ConvInteger was not packed (batch " << batch << ")";
    EXPECT_FALSE(ran(planned, "conv2d")) << "the composition ran (batch " << batch << ")";
    // The range stays on the device: no reduction read on the host.
    EXPECT_TRUE(ran(planned, "dynamic_quantize_linear")) << "batch " << batch;
    for (const char* op : {"amin", "amax", "round"})
      EXPECT_FALSE(ran(planned, op)) << op << " ran (batch " << batch << ")";
  }
}

bool cpu_has_vnni() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512vnni") != 0 && __builtin_cpu_supports("avx512bw") != 0 &&
         __builtin_cpu_supports("avx512vl") != 0;
#else
  return false;
#endif
}

// Two static int8 convolutions: the first over two channels (the cpu
// backend's row groups) with its ReLU and a pooling after it, the second
// over 20 (channel groups) with two kernel sizes, padding and a stride.
const char* const kInt8ConvPoolConv = R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
    "layers": [{"name": "conv1", "type": "nn.quantized.Conv2d",
                "attrs": {"in_channels": 2, "out_channels": 20, "kernel_size": 5, "padding": 2, "relu": true}},
               {"name": "pool", "type": "nn.MaxPool2d", "attrs": {"kernel_size": 2}},
               {"name": "conv2", "type": "nn.quantized.Conv2d",
                "attrs": {"in_channels": 20, "out_channels": 7, "kernel_size": [3, 2], "padding": [0, 1],
                          "stride": [1, 2]}}],
    "nodes": [{"layer": "conv1", "inputs": ["x"], "outputs": ["c"]},
              {"layer": "pool", "inputs": ["c"], "outputs": ["p"]},
              {"layer": "conv2", "inputs": ["p"], "outputs": ["y"]}]})";

// Random int8 weights, scales and biases, and activation parameters that
// chain (the second layer's input is the first's output grid).
void quantize_randomly(nn::ModuleHandle& net) {
  NoGradGuard no_grad;
  const std::pair<double, int64_t> grids[3] = {{0.05, 12}, {0.1, 3}, {0.2, 20}};
  int i = 0;
  for (const char* name : {"conv1", "conv2"}) {
    nn::ModuleHandle layer = net.get_submodule(name);
    Tensor w = layer.get_buffer("weight");
    w.copy_(randint(-127, 128, w.shape(), Dtype::i8));
    layer.get_buffer("weight_scale").copy_(rand({w.size(0)}, Dtype::f64) * 0.01 + 0.002);
    layer.get_buffer("bias").copy_(randn({w.size(0)}));
    layer.get_buffer("input_scale").fill_(grids[i].first);
    layer.get_buffer("input_zero_point").fill_(static_cast<double>(grids[i].second));
    layer.get_buffer("scale").fill_(grids[i + 1].first);
    layer.get_buffer("zero_point").fill_(static_cast<double>(grids[i + 1].second));
    ++i;
  }
}

// The layers called one by one: their own (eager) composition.
Tensor int8_layers_eagerly(nn::ModuleHandle& net, const Tensor& x) {
  return net.get_submodule("conv2")(net.get_submodule("pool")(net.get_submodule("conv1")(x)));
}

// The static int8 convolutions of a plan run from weights packed once (ABI
// 1.22), the first with its pooling, and equal their layers' own values
// exactly; a weight or activation scale written in place is packed again;
// a hook on a layer runs it as written.
TEST(GraphPlan, StaticInt8ConvolutionsRunFromPackedWeightsExactly) {
  manual_seed(29);
  nn::ModuleHandle net = nn::GraphModule(kInt8ConvPoolConv);
  quantize_randomly(net);
  Tensor x = randn({3, 2, 10, 9}) * 1.5;
  {
    NoGradGuard no_grad;
    x.index_put_({0, 0, 0, 0}, std::nan(""));  // quantized as 0 by both
  }
  NoGradGuard no_grad;
  const Tensor eager = int8_layers_eagerly(net, x);
  EXPECT_EQ(net(x).to_vector<float>(), eager.to_vector<float>());
  const std::vector<std::string> planned = nnp::test::ops_of_call(net, x);
  if (!cpu_has_vnni()) GTEST_SKIP() << "the cpu backend packs int8 convolutions with AVX512-VNNI, which this CPU lacks";
  EXPECT_EQ(std::count(planned.begin(), planned.end(), "quantized_conv2d_packed"), 2) << "not both were packed";
  for (const char* op : {"quantized_matmul", "max_pool2d", "index_select"})
    EXPECT_FALSE(ran(planned, op)) << op << " ran apart from the packed convolutions";
  // Written in place: the weight, and the input's scale. Packed again.
  net.get_submodule("conv1").get_buffer("weight").neg_();
  net.get_submodule("conv2").get_buffer("input_scale").fill_(0.125);
  const Tensor rewritten = int8_layers_eagerly(net, x);
  EXPECT_GT((rewritten - eager).abs().amax().item<float>(), 0.1f) << "the new values changed nothing";
  EXPECT_EQ(net(x).to_vector<float>(), rewritten.to_vector<float>());
  int calls = 0;
  nn::ForwardHook count = [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
    ++calls;
    return Tensor();
  };
  HookHandle hook = net.get_submodule("conv2").register_forward_hook(count);
  EXPECT_EQ(net(x).to_vector<float>(), rewritten.to_vector<float>());
  EXPECT_EQ(calls, 1) << "the hook of the second layer did not run";
}

// A MatMul whose weight is a parameter, with its bias: under no_grad the
// plan packs the weight once (ABI 1.21's gemm_pack) and the product reads
// the packed form; a weight written in place is packed again.
// Linear layers (an ONNX file's Gemm imports as one), with and without the
// Relu after: each product from the weight packed once, with the bias and
// the ReLU in its epilogue, within 1e-5 of the layers; the plan says so; a
// weight written in place is seen (the plan is made again); a hook runs.
TEST(GraphPlan, LinearLayersRunFromTheirWeightsPackedOnce) {
  manual_seed(29);
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
      "layers": [{"name": "fc1", "type": "nn.Linear", "attrs": {"in_features": 40, "out_features": 70}},
                 {"name": "fc2", "type": "nn.Linear", "attrs": {"in_features": 70, "out_features": 33}}],
      "nodes": [{"layer": "fc1", "inputs": ["x"], "outputs": ["h"]},
                {"op": "Relu", "inputs": ["h"], "outputs": ["r"]},
                {"layer": "fc2", "inputs": ["r"], "outputs": ["y"]}]})");
  const Tensor x = randn({30, 40});
  const Tensor as_written = net(x).detach();  // grad mode: the layers and the op as written
  std::vector<std::string> planned;
  {
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), as_written, 1e-5);
    planned = nnp::test::ops_of_call(net, x);
  }
  if (!cpu_has_avx512()) GTEST_SKIP() << "the cpu backend packs weights for its AVX-512 GEMM, which this CPU lacks";
  EXPECT_EQ(std::count(planned.begin(), planned.end(), "gemm_packed"), 2) << "a Linear layer's weight was not packed";
  for (const char* op : {"gemm_epilogue", "matmul", "add", "relu"})
    EXPECT_FALSE(ran(planned, op)) << op << " ran apart from the packed products";
  Tensor w = net.named_parameters()[2].second;  // fc2.weight
  {
    NoGradGuard no_grad;
    w.mul_(-3.0);
  }
  const Tensor rewritten = net(x).detach();
  EXPECT_GT((rewritten - as_written).abs().amax().item<float>(), 0.01f) << "the new weight changed nothing";
  NoGradGuard no_grad;
  nnp::test::expect_close(net(x), rewritten, 1e-5);
  int calls = 0;
  HookHandle hook = net.named_children()[1].second.register_forward_hook(
      [&calls](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
        ++calls;
        return Tensor();
      });
  nnp::test::expect_close(net(x), rewritten, 1e-5);
  EXPECT_EQ(calls, 1) << "fc2's hook did not run";
}

// Attention's projections as ONNX exports them: three Transposes of one
// sequence-first input, each read by a MatMul with a constant weight and
// its bias. The plan lays the transposed input out once for the three
// products (each copied it before reading it as rows), and the results
// are the nodes' within 1e-5.
TEST(GraphPlan, TransposesOfOneInputThatProductsReadAreLaidOutOnce) {
  manual_seed(41);
  std::string tensors, nodes;
  for (const char* p : {"q", "k", "v"}) {
    tensors += std::string(tensors.empty() ? "" : ", ") + R"({"key": "w)" + p + R"(", "value": "w)" + p +
               R"(", "shape": [8, 6], "dtype": "f32", "parameter": true}, {"key": "b)" + p + R"(", "value": "b)" + p +
               R"(", "shape": [6], "dtype": "f32", "parameter": true})";
    nodes += std::string(R"({"op": "Transpose", "inputs": ["x"], "outputs": ["t)") + p +
             R"("], "attrs": {"perm": [1, 0, 2]}}, {"op": "MatMul", "inputs": ["t)" + p + R"(", "w)" + p +
             R"("], "outputs": ["m)" + p + R"("]}, {"op": "Add", "inputs": ["m)" + p + R"(", "b)" + p +
             R"("], "outputs": ["y)" + p + R"("]}, )";
  }
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [], "tensors": [)" + tensors +
                                         R"(], "nodes": [)" + nodes +
                                         R"({"op": "Add", "inputs": ["yq", "yk"], "outputs": ["s"]},
                {"op": "Mul", "inputs": ["s", "yv"], "outputs": ["y"]}]})");
  {
    NoGradGuard no_grad;
    for (auto& [name, p] : net.named_parameters()) p.copy_(randn(p.shape()));
  }
  const std::vector<std::pair<std::string, Tensor>> params = net.named_parameters();
  auto param = [&](const std::string& name) {
    for (const auto& [n, t] : params)
      if (n == name) return t;
    ADD_FAILURE() << "no parameter " << name;
    return Tensor();
  };
  const Tensor x = randn({5, 4, 8});  // [sequence, batch, embedding]
  NoGradGuard no_grad;
  net(x);  // makes the plan
  profiler::Profiler p;
  const Tensor y = net(x);
  int copies = 0;
  for (const profiler::Event& e : p.stop().events())
    if (e.kind == profiler::EventKind::Op && e.name == "contiguous" && e.bytes_allocated > 0) ++copies;
  EXPECT_EQ(copies, 1) << "the transposed input was not laid out once for the three products";
  const Tensor t = x.transpose(0, 1);
  auto projection = [&](const char* name) {
    return t.matmul(param(std::string("w") + name)) + param(std::string("b") + name);
  };
  nnp::test::expect_close(y, (projection("q") + projection("k")) * projection("v"), 1e-5);
}

// A post-norm transformer's residual: an Add whose one reader is a
// LayerNormalization over the last axis runs as one kernel (ABI 1.23), the
// residual read where it lies (a sequence-first sublayer's output,
// transposed); the values within 1e-5 of the nodes. A sum that broadcasts
// is not the kernel's: the nodes run as written, to the same values.
TEST(GraphPlan, AResidualAddAndTheLayerNormalizationAfterItRunAsOneKernel) {
  manual_seed(43);
  const std::string program = R"({"inputs": ["x", "p"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "g", "value": "g", "shape": [8], "dtype": "f32", "parameter": true},
                  {"key": "b", "value": "b", "shape": [8], "dtype": "f32", "parameter": true}],
      "nodes": [{"op": "Transpose", "inputs": ["p"], "outputs": ["pt"], "attrs": {"perm": [1, 0, 2]}},
                {"op": "Add", "inputs": ["x", "pt"], "outputs": ["s"]},
                {"op": "LayerNormalization", "inputs": ["s", "g", "b"], "outputs": ["y"],
                 "attrs": {"axis": -1, "epsilon": 0.001}}]})";
  nn::ModuleHandle net = nn::GraphModule(program);
  {
    NoGradGuard no_grad;
    for (auto& [name, p] : net.named_parameters()) p.copy_(randn(p.shape()));
  }
  const Tensor g = net.named_parameters()[0].second, b = net.named_parameters()[1].second;
  auto expected = [&](const Tensor& sum) {
    return nn::functional::layer_norm(sum, nn::functional::LayerNormFuncOptions({8}).weight(g).bias(b).eps(0.001));
  };
  NoGradGuard no_grad;
  const Tensor x = randn({5, 4, 8}), p = randn({4, 5, 8});
  nnp::test::expect_close(net.call({x, p}), expected(x + p.transpose(0, 1)), 1e-5);
  profiler::Profiler profile;
  net.call({x, p});
  std::vector<std::string> planned;
  for (const profiler::Event& e : profile.stop().events())
    if (e.kind == profiler::EventKind::Op) planned.push_back(e.name);
  EXPECT_EQ(std::count(planned.begin(), planned.end(), "add_layer_norm"), 1);
  for (const char* op : {"add", "layer_norm"})
    EXPECT_FALSE(ran(planned, op)) << op << " ran apart from the fused kernel";
  // [5, 4, 8] + [8]: a broadcast the kernel does not take; no bias.
  nn::ModuleHandle broadcast = nn::GraphModule(R"({"inputs": ["x", "r"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "g", "value": "g", "shape": [8], "dtype": "f32", "data": [1, 2, 3, 4, -1, -2, -3, 0.5]}],
      "nodes": [{"op": "Add", "inputs": ["x", "r"], "outputs": ["s"]},
                {"op": "LayerNormalization", "inputs": ["s", "g"], "outputs": ["y"]}]})");
  const Tensor r = randn({8});
  const Tensor scale = from_vector<float>({1, 2, 3, 4, -1, -2, -3, 0.5});
  nnp::test::expect_close(broadcast.call({x, r}),
                          nn::functional::layer_norm(x + r, nn::functional::LayerNormFuncOptions({8}).weight(scale)),
                          1e-5);
}

TEST(GraphPlan, AMatMulOfAConstantWeightRunsFromItPackedOnce) {
  manual_seed(23);
  nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "w", "value": "w", "shape": [16, 48], "dtype": "f32", "parameter": true},
                  {"key": "b", "value": "b", "shape": [48], "dtype": "f32", "parameter": true}],
      "nodes": [{"op": "MatMul", "inputs": ["x", "w"], "outputs": ["p"]},
                {"op": "Add", "inputs": ["p", "b"], "outputs": ["y"]}]})");
  {
    NoGradGuard no_grad;
    for (auto& [name, p] : net.named_parameters()) p.copy_(randn(p.shape()));
  }
  const Tensor x = randn({20, 16});
  const Tensor as_written = net(x).detach();
  std::vector<std::string> planned;
  {
    NoGradGuard no_grad;
    nnp::test::expect_close(net(x), as_written, 1e-5);
    planned = nnp::test::ops_of_call(net, x);
  }
  const bool packs = cpu_has_avx512();
  if (!packs) GTEST_SKIP() << "the cpu backend packs weights for its AVX-512 GEMM, which this CPU lacks";
  EXPECT_TRUE(ran(planned, "gemm_packed")) << "the weight was not packed";
  EXPECT_FALSE(ran(planned, "gemm_epilogue"));
  Tensor w = net.named_parameters()[0].second;
  {
    NoGradGuard no_grad;
    w.mul_(-3.0);
  }
  const Tensor rewritten = net(x).detach();
  NoGradGuard no_grad;
  nnp::test::expect_close(net(x), rewritten, 1e-5);
  EXPECT_GT((rewritten - as_written).abs().amax().item<float>(), 0.01f) << "the new weight changed nothing";
}
