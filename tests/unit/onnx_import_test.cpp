// ONNX import: files PyTorch's own exporter wrote (tests/unit/onnx_fixtures.py)
// give PyTorch's outputs; nnplug's exports come back as they left; imported
// models train; hostile files are refused naming the problem.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <set>

#include "onnx_runtime_client.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_close;
using nnp::test::expect_error;
using json = nlohmann::json;
namespace fs = std::filesystem;

const json& expected() {
  static const json all = [] {
    std::ifstream in(std::string(NNP_ONNX_FIXTURE_DIR) + "/expected.json");
    return json::parse(in);
  }();
  return all;
}

Tensor tensor_of(const json& t) {
  return from_vector(t["data"].get<std::vector<float>>(), t["dims"].get<std::vector<int64_t>>());
}

class PyTorchExport : public ::testing::TestWithParam<const char*> {};

TEST_P(PyTorchExport, ImportsAndGivesPyTorchsOutputs) {
  const std::string name = GetParam();
  nn::ModuleHandle model = nnp::onnx::load(std::string(NNP_ONNX_FIXTURE_DIR) + "/" + name + ".onnx");
  EXPECT_EQ(model.type_name(), "GraphModule");
  const json& e = expected()[name];
  expect_close(model(tensor_of(e["input"])), tensor_of(e["output"]), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Models, PyTorchExport, ::testing::Values("mlp", "cnn", "lstm", "encoder"));

TEST(OnnxImport, PyTorchsLayersBecomeBuiltInLayersWithItsKeys) {
  nn::ModuleHandle cnn = nnp::onnx::load(std::string(NNP_ONNX_FIXTURE_DIR) + "/cnn.onnx");
  std::vector<std::string> keys;
  for (const auto& [key, t] : cnn.state_dict()) keys.push_back(key);
  for (const char* key : {"0.weight", "0.bias", "3.weight", "3.bias", "7.weight", "7.bias"})
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  EXPECT_EQ(cnn.get_submodule("0").type_name(), "Conv2d");
  EXPECT_EQ(cnn.get_submodule("7").type_name(), "Linear");
}

TEST(OnnxImport, ImportedModelsTrain) {
  nn::ModuleHandle mlp = nnp::onnx::load(std::string(NNP_ONNX_FIXTURE_DIR) + "/mlp.onnx");
  auto params = mlp.parameters();
  ASSERT_EQ(params.size(), 4u);
  for (const Tensor& p : params) EXPECT_TRUE(p.requires_grad());
  manual_seed(7);
  Tensor x = randn({16, 64}), target = randn({16, 10});
  optim::SGD sgd(params, optim::SGDOptions(0.05));
  auto loss_of = [&] { return (mlp(x) - target).pow(2.0).mean(); };
  const double before = loss_of().item<double>();
  for (int step = 0; step < 5; ++step) {
    sgd.zero_grad();
    Tensor loss = loss_of();
    loss.backward();
    sgd.step();
  }
  EXPECT_LT(loss_of().item<double>(), before * 0.9);
}

class OnnxRoundTrip : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove(file_); }
  std::string file_ = (fs::temp_directory_path() / ("nnp_onnx_rt_" + std::to_string(::getpid()) + ".onnx")).string();
};

TEST_F(OnnxRoundTrip, NnplugExportsComeBackAsTheyLeft) {
  manual_seed(11);
  for (const char* spec : {
           R"({"type": "nn.Sequential", "children": [
               {"type": "nn.Conv2d", "in_channels": 2, "out_channels": 4, "kernel_size": 3, "padding": 1},
               {"type": "nn.BatchNorm2d", "num_features": 4}, {"type": "nn.GELU"},
               {"type": "nn.AvgPool2d", "kernel_size": 2}, {"type": "nn.Flatten"},
               {"type": "nn.LayerNorm", "normalized_shape": [64]}, {"type": "nn.Linear", "in_features": 64,
                "out_features": 3}, {"type": "nn.LogSoftmax", "dim": 1}]})",
           R"({"type": "nn.Sequential", "children": [
               {"type": "nn.TransformerEncoderLayer", "d_model": 8, "nhead": 2, "dim_feedforward": 16,
                "batch_first": true}, {"type": "nn.Flatten"}, {"type": "nn.Linear", "in_features": 40,
                "out_features": 2}]})"}) {
    nn::ModuleHandle model = nn::model_from_spec(spec);
    const bool conv = std::string(spec).find("Conv2d") != std::string::npos;
    Shape traced = conv ? Shape{3, 2, 8, 8} : Shape{3, 5, 8}, other = conv ? Shape{4, 2, 8, 8} : Shape{6, 5, 8};
    nnp::onnx::export_model(model, {randn(traced)}, file_);
    nn::ModuleHandle back = nnp::onnx::load(file_);
    model.eval();
    Tensor x = randn(other);
    expect_close(back(x), model(x), 1e-5);
    if (nnp::test::ort_unavailable().empty())  // the same file in ONNX Runtime
      expect_close(nnp::test::ort_run(file_, x, file_), model(x).contiguous().to_vector<float>(), 1e-5);
  }
}

// A model in f64: its Linear and Conv layers take the file's dtype (they
// are made in f32), and the values are the model's.
TEST_F(OnnxRoundTrip, AModelInF64ComesBackInF64) {
  manual_seed(12);
  nn::ModuleHandle model = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Conv2d", "in_channels": 1, "out_channels": 2, "kernel_size": 3}, {"type": "nn.Flatten"},
      {"type": "nn.Linear", "in_features": 18, "out_features": 3}]})");
  model.to(Dtype::f64);
  const Tensor x = randn({2, 1, 5, 5}).to(Dtype::f64);
  nnp::onnx::export_model(model, {x}, file_);
  nn::ModuleHandle back = nnp::onnx::load(file_);
  model.eval();
  const Tensor y = back(x);
  EXPECT_EQ(y.dtype(), Dtype::f64);
  EXPECT_LT((y - model(x)).abs().amax().item<double>(), 1e-12);
}

// ---- hostile files ----

class HostileOnnx : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnp_onnx_hostile_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "model");
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A valid one-node model: output = Relu(input) + w.
  ::onnx::ModelProto relu_model() {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    ::onnx::GraphProto& g = *m.mutable_graph();
    g.set_name("g");
    auto value = [](::onnx::ValueInfoProto* v, const char* name) {
      v->set_name(name);
      auto* t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(::onnx::TensorProto::FLOAT);
      t->mutable_shape()->add_dim()->set_dim_value(2);
    };
    value(g.add_input(), "input");
    value(g.add_output(), "output");
    ::onnx::TensorProto& w = *g.add_initializer();
    w.set_name("w");
    w.set_data_type(::onnx::TensorProto::FLOAT);
    w.add_dims(2);
    w.add_float_data(1);
    w.add_float_data(2);
    ::onnx::NodeProto& relu = *g.add_node();
    relu.set_op_type("Relu");
    relu.add_input("input");
    relu.add_output("r");
    ::onnx::NodeProto& add = *g.add_node();
    add.set_name("the_add");
    add.set_op_type("Add");
    add.add_input("r");
    add.add_input("w");
    add.add_output("output");
    return m;
  }
  std::string write(const ::onnx::ModelProto& m, const std::string& name = "model/m.onnx") {
    std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
  }
  fs::path dir_;
};

TEST_F(HostileOnnx, TheValidModelLoads) {
  nn::ModuleHandle m = nnp::onnx::load(write(relu_model()));
  EXPECT_EQ(m(from_vector<float>({-1, 3})).to_vector<float>(), (std::vector<float>{1, 5}));
}

TEST_F(HostileOnnx, GarbageAndTruncatedFilesAreRefused) {
  std::string path = (dir_ / "garbage.onnx").string();
  std::ofstream(path) << "this is not protobuf \xff\xff\xff";
  expect_error([&] { nnp::onnx::load(path); }, NNP_CORRUPT_DATA, {"not an ONNX model"});
  std::string good = write(relu_model());
  std::string bytes;
  relu_model().SerializeToString(&bytes);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  expect_error([&] { nnp::onnx::load(path); }, NNP_CORRUPT_DATA, {});
  expect_error([&] { nnp::onnx::load((dir_ / "model").string()); }, NNP_IO_ERROR, {"is a directory"});
}

TEST_F(HostileOnnx, UnsupportedOpsAreNamed) {
  ::onnx::ModelProto m = relu_model();
  ::onnx::NodeProto& pool = *m.mutable_graph()->mutable_node(1);
  pool.set_op_type("MaxRoiPool");  // an op the library does not run
  ::onnx::AttributeProto& shape = *pool.add_attribute();
  shape.set_name("pooled_shape");
  shape.set_type(::onnx::AttributeProto::INTS);
  shape.add_ints(1);
  shape.add_ints(1);
  expect_error([&] { nnp::onnx::load(write(m)); }, NNP_UNIMPLEMENTED, {"the_add", "MaxRoiPool"});
}

// ONNX's LpNormalization, which nnplug's library does not run, as an
// application registers it (nnp_api.register_graph_op): x divided by its
// p-norm along axis (here the only one).
nnp_status lp_normalization(const nnp_tensor* const* inputs, int32_t n_inputs, const nnp_attrs* attrs,
                            int32_t n_outputs, nnp_list* outputs, void*) {
  return nnp::detail::guard([&] {
    if (n_inputs != 1 || n_outputs != 1) throw Error(NNP_INVALID_ARGUMENT, "LpNormalization: one input, one output");
    int64_t p = 2;
    if (api().attrs_has(attrs, "p")) check(api().attrs_get_int(attrs, "p", &p));
    const Tensor x = Tensor::borrow(const_cast<nnp_tensor*>(inputs[0]));
    const Tensor norm = p == 1 ? x.abs().sum({-1}, true) : (x * x).sum({-1}, true).sqrt();
    check(api().list_append_tensor(outputs, "", (x / norm).get()));
  });
}

nnp_status always_fails(const nnp_tensor* const*, int32_t, const nnp_attrs*, int32_t, nnp_list*, void*) {
  api().set_error(NNP_UNIMPLEMENTED, "GlobalLpPool: this test's op never runs");
  return NNP_UNIMPLEMENTED;
}

// Import accepts an op type once something registers it, and the graph runs
// it with the node's attributes; the built-in ops are listed beside it, and
// a second registration, a bad name or an old struct is refused.
TEST_F(HostileOnnx, ARegisteredGraphOpRunsTheNodesOfItsType) {
  ::onnx::ModelProto m = relu_model();
  ::onnx::NodeProto& node = *m.mutable_graph()->mutable_node(0);
  node.set_op_type("LpNormalization");
  ::onnx::AttributeProto& p = *node.add_attribute();
  p.set_name("p");
  p.set_type(::onnx::AttributeProto::INT);
  p.set_i(1);
  const std::string path = write(m);
  expect_error([&] { nnp::onnx::load(path); }, NNP_UNIMPLEMENTED, {"LpNormalization", "graph_op_info"});

  nnp_graph_op op{};
  op.struct_size = sizeof op;
  op.op_type = "LpNormalization";
  op.doc = "x divided by its p-norm";
  op.run = lp_normalization;
  ASSERT_EQ(api().register_graph_op(nullptr, &op), NNP_OK) << api().last_error();
  nn::ModuleHandle model = nnp::onnx::load(path);
  // [-1, 3] / 4 + w, [1.5, 2.5] / 4 + w: exact in binary.
  EXPECT_EQ(model(from_vector<float>({-1, 3})).to_vector<float>(), (std::vector<float>{0.75, 2.75}));
  EXPECT_EQ(model(from_vector<float>({1.5, 2.5})).to_vector<float>(), (std::vector<float>{1.375, 2.625}));

  std::set<std::string> listed;
  for (int32_t i = 0; i < api().graph_op_count(); ++i) {
    nnp_graph_op info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(api().graph_op_info(i, &info), NNP_OK);
    listed.insert(info.op_type);
  }
  for (const char* type : {"LpNormalization", "Relu", "Gemm", "ConstantOfShape", "Split", "Where"})
    EXPECT_EQ(listed.count(type), 1u) << type;
  EXPECT_GE(listed.size(), 69u);  // the library's and LpNormalization

  op.op_type = "Relu";
  EXPECT_EQ(api().register_graph_op(nullptr, &op), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("'Relu' is already registered (by core)"), std::string::npos);
  op.op_type = "Lp-Normalization";
  EXPECT_EQ(api().register_graph_op(nullptr, &op), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("is not an ONNX op type"), std::string::npos);
  op.op_type = "GlobalLpPool";  // another op the library does not run
  op.struct_size = 16;
  EXPECT_EQ(api().register_graph_op(nullptr, &op), NNP_ABI_MISMATCH);

  // An op whose run fails fails the call, naming the op and keeping its message.
  op.struct_size = sizeof op;
  op.run = always_fails;
  ASSERT_EQ(api().register_graph_op(nullptr, &op), NNP_OK) << api().last_error();
  m.mutable_graph()->mutable_node(0)->set_op_type("GlobalLpPool");
  m.mutable_graph()->mutable_node(0)->clear_attribute();
  nn::ModuleHandle failing = nnp::onnx::load(write(m, "model/lppool.onnx"));
  expect_error(
      [&] {
        failing(from_vector<float>({1, 2}));
      },
      NNP_UNIMPLEMENTED, {"GraphModule: GlobalLpPool", "this test's op never runs"});
}

TEST_F(HostileOnnx, CountsFromTheFileAreCheckedBeforeAnythingIsMade) {
  ::onnx::ModelProto m = relu_model();
  ::onnx::TensorProto& repeats = *m.mutable_graph()->mutable_initializer(0);
  repeats.set_data_type(::onnx::TensorProto::INT64);
  repeats.clear_float_data();
  repeats.set_dims(0, 1);
  repeats.add_int64_data(int64_t{1} << 40);
  m.mutable_graph()->mutable_node(1)->set_op_type("Tile");
  nn::ModuleHandle tile = nnp::onnx::load(write(m));
  expect_error([&] { tile(from_vector<float>({1, 2})); }, NNP_INVALID_ARGUMENT, {"Tile", "too large"});
}

TEST_F(HostileOnnx, PadsFromTheFileAreCheckedBeforeAnythingIsMade) {
  auto pad_model = [&](int64_t before, int64_t after, const char* mode) {
    ::onnx::ModelProto m = relu_model();
    ::onnx::TensorProto& pads = *m.mutable_graph()->mutable_initializer(0);
    pads.set_data_type(::onnx::TensorProto::INT64);
    pads.clear_float_data();
    pads.set_dims(0, 2);
    pads.add_int64_data(before);
    pads.add_int64_data(after);
    ::onnx::NodeProto& pad = *m.mutable_graph()->mutable_node(1);
    pad.set_op_type("Pad");
    ::onnx::AttributeProto& a = *pad.add_attribute();
    a.set_name("mode");
    a.set_type(::onnx::AttributeProto::STRING);
    a.set_s(mode);
    return nnp::onnx::load(write(m));
  };
  nn::ModuleHandle fine = pad_model(1, 2, "edge");
  EXPECT_EQ(fine(from_vector<float>({-1, 3})).to_vector<float>(), (std::vector<float>{0, 0, 3, 3, 3}));
  nn::ModuleHandle huge = pad_model(int64_t{1} << 40, 0, "constant");
  expect_error([&] { huge(from_vector<float>({1, 2})); }, NNP_INVALID_ARGUMENT, {"Pad", "too large"});
  nn::ModuleHandle crop = pad_model(-1, 0, "constant");
  expect_error([&] { crop(from_vector<float>({1, 2})); }, NNP_UNIMPLEMENTED, {"Pad", "negative"});
  nn::ModuleHandle wrap = pad_model(1, 0, "wrap");
  expect_error([&] { wrap(from_vector<float>({1, 2})); }, NNP_UNIMPLEMENTED, {"Pad", "'wrap'"});
}

TEST_F(HostileOnnx, CyclesAndMissingInputsAreRefused) {
  ::onnx::ModelProto cycle = relu_model();
  cycle.mutable_graph()->mutable_node(0)->set_input(0, "output");  // Relu reads what Add writes after it
  expect_error([&] { nnp::onnx::load(write(cycle)); }, NNP_CORRUPT_DATA, {"cycle", "'the_add' (Add)", "(Relu)"});
  ::onnx::ModelProto missing = relu_model();
  missing.mutable_graph()->mutable_node(1)->set_input(1, "nowhere");
  expect_error([&] { nnp::onnx::load(write(missing)); }, NNP_CORRUPT_DATA, {"nowhere"});
}

// Node lists out of order, as converters leave them (a float16 converter
// appends its Cast nodes at the end), are sorted as ONNX Runtime sorts
// them: a subgraph's reads of the enclosing graph's values count, and
// initialisers stored beside the file are still read.
TEST_F(HostileOnnx, NodesOutOfOrderAreSorted) {
  ::onnx::ModelProto swapped = relu_model();
  swapped.mutable_graph()->mutable_node()->SwapElements(0, 1);  // Add before the Relu it reads
  EXPECT_EQ(nnp::onnx::load(write(swapped))(from_vector<float>({-1, 3})).to_vector<float>(),
            (std::vector<float>{1, 5}));

  // f16 inside, the Casts appended: Relu(x16), Cast(to f32), then Cast(input to f16).
  ::onnx::ModelProto half = relu_model();
  ::onnx::GraphProto& g = *half.mutable_graph();
  g.clear_node();
  g.clear_initializer();
  auto cast = [&](const char* from, const char* to, int32_t type) {
    ::onnx::NodeProto& n = *g.add_node();
    n.set_op_type("Cast");
    n.add_input(from);
    n.add_output(to);
    ::onnx::AttributeProto& a = *n.add_attribute();
    a.set_name("to");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(type);
  };
  ::onnx::NodeProto& relu = *g.add_node();
  relu.set_op_type("Relu");
  relu.add_input("x16");
  relu.add_output("r16");
  cast("r16", "output", ::onnx::TensorProto::FLOAT);
  cast("input", "x16", ::onnx::TensorProto::FLOAT16);
  EXPECT_EQ(nnp::onnx::load(write(half))(from_vector<float>({-1, 0.1f})).to_vector<float>(),
            (std::vector<float>{0, 0.0999755859375f}));  // 0.1 in f16

  // An If whose branches read the Relu's output, listed after it.
  ::onnx::ModelProto branching = relu_model();
  ::onnx::GraphProto& b = *branching.mutable_graph();
  b.clear_node();
  b.clear_initializer();
  ::onnx::TensorProto& cond = *b.add_initializer();
  cond.set_name("cond");
  cond.set_data_type(::onnx::TensorProto::BOOL);
  cond.add_int32_data(0);
  ::onnx::NodeProto& choice = *b.add_node();
  choice.set_op_type("If");
  choice.add_input("cond");
  choice.add_output("output");
  for (const char* branch : {"then_branch", "else_branch"}) {
    ::onnx::AttributeProto& a = *choice.add_attribute();
    a.set_name(branch);
    a.set_type(::onnx::AttributeProto::GRAPH);
    ::onnx::GraphProto& body = *a.mutable_g();
    body.set_name(branch);
    ::onnx::NodeProto& n = *body.add_node();
    n.set_op_type(std::string(branch) == "then_branch" ? "Identity" : "Neg");
    n.add_input("r");
    n.add_output(std::string(branch) + "_out");
    ::onnx::ValueInfoProto& out = *body.add_output();
    out.set_name(std::string(branch) + "_out");
    out.mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  }
  ::onnx::NodeProto& first = *b.add_node();
  first.set_op_type("Relu");
  first.add_input("input");
  first.add_output("r");
  EXPECT_EQ(nnp::onnx::load(write(branching))(from_vector<float>({-1, 3})).to_vector<float>(),
            (std::vector<float>{0, -3}));

  // Out of order with its weights in a file beside it.
  std::ofstream(dir_ / "model" / "weights.bin", std::ios::binary) << std::string(8, '\0');
  ::onnx::ModelProto external = swapped;
  ::onnx::TensorProto& w = *external.mutable_graph()->mutable_initializer(0);
  w.clear_float_data();
  w.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* entry = w.add_external_data();
  entry->set_key("location");
  entry->set_value("weights.bin");
  EXPECT_EQ(nnp::onnx::load(write(external))(from_vector<float>({-1, 3})).to_vector<float>(),
            (std::vector<float>{0, 3}));
}

// PyTorch's exporter merges equal initializers and reads the others through
// Identity nodes (the zero biases of two layers): each layer still gets its
// own weights and becomes a built-in layer, not a generic op.
TEST_F(HostileOnnx, LayersWhoseBiasComesThroughAnIdentityAreLayers) {
  ::onnx::ModelProto m = relu_model();
  ::onnx::GraphProto& g = *m.mutable_graph();
  g.clear_node();
  ::onnx::TensorProto& w = *g.mutable_initializer(0);  // "w": [2] -> a [2, 2] weight
  w.set_name("w");
  w.clear_dims();
  w.add_dims(2);
  w.add_dims(2);
  w.clear_float_data();
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) w.add_float_data(v);
  ::onnx::TensorProto& b = *g.add_initializer();
  b.set_name("b");
  b.set_data_type(::onnx::TensorProto::FLOAT);
  b.add_dims(2);
  b.add_float_data(0.5f);
  b.add_float_data(-0.5f);
  auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
    ::onnx::NodeProto& n = *g.add_node();
    n.set_op_type(op);
    for (const std::string& i : in) n.add_input(i);
    n.add_output(out);
    if (std::string(op) == "Gemm") {
      ::onnx::AttributeProto& t = *n.add_attribute();
      t.set_name("transB");
      t.set_type(::onnx::AttributeProto::INT);
      t.set_i(1);
    }
  };
  node("Identity", {"b"}, "b_again");
  node("Gemm", {"input", "w", "b"}, "h");
  *g.add_initializer() = w;
  g.mutable_initializer(2)->set_name("w2");
  node("Gemm", {"h", "w2", "b_again"}, "output");
  g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  g.mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  nn::ModuleHandle net = nnp::onnx::load(write(m));
  int linears = 0;
  for (const auto& [name, child] : net.named_children()) linears += child.type_name() == "Linear";
  EXPECT_EQ(linears, 2);
  // x [1, 2] = (1, -1): h = x W^T + b = (-0.5, -1.5); y = h W^T + b = (-3, -8)
  EXPECT_EQ(net(from_vector<float>({1, -1}, {1, 2})).to_vector<float>(), (std::vector<float>{-3, -8}));
}

// Opsets 1-10 give Slice's starts, ends and axes and Pad's pads and value
// as attributes. The version converter brings most files forward; a file it
// cannot convert (paddle2onnx's opset 9 OCR models) is read as written, so
// the ops read both forms.
TEST(OnnxOldForms, SliceAndPadReadTheirAttributes) {
  auto run = [](const std::string& node, const Tensor& x) {
    nn::ModuleHandle net = nn::GraphModule(R"({"inputs": ["x"], "outputs": ["y"], "layers": [], "tensors": [],
        "nodes": [)" + node + "]}");
    NoGradGuard no_grad;
    return net.call({x}).contiguous().to_vector<float>();
  };
  const Tensor x = from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(run(R"({"op": "Slice", "inputs": ["x"], "outputs": ["y"],
                    "attrs": {"starts": [1], "ends": [1000], "axes": [1]}})",
                x),
            (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(
      run(R"({"op": "Slice", "inputs": ["x"], "outputs": ["y"], "attrs": {"starts": [1, -2], "ends": [2, -1]}})", x),
      (std::vector<float>{4}));  // no axes: the first ones, negative ends counted from the end
  EXPECT_EQ(run(R"({"op": "Pad", "inputs": ["x"], "outputs": ["y"],
                    "attrs": {"pads": [0, 1, 0, 0], "value": 7.5}})",
                x),
            (std::vector<float>{7.5, 0, 1, 2, 7.5, 3, 4, 5}));
  EXPECT_EQ(run(R"({"op": "Pad", "inputs": ["x"], "outputs": ["y"],
                    "attrs": {"paddings": [1, 0, 0, 0], "mode": "edge"}})",
                x),
            (std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5}));
  expect_error([&] { run(R"({"op": "Slice", "inputs": ["x"], "outputs": ["y"], "attrs": {"starts": [1]}})", x); },
               NNP_INVALID_ARGUMENT, {"Slice", "ends"});
}

// onnx::checker passes a graph output that names no value; ONNX's version
// converter (opsets below 13) then dereferenced the value it did not find
// (found by fuzz_onnx). Refused before the converter, at every opset, and
// in subgraphs too.
TEST_F(HostileOnnx, GraphOutputsThatNameNoValueAreRefused) {
  for (int64_t opset : {11, 17}) {
    ::onnx::ModelProto m = relu_model();
    m.mutable_opset_import(0)->set_version(opset);
    m.mutable_graph()->mutable_output(0)->set_name("s\xfe\xff\xffted");
    expect_error([&] { nnp::onnx::load(write(m)); }, NNP_CORRUPT_DATA, {"graph output", "ted'", "no input"});
  }
  ::onnx::ModelProto branch = relu_model();
  ::onnx::GraphProto& g = *branch.mutable_graph();
  ::onnx::NodeProto& add = *g.mutable_node(1);
  add.set_output(0, "sum");
  ::onnx::NodeProto& positive = *g.add_node();  // a bool condition from the outer scope
  positive.set_op_type("ReduceMax");
  positive.add_input("sum");
  positive.add_output("largest");
  positive.add_attribute()->set_name("keepdims");
  positive.mutable_attribute(0)->set_type(::onnx::AttributeProto::INT);
  positive.mutable_attribute(0)->set_i(0);
  ::onnx::NodeProto& cast = *g.add_node();
  cast.set_op_type("Cast");
  cast.add_input("largest");
  cast.add_output("cond");
  cast.add_attribute()->set_name("to");
  cast.mutable_attribute(0)->set_type(::onnx::AttributeProto::INT);
  cast.mutable_attribute(0)->set_i(::onnx::TensorProto::BOOL);
  ::onnx::NodeProto& when = *g.add_node();
  when.set_op_type("If");
  when.add_input("cond");
  when.add_output("output");
  for (const char* name : {"then_branch", "else_branch"}) {
    ::onnx::AttributeProto& a = *when.add_attribute();
    a.set_name(name);
    a.set_type(::onnx::AttributeProto::GRAPH);
    a.mutable_g()->set_name(name);
    ::onnx::ValueInfoProto& out = *a.mutable_g()->add_output();
    out.set_name("sum");  // the enclosing graph's value: allowed
    out.mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  }
  nn::ModuleHandle fine = nnp::onnx::load(write(branch));
  EXPECT_EQ(fine(from_vector<float>({-1, 3})).to_vector<float>(), (std::vector<float>{1, 5}));
  when.mutable_attribute(1)->mutable_g()->mutable_output(0)->set_name("nowhere");
  expect_error([&] { nnp::onnx::load(write(branch)); }, NNP_CORRUPT_DATA,
               {"subgraph 'else_branch'", "'nowhere'", "enclosing graph"});
  // The file the fuzzer found (opset 11, NonMaxSuppression's test with its output renamed).
  expect_error(
      [&] { nnp::onnx::load(std::string(NNP_FUZZ_CORPUS_DIR) + "/onnx/regression_output_names_no_value.onnx"); },
      NNP_CORRUPT_DATA, {"graph output", "no input"});
}

// libonnx's shape inference crashed (a null dereference) on this ConvTranspose
// (found by fuzz_onnx); the opset upgrade runs in a child process, so the
// crash is an error naming the model (opset 8: nothing else reads it) or,
// from opset 9, the model is read as it is.
TEST_F(HostileOnnx, ACrashInOnnxsConverterIsAnError) {
  ::onnx::ModelProto m;
  std::ifstream in(std::string(NNP_FUZZ_CORPUS_DIR) + "/onnx/regression_conv_transpose_shape_inference.onnx",
                   std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in));
  m.mutable_opset_import(0)->set_version(8);
  const std::string path = write(m);
  expect_error([&] { nnp::onnx::load(path); }, NNP_UNIMPLEMENTED, {path, "version converter", "signal"});
  m.mutable_opset_import(0)->set_version(11);
  const std::string direct = write(m);
  try {
    nnp::onnx::load(direct);
  } catch (const nnp::Error& e) {
    EXPECT_NE(std::string(e.what()).find(direct), std::string::npos) << e.what();
  }
}

TEST_F(HostileOnnx, HugeOrShortInitialisersAreRefused) {
  ::onnx::ModelProto huge = relu_model();
  ::onnx::TensorProto& w = *huge.mutable_graph()->mutable_initializer(0);
  w.clear_float_data();
  w.set_dims(0, int64_t{1} << 40);
  w.set_raw_data("1234");
  expect_error([&] { nnp::onnx::load(write(huge)); }, NNP_CORRUPT_DATA, {"w"});
  ::onnx::ModelProto overflow = relu_model();
  ::onnx::TensorProto& o = *overflow.mutable_graph()->mutable_initializer(0);
  for (int i = 0; i < 7; ++i) o.add_dims(int64_t{1} << 40);
  expect_error([&] { nnp::onnx::load(write(overflow)); }, NNP_CORRUPT_DATA, {"w"});
}

// PyTorch's LSTM export with R (then B) cut to half its last dimension, the
// tensor itself consistent: its gates were copied by the shape the node's
// hidden_size implies, reading past the data (found by fuzz_onnx).
TEST_F(HostileOnnx, LstmWeightsOfAnotherShapeThanTheNodeNeedsAreRefused) {
  for (int input : {2, 3}) {
    ::onnx::ModelProto m;
    std::ifstream in(std::string(NNP_ONNX_FIXTURE_DIR) + "/lstm.onnx", std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&in));
    ::onnx::GraphProto& g = *m.mutable_graph();
    std::string name;
    for (const ::onnx::NodeProto& n : g.node())
      if (n.op_type() == "LSTM") name = n.input(input);
    ASSERT_FALSE(name.empty());
    bool cut = false;
    for (::onnx::TensorProto& t : *g.mutable_initializer()) {
      if (t.name() != name) continue;
      ASSERT_TRUE(t.has_raw_data());
      const int last = t.dims_size() - 1;
      t.set_dims(last, t.dims(last) / 2);
      t.set_raw_data(t.raw_data().substr(0, t.raw_data().size() / 2));
      cut = true;
    }
    ASSERT_TRUE(cut) << name << " is not an initialiser";
    expect_error([&] { nnp::onnx::load(write(m)); }, NNP_CORRUPT_DATA,
                 {input == 2 ? "R (the recurrent weights) '" : "B (the biases) '", "' has shape",
                  "where its hidden_size and direction need"});
  }
}

TEST_F(HostileOnnx, ExternalDataOutsideTheModelsFolderIsRefused) {
  std::ofstream(dir_ / "secret.bin", std::ios::binary) << std::string(8, '\0');
  std::ofstream(dir_ / "model" / "weights.bin", std::ios::binary) << std::string(8, '\0');
  auto with_location = [&](const std::string& location) {
    ::onnx::ModelProto m = relu_model();
    ::onnx::TensorProto& w = *m.mutable_graph()->mutable_initializer(0);
    w.clear_float_data();
    w.set_data_location(::onnx::TensorProto::EXTERNAL);
    auto* entry = w.add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    return write(m);
  };
  for (const std::string& outside : {std::string("../secret.bin"), (dir_ / "secret.bin").string()})
    expect_error([&] { nnp::onnx::load(with_location(outside)); }, NNP_INVALID_ARGUMENT,
                 {"outside the model's folder"});
  nn::ModuleHandle beside = nnp::onnx::load(with_location("weights.bin"));  // beside the model: read
  EXPECT_EQ(beside(from_vector<float>({1, -1})).to_vector<float>(), (std::vector<float>{1, 0}));
}

}  // namespace

namespace {

// A layer type of the application's (as a plugin's would be): x * weight + shift.
struct ScaleShift : nn::Module {
  Tensor weight;
  double shift;
  bool negate;
  explicit ScaleShift(const nn::Attrs& a) : Module("ScaleShift"), shift(a.real("shift")), negate(a.boolean("negate")) {
    weight = register_parameter("weight", randn({a.integer("features")}));
  }
  Tensor forward(const Tensor& x) override {
    Tensor y = x * weight + shift;
    return negate ? -y : y;
  }
};
const std::vector<nn::AttrDecl> kScaleShiftAttrs{{"features", NNP_ATTR_INT, true, nullptr, "size of the last dim"},
                                                 {"shift", NNP_ATTR_FLOAT, false, "0.5", "added"},
                                                 {"negate", NNP_ATTR_BOOL, false, "false", "negate the result"}};

// The same layer with its own lowering: Mul and Add nodes (to_onnx).
nnp_status scale_shift_to_onnx(nnp_onnx_graph* graph, nnp_module* module, const nnp_attrs* attrs,
                               const char* const* inputs, int32_t, const char* const* outputs, int32_t, void*) {
  return nnp::detail::guard([&] {
    nnp::onnx::Graph g(graph);
    const nn::Attrs a = nn::Attrs::view(attrs);
    const std::string product = g.new_name("scaled");
    g.add_node("Mul", {inputs[0], g.tensor_name(module, "weight")}, {product});
    const std::string shift = g.constant(full({}, a.real("shift")));
    g.add_node("Add", {product, shift}, {outputs[0]});
  });
}

void register_scale_shift_types() {
  static const bool done = [] {
    nn::register_layer<ScaleShift>(nullptr, "test.ScaleShift", "x * weight + shift", kScaleShiftAttrs);
    auto declared = nn::layer_type<ScaleShift>("test.LoweredScaleShift", "with to_onnx", kScaleShiftAttrs);
    nnp_layer_type lowered = declared.get();  // points into declared, which outlives the registration
    lowered.to_onnx = scale_shift_to_onnx;
    check(api().register_layer_type(nullptr, &lowered));
    return true;
  }();
  (void)done;
}

// Layers of plugins (and of the application) without a lowering travel as
// nodes in their vendor's domain (test.ScaleShift: op ScaleShift in domain
// test) with their attributes and tensors, and import makes the layer again;
// one with to_onnx is written as the nodes it chose.
TEST_F(OnnxRoundTrip, PluginLayersTravelAsVendorNodesOrTheirOwnLowering) {
  register_scale_shift_types();
  manual_seed(12);
  nn::ModuleHandle model = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Linear", "in_features": 4, "out_features": 6},
      {"type": "test.ScaleShift", "features": 6, "shift": 0.25, "negate": true},
      {"type": "test.LoweredScaleShift", "features": 6, "shift": -1.5},
      {"type": "nn.Linear", "in_features": 6, "out_features": 2}]})");
  nnp::onnx::export_model(model, {randn({3, 4})}, file_);
  std::ifstream in(file_, std::ios::binary);
  ::onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromIstream(&in));
  std::vector<std::string> ops;
  for (const auto& n : written.graph().node())
    if (n.op_type() != "Identity") ops.push_back((n.domain().empty() ? "" : n.domain() + ".") + n.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Gemm", "test.ScaleShift", "Mul", "Add", "Gemm"}));
  nn::ModuleHandle back = nnp::onnx::load(file_);
  EXPECT_NE(back.repr().find("ScaleShift"), std::string::npos);
  Tensor x = randn({5, 4});
  model.eval();
  expect_close(back(x), model(x), 1e-6);
}

}  // namespace
