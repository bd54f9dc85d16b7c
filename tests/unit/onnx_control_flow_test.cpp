// ONNX's control flow and sequences in imported graphs: If's branches and
// Loop's body read the enclosing graph's values, a Loop stops on its body's
// condition, sequences carry tensors between nodes; and a stranger's graph
// cannot loop forever, nest without bound, or hand a sequence to an op.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>

#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_error;
namespace fs = std::filesystem;
using Graph = ::onnx::GraphProto;
using NodeP = ::onnx::NodeProto;

void value_info(::onnx::ValueInfoProto* v, const std::string& name, int32_t elem, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

NodeP& node(Graph& g, const std::string& type, std::vector<std::string> in, std::vector<std::string> out) {
  NodeP& n = *g.add_node();
  n.set_op_type(type);
  for (const std::string& i : in) n.add_input(i);
  for (const std::string& o : out) n.add_output(o);
  return n;
}

void constant(Graph& g, const std::string& name, int32_t elem, std::vector<int64_t> dims, std::vector<float> values) {
  NodeP& n = node(g, "Constant", {}, {name});
  ::onnx::AttributeProto& a = *n.add_attribute();
  a.set_name("value");
  a.set_type(::onnx::AttributeProto::TENSOR);
  ::onnx::TensorProto& t = *a.mutable_t();
  t.set_data_type(elem);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) {
    if (elem == ::onnx::TensorProto::FLOAT)
      t.add_float_data(v);
    else if (elem == ::onnx::TensorProto::INT64)
      t.add_int64_data(static_cast<int64_t>(v));
    else
      t.add_int32_data(static_cast<int32_t>(v));
  }
}

::onnx::AttributeProto& graph_attr(NodeP& n, const std::string& name) {
  ::onnx::AttributeProto& a = *n.add_attribute();
  a.set_name(name);
  a.set_type(::onnx::AttributeProto::GRAPH);
  a.mutable_g()->set_name(name);
  return a;
}

class OnnxControlFlow : public ::testing::Test {
 protected:
  fs::path dir_ = fs::temp_directory_path() / ("nnp_onnx_control_" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }

  ::onnx::ModelProto model(int64_t opset = 17) {
    ::onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    m.mutable_graph()->set_name("g");
    return m;
  }
  std::string write(const ::onnx::ModelProto& m, const std::string& name = "model.onnx") {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
  }
};

// If: y = x * w when x's sum is positive, else x - w; both branches read w
// and x from the enclosing graph.
TEST_F(OnnxControlFlow, IfBranchesReadTheEnclosingGraph) {
  ::onnx::ModelProto m = model();
  Graph& g = *m.mutable_graph();
  value_info(g.add_input(), "x", ::onnx::TensorProto::FLOAT, {2});
  value_info(g.add_output(), "y", ::onnx::TensorProto::FLOAT, {2});
  constant(g, "w", ::onnx::TensorProto::FLOAT, {2}, {3, 4});
  constant(g, "zero", ::onnx::TensorProto::FLOAT, {}, {0});
  node(g, "ReduceSum", {"x"}, {"total"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("keepdims");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  node(g, "Greater", {"total", "zero"}, {"positive"});
  NodeP& branch = node(g, "If", {"positive"}, {"y"});
  Graph& then_g = *graph_attr(branch, "then_branch").mutable_g();
  node(then_g, "Mul", {"x", "w"}, {"product"});
  value_info(then_g.add_output(), "product", ::onnx::TensorProto::FLOAT, {2});
  Graph& else_g = *graph_attr(branch, "else_branch").mutable_g();
  node(else_g, "Sub", {"x", "w"}, {"difference"});
  value_info(else_g.add_output(), "difference", ::onnx::TensorProto::FLOAT, {2});
  nn::ModuleHandle module = nnp::onnx::load(write(m));
  EXPECT_EQ(module(from_vector<float>({1, 2})).to_vector<float>(), (std::vector<float>{3, 8}));
  EXPECT_EQ(module(from_vector<float>({-1, -2})).to_vector<float>(), (std::vector<float>{-4, -6}));
}

// Loop without a trip count: the body doubles the carried value and goes on
// while the iteration number is below the input's limit; the scan output
// collects each doubled value.
::onnx::ModelProto doubling_loop(::onnx::ModelProto m) {
  Graph& g = *m.mutable_graph();
  value_info(g.add_input(), "limit", ::onnx::TensorProto::INT64, {});
  value_info(g.add_output(), "final", ::onnx::TensorProto::FLOAT, {1});
  value_info(g.add_output(), "steps", ::onnx::TensorProto::FLOAT, {-1, 1});
  constant(g, "start", ::onnx::TensorProto::FLOAT, {1}, {1});
  constant(g, "go", ::onnx::TensorProto::BOOL, {}, {1});
  NodeP& loop = node(g, "Loop", {"", "go", "start"}, {"final", "steps"});
  Graph& body = *graph_attr(loop, "body").mutable_g();
  value_info(body.add_input(), "i", ::onnx::TensorProto::INT64, {});
  value_info(body.add_input(), "cond_in", ::onnx::TensorProto::BOOL, {});
  value_info(body.add_input(), "v", ::onnx::TensorProto::FLOAT, {1});
  node(body, "Add", {"v", "v"}, {"doubled"});
  node(body, "Identity", {"doubled"}, {"collected"});
  constant(body, "one", ::onnx::TensorProto::INT64, {}, {1});
  node(body, "Add", {"i", "one"}, {"next"});
  node(body, "Less", {"next", "limit"}, {"cond_out"});  // reads the enclosing graph's input
  for (const char* name : {"cond_out", "doubled", "collected"}) value_info(body.add_output(), name, 0, {});
  body.mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::BOOL);
  body.mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  body.mutable_output(2)->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  return m;
}

TEST_F(OnnxControlFlow, ALoopRunsUntilItsBodySaysStop) {
  nn::ModuleHandle module = nnp::onnx::load(write(doubling_loop(model())));
  nn::Outputs out = module.call_values({from_vector<int64_t>({4}, Shape{})});
  EXPECT_EQ(out.tensor(0).to_vector<float>(), (std::vector<float>{16}));
  EXPECT_EQ(out.tensor(1).shape(), (Shape{4, 1}));
  EXPECT_EQ(out.tensor(1).to_vector<float>(), (std::vector<float>{2, 4, 8, 16}));
}

// A body that always goes on, with no trip count: the loop is ended at its
// bound (2^20 iterations) with an error instead of running forever.
TEST_F(OnnxControlFlow, ALoopThatNeverStopsIsRefusedAfterItsBound) {
  ::onnx::ModelProto m = model();
  Graph& g = *m.mutable_graph();
  value_info(g.add_input(), "x", ::onnx::TensorProto::FLOAT, {1});
  value_info(g.add_output(), "y", ::onnx::TensorProto::FLOAT, {1});
  constant(g, "go", ::onnx::TensorProto::BOOL, {}, {1});
  NodeP& loop = node(g, "Loop", {"", "go", "x"}, {"y"});
  Graph& body = *graph_attr(loop, "body").mutable_g();
  value_info(body.add_input(), "i", ::onnx::TensorProto::INT64, {});
  value_info(body.add_input(), "cond_in", ::onnx::TensorProto::BOOL, {});
  value_info(body.add_input(), "v", ::onnx::TensorProto::FLOAT, {1});
  node(body, "Identity", {"cond_in"}, {"cond_out"});
  value_info(body.add_output(), "cond_out", ::onnx::TensorProto::BOOL, {});
  value_info(body.add_output(), "v", ::onnx::TensorProto::FLOAT, {1});
  nn::ModuleHandle module = nnp::onnx::load(write(m));
  expect_error([&] { module(from_vector<float>({1})); }, NNP_INVALID_ARGUMENT, {"Loop", "more than 1048576 iterations"});
}

TEST_F(OnnxControlFlow, SubgraphsNestedPastTheBoundAreRefused) {
  ::onnx::ModelProto m = model();
  Graph* g = m.mutable_graph();
  value_info(g->add_input(), "c", ::onnx::TensorProto::BOOL, {});
  value_info(g->add_output(), "out", ::onnx::TensorProto::BOOL, {});
  std::string result = "out";
  for (int depth = 0; depth < 14; ++depth) {  // If inside If inside If ...
    NodeP& branch = node(*g, "If", {"c"}, {result});
    Graph* then_g = graph_attr(branch, "then_branch").mutable_g();
    Graph* else_g = graph_attr(branch, "else_branch").mutable_g();
    node(*else_g, "Not", {"c"}, {"e" + std::to_string(depth)});
    value_info(else_g->add_output(), "e" + std::to_string(depth), ::onnx::TensorProto::BOOL, {});
    result = "t" + std::to_string(depth);
    value_info(then_g->add_output(), result, ::onnx::TensorProto::BOOL, {});
    g = then_g;
  }
  node(*g, "Identity", {"c"}, {result});
  expect_error([&] { nnp::onnx::load(write(m)); }, NNP_CORRUPT_DATA, {"nest deeper than 12"});
}

// SplitToSequence, SequenceAt and ConcatFromSequence: [[1, 2], [3, 4], [5, 6]]
// split into rows, the middle one taken, and all joined back reversed by
// SequenceInsert at the front.
TEST_F(OnnxControlFlow, SequencesCarryTensorsBetweenNodes) {
  ::onnx::ModelProto m = model();
  Graph& g = *m.mutable_graph();
  value_info(g.add_input(), "x", ::onnx::TensorProto::FLOAT, {3, 2});
  value_info(g.add_output(), "middle", ::onnx::TensorProto::FLOAT, {1, 2});
  value_info(g.add_output(), "count", ::onnx::TensorProto::INT64, {});
  value_info(g.add_output(), "joined", ::onnx::TensorProto::FLOAT, {4, 2});
  node(g, "SplitToSequence", {"x"}, {"rows"});
  constant(g, "one", ::onnx::TensorProto::INT64, {}, {1});
  constant(g, "front", ::onnx::TensorProto::INT64, {}, {0});
  node(g, "SequenceAt", {"rows", "one"}, {"middle"});
  node(g, "SequenceInsert", {"rows", "middle", "front"}, {"more"});
  node(g, "SequenceLength", {"more"}, {"count"});
  node(g, "ConcatFromSequence", {"more"}, {"joined"}).add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  nn::ModuleHandle module = nnp::onnx::load(write(m));
  nn::Outputs out = module.call_values({from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2})});
  EXPECT_EQ(out.tensor(0).to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(out.tensor(1).to_vector<int64_t>(), (std::vector<int64_t>{4}));
  EXPECT_EQ(out.tensor(2).to_vector<float>(), (std::vector<float>{3, 4, 1, 2, 3, 4, 5, 6}));
}

TEST_F(OnnxControlFlow, ASequenceGivenToAnOpIsRefusedNamingIt) {
  ::onnx::ModelProto m = model();
  Graph& g = *m.mutable_graph();
  value_info(g.add_input(), "x", ::onnx::TensorProto::FLOAT, {3, 2});
  value_info(g.add_output(), "y", ::onnx::TensorProto::FLOAT, {3, 2});
  node(g, "SplitToSequence", {"x"}, {"rows"});
  node(g, "Relu", {"rows"}, {"y"});
  nn::ModuleHandle module = nnp::onnx::load(write(m));
  expect_error([&] { module(from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2})); }, NNP_INVALID_ARGUMENT,
               {"Relu", "reads a sequence where a tensor is needed"});
}

}  // namespace
