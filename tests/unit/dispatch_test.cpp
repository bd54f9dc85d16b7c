// The one dispatch path (DESIGN §10): every op the dispatcher lists
// (nnp_api.op_info) shows in a profile under its name, and in an ONNX trace
// in the form the list gives it: nodes tagged with its name, a constant named
// after it, or a refusal that names it. The samples below call the ops
// through the public API; an op added to the dispatcher without one fails
// here.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <nnp/profiler.hpp>
#include <set>
#include <string>
#include <vector>

#include "onnx_runtime_client.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;
namespace F = nnp::nn::functional;
namespace fs = std::filesystem;
using Sample = std::function<Tensor(const Tensor& x)>;

struct Op {
  std::string name, backward;
  nnp_op_trace trace;
};

std::vector<Op> dispatched_ops() {
  std::vector<Op> ops;
  for (int32_t i = 0; i < api().op_count(); ++i) {
    nnp_op_info info{};
    info.struct_size = sizeof info;
    check(api().op_info(i, &info));
    ops.push_back({info.name, info.backward, info.trace});
  }
  return ops;
}

// One SGD step on a parameter made here (the fused sgd_step where the
// backend has it), its result added to x.
Tensor sgd_sample(const Tensor& x) {
  Tensor p = zeros({x.size(1)});
  p.requires_grad_();
  p.set_grad(ones({x.size(1)}));
  optim::SGD opt({p}, optim::SGDOptions(0.5));
  opt.step();
  return x + p.detach();
}

// A gradient scaler's unscale (1.27) of a parameter made here, the flag it
// sets added to x.
Tensor unscale_sample(const Tensor& x) {
  Tensor p = zeros({x.size(1)});
  p.requires_grad_();
  p.set_grad(ones({x.size(1)}));
  optim::SGD opt({p}, optim::SGDOptions(0.5));
  Tensor found = zeros({1});
  check(api().amp_unscale_grads(opt.get(), 0.5, found.get(), 0));
  return x + found;
}

// Each sample takes x, f32 [N, 3] (an export runs it at two batch sizes),
// and returns a tensor computed from it.
std::vector<Sample> samples() {
  std::vector<Sample> s;
  for (int32_t op = 0; op < NNP_UNARY_COUNT; ++op)
    s.push_back([op](const Tensor& x) { return Tensor::call(api().unary, static_cast<nnp_unary_op>(op), x.get()); });
  for (int32_t op = 0; op < NNP_BINARY_COUNT; ++op)
    s.push_back(
        [op](const Tensor& x) { return Tensor::call(api().binary, static_cast<nnp_binary_op>(op), x.get(), x.get()); });
  const int32_t dim = 1;
  for (int32_t op = 0; op < NNP_REDUCE_COUNT; ++op)
    s.push_back([op, dim](const Tensor& x) {
      return Tensor::call(api().reduce, static_cast<nnp_reduce_op>(op), x.get(), &dim, 1, 0, 1.0);
    });
  s.push_back([](const Tensor& x) { return where(x.gt(x.scalar_like(0)), x, x * 2.0); });
  s.push_back([](const Tensor& x) { return x.softmax(1); });
  s.push_back([](const Tensor& x) { return x.log_softmax(1); });
  s.push_back([](const Tensor& x) { return x.matmul(x.transpose(0, 1)); });
  s.push_back([](const Tensor& x) {
    const Tensor w = full({4, 3, 1, 1}, 0.5);
    return F::conv2d(x.reshape({x.size(0), 3, 1, 1}), w);
  });
  s.push_back([](const Tensor& x) {
    return F::max_pool2d(x.reshape({x.size(0), 1, 1, 3}), F::MaxPool2dFuncOptions({1, 2}));
  });
  s.push_back([](const Tensor& x) { return x.view({3, x.size(0)}); });
  s.push_back([](const Tensor& x) { return x.reshape({x.size(0) * 3}); });
  s.push_back([](const Tensor& x) { return x.unsqueeze(0).squeeze(0); });
  s.push_back([](const Tensor& x) { return x.permute({1, 0}); });
  s.push_back([](const Tensor& x) { return x.slice(1, 0, 2); });
  s.push_back([](const Tensor& x) { return x.unsqueeze(0).expand({2, x.size(0), 3}); });
  s.push_back([](const Tensor& x) { return x.transpose(0, 1).contiguous(); });
  s.push_back([](const Tensor& x) { return x.clone(); });
  s.push_back([](const Tensor& x) { return x.to(Dtype::f64); });
  s.push_back([](const Tensor& x) { return x.detach(); });
  s.push_back([](const Tensor& x) {
    Tensor y = zeros({2, 3});
    check(api().copy_into(y.get(), x.get()));
    return y;
  });
  s.push_back([](const Tensor& x) {
    Tensor y = zeros({2, 3});
    y.copy_(x);  // the in-place write of autograd's face
    return y;
  });
  s.push_back([](const Tensor& x) { return cat({x, x}, 0); });
  s.push_back([](const Tensor& x) { return x.index_select(1, from_vector<int64_t>({2, 0})); });
  s.push_back([](const Tensor& x) { return x.gather(1, full({2, 3}, 1, Dtype::i64)); });
  s.push_back([](const Tensor& x) { return x.scatter_add(1, full({2, 3}, 0, Dtype::i64), x); });
  s.push_back([](const Tensor& x) { return x + arange(0, 3, 1, Dtype::f32); });
  s.push_back([](const Tensor& x) { return x + rand({3}); });
  s.push_back([](const Tensor& x) { return quantize_per_tensor(x, 0.1, 3, kQUInt8).dequantize(); });
  s.push_back([](const Tensor& x) {
    return quantize_per_channel(x, full({3}, 0.1, Dtype::f64), zeros({3}, Dtype::i64), 1, kQInt8).dequantize();
  });
  // Dequantizing integers made in forward: the first refused op of its export.
  s.push_back([](const Tensor& x) { return Tensor::call(api().dequantize_per_tensor, x.to(Dtype::u8).get(), 0.1, 3); });
  s.push_back([](const Tensor& x) {
    const Tensor scales = full({3}, 0.1, Dtype::f64), zero_points = zeros({3}, Dtype::i64);
    return Tensor::call(api().dequantize_per_channel, x.to(Dtype::i8).get(), scales.get(), zero_points.get(), 1);
  });
  s.push_back([](const Tensor& x) {
    const Tensor q = x.to(Dtype::i8);
    return matmul_i8(q, q).to(Dtype::f32);
  });
  s.push_back([](const Tensor& x) { return fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127); });
  s.push_back([](const Tensor& x) {
    return fake_quantize_per_channel_affine(x, full({3}, 0.1), zeros({3}, Dtype::i32), 1, -128, 127);
  });
  s.push_back(sgd_sample);
  s.push_back(unscale_sample);
  s.push_back([](const Tensor& x) {  // graph mode's fused product (1.18): a GraphModule's plan, no gradient wanted
    static nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "w", "value": "w", "shape": [3, 4], "dtype": "f32",
                     "data": [1, -2, 3, -4, 5, -6, 7, -8, 9, -1, 2, -3]},
                    {"key": "b", "value": "b", "shape": [4], "dtype": "f32", "data": [0.5, -0.5, 1, -1]}],
        "nodes": [{"op": "MatMul", "inputs": ["x", "w"], "outputs": ["p"]},
                  {"op": "Add", "inputs": ["p", "b"], "outputs": ["q"]},
                  {"op": "Relu", "inputs": ["q"], "outputs": ["y"]}]})");
    return net(x);
  });
  s.push_back([](const Tensor& x) {  // the fused kernel (1.18): no gradient wanted of x or the constants
    return F::layer_norm(x, F::LayerNormFuncOptions({3}).weight(full({3}, 0.5)).bias(full({3}, 0.1)));
  });
  s.push_back([](const Tensor& x) {  // graph mode's elementwise chain (1.19): a GraphModule's plan
    static nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "b", "value": "b", "shape": [3], "dtype": "f32", "data": [0.5, -1, 2]}],
        "nodes": [{"op": "Mul", "inputs": ["x", "b"], "outputs": ["p"]},
                  {"op": "Relu", "inputs": ["p"], "outputs": ["q"]},
                  {"op": "Sub", "inputs": ["q", "x"], "outputs": ["y"]}]})");
    return net(x);
  });
  s.push_back([](const Tensor& x) {  // graph mode's attention (1.20): a GraphModule's plan
    static nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "kt", "value": "kt", "shape": [3, 4], "dtype": "f32",
                     "data": [1, -2, 3, -4, 5, -6, 7, -8, 9, -1, 2, -3]},
                    {"key": "v", "value": "v", "shape": [4, 3], "dtype": "f32",
                     "data": [0.5, -0.5, 1, -1, 2, 0, 1, 1, -2, 3, 0.25, 4]}],
        "nodes": [{"op": "MatMul", "inputs": ["x", "kt"], "outputs": ["s"]},
                  {"op": "Softmax", "inputs": ["s"], "outputs": ["p"], "attrs": {"axis": -1}},
                  {"op": "MatMul", "inputs": ["p", "v"], "outputs": ["y"]}]})");
    return net(x);
  });
  // graph mode's packed convolution (1.21): a GraphModule's plan, made here
  // (a module made inside an export's trace would trace its own making)
  nn::ModuleHandle packed = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
      "layers": [{"name": "conv", "type": "nn.Conv2d", "attrs": {"in_channels": 1, "out_channels": 2,
                  "kernel_size": 1}}],
      "nodes": [{"layer": "conv", "inputs": ["x"], "outputs": ["c"]},
                {"op": "Relu", "inputs": ["c"], "outputs": ["y"]}]})");
  s.push_back([packed](const Tensor& x) mutable {
    NoGradGuard no_grad;  // the layer's weight requires grad: the plan runs only without it
    return packed(x.reshape({1, 1, x.size(0), x.size(1)})).reshape({2, x.size(0), x.size(1)}).sum(0);
  });
  // graph mode's packed int8 convolution (1.22): a static int8 layer's plan
  nn::ModuleHandle quantized = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "tensors": [],
      "layers": [{"name": "conv", "type": "nn.quantized.Conv2d", "attrs": {"in_channels": 1, "out_channels": 2,
                  "kernel_size": 1}}],
      "nodes": [{"layer": "conv", "inputs": ["x"], "outputs": ["y"]}]})");
  s.push_back([quantized](const Tensor& x) mutable {
    return quantized(x.reshape({1, 1, x.size(0), x.size(1)})).reshape({2, x.size(0), x.size(1)}).sum(0);
  });
  // graph mode's product from a weight packed once (1.21): depth 9 and 32
  // columns, the least the cpu backend packs
  auto values = [](int count) {
    std::string text;
    for (int i = 0; i < count; ++i) text += (i ? ", " : "") + std::to_string((i % 7 - 3) * 0.25);
    return text;
  };
  nn::ModuleHandle product = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "w", "value": "w", "shape": [9, 32], "dtype": "f32", "data": [)" +
                                             values(9 * 32) + R"(]},
                  {"key": "b", "value": "b", "shape": [32], "dtype": "f32", "data": [)" +
                                             values(32) + R"(]}],
      "nodes": [{"op": "MatMul", "inputs": ["x", "w"], "outputs": ["p"]},
                {"op": "Add", "inputs": ["p", "b"], "outputs": ["y"]}]})");
  s.push_back([product](const Tensor& x) mutable { return product(cat({x, x, x}, 1)).slice(1, 0, 3); });
  s.push_back([](const Tensor& x) {  // graph mode's residual Add and LayerNormalization (1.23)
    static nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
        "tensors": [{"key": "r", "value": "r", "shape": [2, 3], "dtype": "f32", "data": [1, -2, 3, -4, 5, -6]},
                    {"key": "g", "value": "g", "shape": [3], "dtype": "f32", "data": [0.5, -1, 2]},
                    {"key": "b", "value": "b", "shape": [3], "dtype": "f32", "data": [0.1, 0.2, -0.3]}],
        "nodes": [{"op": "Add", "inputs": ["x", "r"], "outputs": ["s"]},
                  {"op": "LayerNormalization", "inputs": ["s", "g", "b"], "outputs": ["y"],
                   "attrs": {"axis": -1}}]})");
    return net(x);
  });
  // graph mode's DynamicQuantizeLinear on the device and packed ConvInteger (1.29)
  nn::ModuleHandle integer = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [],
      "tensors": [{"key": "w", "value": "w", "shape": [2, 1, 1, 1], "dtype": "u8", "data": [200, 17]},
                  {"key": "wz", "value": "wz", "shape": [], "dtype": "u8", "data": [100]}],
      "nodes": [{"op": "DynamicQuantizeLinear", "inputs": ["x"], "outputs": ["q", "qs", "qz"]},
                {"op": "ConvInteger", "inputs": ["q", "w", "qz", "wz"], "outputs": ["acc"]},
                {"op": "Cast", "inputs": ["acc"], "outputs": ["accf"], "attrs": {"to": 1}},
                {"op": "Mul", "inputs": ["accf", "qs"], "outputs": ["y"]}]})");
  s.push_back([integer](const Tensor& x) mutable {
    return integer(x.reshape({1, 1, x.size(0), x.size(1)})).reshape({2, x.size(0), x.size(1)}).sum(0);
  });
  s.push_back([](const Tensor& x) {  // the quantized layers' GEMM (1.19)
    return quantized_matmul(x, 0.05, 3, full({4, 3}, 2, Dtype::i8), full({4}, 0.1), full({4}, 1.0));
  });
  return s;
}

// The ops only a CPU feature of the cpu backend's kernels reaches (graph
// mode's packed forms): where the CPU lacks it, the plans run the layers
// and no sample can show them.
bool beyond_this_cpu(const std::string& op) {
#if defined(__x86_64__)
  if (op == "conv2d_packed" || op == "gemm_packed") return !__builtin_cpu_supports("avx512f");
  if (op == "quantized_conv2d_packed")
    return !__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512bw") ||
           !__builtin_cpu_supports("avx512vl");
  if (op == "conv2d_integer_packed") return !__builtin_cpu_supports("avx2");
  return false;
#else
  return op == "conv2d_packed" || op == "gemm_packed" || op == "quantized_conv2d_packed" ||
         op == "conv2d_integer_packed";
#endif
}

// A module whose forward is one sample, for the export.
struct SampleModule : nn::Module {
  Sample fn;
  explicit SampleModule(Sample f) : Module("Sample"), fn(std::move(f)) {}
  Tensor forward(const Tensor& x) override { return fn(x); }
};

TEST(Dispatcher, ListsEachOpOnceWithItsForm) {
  const std::vector<Op> ops = dispatched_ops();
  ASSERT_GT(ops.size(), 50u);
  std::set<std::string> names;
  for (const Op& op : ops) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name << " is listed twice";
    EXPECT_TRUE(op.trace == NNP_OP_TRACE_NODES || op.trace == NNP_OP_TRACE_CONSTANT || op.trace == NNP_OP_TRACE_REFUSED)
        << op.name;
  }
  nnp_op_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(api().op_info(api().op_count(), &info), NNP_NOT_FOUND);
  EXPECT_EQ(api().op_info(-1, &info), NNP_NOT_FOUND);
  info.struct_size = 0;
  EXPECT_EQ(api().op_info(0, &info), NNP_INVALID_ARGUMENT);
}

TEST(Dispatcher, EveryOpShowsInAProfileByItsName) {
  manual_seed(0);
  std::set<std::string> seen;
  for (const Sample& sample : samples()) {
    const Tensor x = randn({2, 3});
    profiler::Profiler recording;
    sample(x);
    for (const profiler::Event& e : recording.stop().events())
      if (e.kind == profiler::EventKind::Op) seen.insert(e.name);
  }
  for (const Op& op : dispatched_ops())
    EXPECT_TRUE(seen.count(op.name) || beyond_this_cpu(op.name)) << op.name << " left no profiler event";
}

TEST(Dispatcher, TheBackwardNodesAreTheOnesListed) {
  Tensor x = randn({2, 3});
  x.requires_grad_();
  std::map<std::string, std::string> backward;
  for (const Op& op : dispatched_ops()) backward[op.name] = op.backward;
  EXPECT_EQ(x.matmul(x.transpose(0, 1)).grad_fn_name(), backward["matmul"]);
  EXPECT_EQ(x.softmax(1).grad_fn_name(), backward["softmax"]);
  EXPECT_EQ(x.exp().grad_fn_name(), backward["exp"]);
  EXPECT_EQ(cat({x, x}, 0).grad_fn_name(), backward["cat"]);
  EXPECT_EQ(x.sum().grad_fn_name(), backward["sum"]);
  EXPECT_EQ(backward["eq"], "") << "comparisons record no node";
}

class DispatcherTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnp_dispatch_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(DispatcherTrace, EveryOpShowsInATraceInItsForm) {
  std::set<std::string> tagged, constants, refusals;
  int index = 0;
  for (const Sample& sample : samples()) {
    const std::string file = (dir_ / ("sample" + std::to_string(index++) + ".onnx")).string();
    auto module = std::make_shared<SampleModule>(sample);
    nn::ModuleHandle model(module);
    try {
      nnp::onnx::export_model(model, {randn({2, 3})}, file);
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), NNP_UNIMPLEMENTED) << e.what();
      refusals.insert(e.what());
      continue;
    }
    std::ifstream in(file, std::ios::binary);
    ::onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromIstream(&in)) << file;
    for (const auto& n : m.graph().node()) tagged.insert(n.doc_string());
    for (const auto& init : m.graph().initializer()) constants.insert(init.name());
  }
  for (const Op& op : dispatched_ops()) {
    if (op.trace == NNP_OP_TRACE_NODES) {
      EXPECT_TRUE(tagged.count(op.name) || beyond_this_cpu(op.name))
          << op.name << ": no node of the trace carries its name";
    } else if (op.trace == NNP_OP_TRACE_CONSTANT) {
      bool named = false;
      for (const std::string& c : constants) named = named || c.rfind(op.name, 0) == 0;
      EXPECT_TRUE(named) << op.name << ": no constant of the trace is named after it";
    } else {
      bool named = false;
      for (const std::string& r : refusals) named = named || r.find("onnx export: " + op.name) != std::string::npos;
      EXPECT_TRUE(named) << op.name << ": no refused export names it";
    }
  }
}

// The fused convolution, pooling and layer normalization, written by the
// tracer itself (Conv, MaxPool with ceil_mode and padding,
// LayerNormalization over two dimensions), give nnplug's values in ONNX
// Runtime.
TEST_F(DispatcherTrace, FusedConvolutionAndPoolingRunInOnnxRuntime) {
  manual_seed(3);
  const Tensor w = randn({4, 2, 3, 3}), bias = randn({4}), ln_weight = randn({4, 2});
  auto module = std::make_shared<SampleModule>([w, bias, ln_weight](const Tensor& x) {
    const Tensor y = F::conv2d(x, w, F::Conv2dFuncOptions().bias(bias).padding(1).stride({1, 2}));
    auto [values, indices] = F::max_pool2d_with_indices(y, F::MaxPool2dFuncOptions(2).padding(1).ceil_mode(true));
    const Tensor pooled = values + indices.to(Dtype::f32);  // the indices as PyTorch's: within each plane
    return F::layer_norm(pooled, F::LayerNormFuncOptions({4, 2}).weight(ln_weight).eps(1e-3));
  });
  nn::ModuleHandle model(module);
  const std::string file = (dir_ / "conv_pool.onnx").string();
  nnp::onnx::export_model(model, {randn({5, 2, 7, 6})}, file);  // no constant has the batch size in it
  std::ifstream in(file, std::ios::binary);
  ::onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromIstream(&in));
  EXPECT_EQ(m.doc_string(), "") << "the batch axis stays symbolic";
  std::multiset<std::string> written;
  for (const auto& n : m.graph().node()) written.insert(n.op_type() + ":" + n.doc_string());
  EXPECT_EQ(written.count("Conv:conv2d"), 1u);
  EXPECT_EQ(written.count("MaxPool:max_pool2d"), 1u);
  EXPECT_EQ(written.count("LayerNormalization:layer_norm"), 1u);
  const std::string reason = nnp::test::ort_unavailable();
  if (!reason.empty()) GTEST_SKIP() << "ONNX Runtime comparison skipped: " << reason;
  for (int64_t batch : {5, 3}) {
    const Tensor x = randn({batch, 2, 7, 6});
    nnp::test::expect_close(nnp::test::ort_run(file, x, file), model(x).contiguous().to_vector<float>(), 1e-5);
  }
}

// The fused entries: NULL with NNP_OK where no fused kernel applies (the
// caller composes), a refusal for a parameter struct the caller did not size.
TEST(FusedEntries, GiveNullWhereNoKernelAppliesAndRefuseUnsizedParameters) {
  nnp_conv2d_params conv{};
  conv.struct_size = sizeof conv;
  conv.stride[0] = conv.stride[1] = conv.dilation[0] = conv.dilation[1] = conv.groups = 1;
  const Tensor x = randn({1, 2, 5, 5}, Dtype::f64), w = randn({3, 2, 3, 3}, Dtype::f64);
  nnp_tensor* out = reinterpret_cast<nnp_tensor*>(&conv);  // must come back NULL
  EXPECT_EQ(api().conv2d_fused(x.get(), w.get(), nullptr, &conv, &out), NNP_OK) << api().last_error();
  EXPECT_EQ(out, nullptr) << "f64 takes the composed path";
  const Tensor xr = x.to(Device("reference"), Dtype::f32), wr = w.to(Device("reference"), Dtype::f32);
  EXPECT_EQ(api().conv2d_fused(xr.get(), wr.get(), nullptr, &conv, &out), NNP_OK);
  EXPECT_EQ(out, nullptr) << "the reference backend has no fused convolution";
  // (1.18) The activation: RELU clamps as the kernel writes; a 1.9-sized
  // struct has none; another value is refused.
  const Tensor xf = x.to(Dtype::f32), wf = w.to(Dtype::f32);
  conv.activation = NNP_ACTIVATION_RELU;
  const Tensor relu = Tensor::call(api().conv2d_fused, xf.get(), wf.get(), nullptr, &conv);
  conv.struct_size = NNP_CONV2D_PARAMS_SIZE_1_9;
  const Tensor plain = Tensor::call(api().conv2d_fused, xf.get(), wf.get(), nullptr, &conv);
  ASSERT_TRUE(relu.defined() && plain.defined());
  EXPECT_EQ(relu.to_vector<float>(), plain.relu().to_vector<float>());
  const std::vector<float> unclamped = plain.to_vector<float>();
  EXPECT_LT(*std::min_element(unclamped.begin(), unclamped.end()), 0.0f) << "the 1.9 struct's call read an activation";
  conv.struct_size = sizeof conv;
  conv.activation = 7;
  EXPECT_EQ(api().conv2d_fused(xf.get(), wf.get(), nullptr, &conv, &out), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("activation 7"), std::string::npos) << api().last_error();
  conv.activation = NNP_ACTIVATION_NONE;
  conv.struct_size = 0;
  EXPECT_EQ(api().conv2d_fused(x.to(Dtype::f32).get(), w.to(Dtype::f32).get(), nullptr, &conv, &out),
            NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("struct_size"), std::string::npos) << api().last_error();
  nnp_pool2d_params pool{};
  pool.struct_size = 0;
  nnp_tensor* values = nullptr;
  EXPECT_EQ(api().max_pool2d_fused(x.to(Dtype::f32).get(), &pool, 2, 2, &values, nullptr), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(values, nullptr);
}

// The fused layer normalization (1.18): NULL where the composition must run
// (f64, a gradient wanted, weights of another shape, the reference
// backend), the kernel's values elsewhere, equal to the composition's.
TEST(FusedEntries, LayerNormGivesNullWhereTheCompositionMustRun) {
  const Tensor x = randn({4, 3, 8}) * 3.0 + 100.0, w = randn({3, 8}), b = randn({3, 8});
  auto fused = [](const Tensor& x, const Tensor* w, const Tensor* b, int32_t k) {
    nnp_tensor* out = reinterpret_cast<nnp_tensor*>(&k);  // must be written
    EXPECT_EQ(api().layer_norm_fused(x.get(), w ? w->get() : nullptr, b ? b->get() : nullptr, k, 1e-5, &out), NNP_OK)
        << api().last_error();
    return Tensor::adopt(out);
  };
  EXPECT_FALSE(fused(x.to(Dtype::f64), nullptr, nullptr, 1).defined()) << "f64 takes the composed path";
  EXPECT_FALSE(fused(x.to(Device("reference")), nullptr, nullptr, 1).defined()) << "the reference has no kernel";
  EXPECT_FALSE(fused(x, &w, &b, 1).defined()) << "weights shaped as two dimensions, one normalized";
  Tensor needs_grad = w.clone().requires_grad_();
  EXPECT_FALSE(fused(x, &needs_grad, &b, 2).defined()) << "a gradient of the weight is wanted";
  EXPECT_EQ(api().layer_norm_fused(nullptr, nullptr, nullptr, 1, 1e-5, nullptr), NNP_INVALID_ARGUMENT);
  for (int32_t k : {1, 2}) {
    const Tensor wk = k == 2 ? w : w[0], bk = k == 2 ? b : b[1];
    const Tensor got = fused(x, &wk, &bk, k);
    ASSERT_TRUE(got.defined()) << k;
    Tensor composed;
    {
      Tensor grad_wanted = x.clone().requires_grad_();  // the composition runs where a gradient is wanted
      F::LayerNormFuncOptions options(k == 2 ? Shape{3, 8} : Shape{8});
      composed = F::layer_norm(grad_wanted, options.weight(wk).bias(bk)).detach();
    }
    nnp::test::expect_close(got, composed, 2e-5);
    const Tensor plain = fused(x, nullptr, nullptr, k);  // no weight or bias: scale 1, shift 0
    ASSERT_TRUE(plain.defined());
    EXPECT_NEAR(plain.mean().item<double>(), 0.0, 1e-5);
  }
}

}  // namespace
