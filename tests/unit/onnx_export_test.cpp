// ONNX export: the written graphs (node types, initialiser names, the
// symbolic batch), and ONNX Runtime - a client nnplug did not write - giving
// nnplug's outputs from them at the traced batch size and at another.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <nnp/quantization.hpp>
#include <sstream>

#include "onnx_runtime_client.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_close;
using nnp::test::expect_error;
using nnp::test::ort_run;
using nnp::test::ort_unavailable;
using json = nlohmann::json;
namespace fs = std::filesystem;

class OnnxExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnp_onnx_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

::onnx::ModelProto read_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ::onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromIstream(&in)) << path;
  return model;
}

std::vector<std::string> op_types(const ::onnx::ModelProto& m) {
  std::vector<std::string> out;
  for (const auto& n : m.graph().node())
    if (n.op_type() != "Identity") out.push_back(n.op_type());
  return out;
}

// Exports model traced at batch 3, checks ONNX Runtime against nnplug at
// batches 3 and 5 (the batch axis is symbolic).
void check_round_trip(nn::ModuleHandle model, const std::vector<int64_t>& item_shape, const std::string& file) {
  std::vector<int64_t> traced{3}, other{5};
  traced.insert(traced.end(), item_shape.begin(), item_shape.end());
  other.insert(other.end(), item_shape.begin(), item_shape.end());
  const bool mode = model.is_training();
  nnp::onnx::export_model(model, {randn(traced)}, file);
  EXPECT_EQ(model.is_training(), mode) << "export restores the module's mode";
  ::onnx::ModelProto written = read_model(file);
  EXPECT_EQ(written.doc_string(), "") << "the batch axis stays symbolic";
  model.eval();
  const std::string reason = ort_unavailable();
  if (!reason.empty()) GTEST_SKIP() << "ONNX Runtime comparison skipped: " << reason;
  for (const std::vector<int64_t>& shape : {traced, other}) {
    Tensor x = randn(shape);
    Tensor want = model(x);
    expect_close(ort_run(file, x, file), want.contiguous().to_vector<float>(), 1e-5);
  }
}

TEST_F(OnnxExport, MlpBecomesGemmsWithStateDictInitialisers) {
  manual_seed(1);
  nn::ModuleHandle mlp = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Linear", "in_features": 8, "out_features": 16}, {"type": "nn.ReLU"},
      {"type": "nn.Linear", "in_features": 16, "out_features": 4}]})");
  mlp.train();
  check_round_trip(mlp, {8}, path("mlp.onnx"));
  ::onnx::ModelProto m = read_model(path("mlp.onnx"));
  EXPECT_EQ(op_types(m), (std::vector<std::string>{"Gemm", "Relu", "Gemm"}));
  std::vector<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.push_back(t.name());
  EXPECT_EQ(inits, (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(m.opset_import(0).version(), 17);
  EXPECT_EQ(m.graph().input(0).name(), "input");
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
  EXPECT_EQ(m.graph().output(0).name(), "output");
  EXPECT_EQ(m.graph().output(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
}

TEST_F(OnnxExport, W3CnnBecomesConvPoolGemm) {
  manual_seed(2);
  nn::ModuleHandle cnn = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Conv2d", "in_channels": 1, "out_channels": 16, "kernel_size": 5}, {"type": "nn.ReLU"},
      {"type": "nn.MaxPool2d", "kernel_size": 2},
      {"type": "nn.Conv2d", "in_channels": 16, "out_channels": 32, "kernel_size": 5}, {"type": "nn.ReLU"},
      {"type": "nn.MaxPool2d", "kernel_size": 2}, {"type": "nn.Flatten"},
      {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
  check_round_trip(cnn, {1, 28, 28}, path("cnn.onnx"));
  EXPECT_EQ(op_types(read_model(path("cnn.onnx"))),
            (std::vector<std::string>{"Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool", "Flatten", "Gemm"}));
}

TEST_F(OnnxExport, NormalisationPoolingAndActivationLayers) {
  manual_seed(3);
  nn::ModuleHandle model = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Conv2d", "in_channels": 2, "out_channels": 4, "kernel_size": 3, "padding": "same",
       "bias": false},
      {"type": "nn.BatchNorm2d", "num_features": 4}, {"type": "nn.GELU"},
      {"type": "nn.AvgPool2d", "kernel_size": 2, "padding": 1, "count_include_pad": false},
      {"type": "nn.Conv2d", "in_channels": 4, "out_channels": 4, "kernel_size": 2, "stride": 2, "groups": 2,
       "dilation": 1},
      {"type": "nn.Flatten"}, {"type": "nn.LayerNorm", "normalized_shape": [16]}, {"type": "nn.SiLU"},
      {"type": "nn.Dropout", "p": 0.5}, {"type": "nn.Linear", "in_features": 16, "out_features": 3},
      {"type": "nn.Softmax", "dim": -1}]})");
  // Running statistics that are not the defaults, so BatchNormalization's inputs matter.
  model.train();
  for (int i = 0; i < 3; ++i) model(randn({6, 2, 8, 8}) * 2.0 + 1.0);
  check_round_trip(model, {2, 8, 8}, path("norms.onnx"));
  std::vector<std::string> ops = op_types(read_model(path("norms.onnx")));
  for (const char* op : {"Conv", "BatchNormalization", "Erf", "AveragePool", "LayerNormalization", "Softmax"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
}

TEST_F(OnnxExport, TransformerEncoderTracesThroughItsOps) {
  manual_seed(4);
  nn::ModuleHandle encoder = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.TransformerEncoderLayer", "d_model": 16, "nhead": 4, "dim_feedforward": 32, "dropout": 0.1,
       "batch_first": true},
      {"type": "nn.Flatten"}, {"type": "nn.Linear", "in_features": 112, "out_features": 5}]})");
  check_round_trip(encoder, {7, 16}, path("encoder.onnx"));
}

// A reduction of a 0-d tensor (the largest of a scalar: DynamicQuantizeLinear's
// range over an already reduced value) is itself; written with an empty
// "axes" it failed onnx::checker and so nnp::compile of any model with one.
struct ScalesByItsSum : nn::Module {
  ScalesByItsSum() : Module("ScalesByItsSum") {}
  Tensor forward(const Tensor& x) override { return x * x.sum().amax() + x.amin().amin(); }
};
TEST_F(OnnxExport, AReductionOfAScalarIsWritten) {
  manual_seed(9);
  nn::ModuleHandle model(nn::make<ScalesByItsSum>());
  const Tensor x = randn({3, 4});
  nnp::onnx::export_model(model, {x}, path("scalar.onnx"));
  nn::ModuleHandle back = nnp::onnx::load(path("scalar.onnx"));
  expect_close(back(x), model(x), 1e-6);
}

TEST_F(OnnxExport, FixedBatchAndNames) {
  manual_seed(5);
  nn::ModuleHandle mlp = nn::model_from_spec(R"({"type": "nn.Linear", "in_features": 4, "out_features": 2})");
  nnp::onnx::ExportOptions options;
  options.fixed_batch = true;
  options.opset = 13;
  options.input_names = {"features"};
  options.output_names = {"logits"};
  nnp::onnx::export_model(mlp, {randn({3, 4})}, path("fixed.onnx"), options);
  ::onnx::ModelProto m = read_model(path("fixed.onnx"));
  EXPECT_EQ(m.opset_import(0).version(), 13);
  EXPECT_EQ(m.graph().input(0).name(), "features");
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 3);
  EXPECT_EQ(m.graph().output(0).name(), "logits");
}

TEST_F(OnnxExport, RefusalsWriteNothing) {
  nn::ModuleHandle mlp = nn::model_from_spec(R"({"type": "nn.Linear", "in_features": 4, "out_features": 2})");
  const std::string file = path("refused.onnx");
  nnp::onnx::ExportOptions options;
  options.opset = 9;
  expect_error(
      [&] {
        nnp::onnx::export_model(mlp, {randn({3, 4})}, file, options);
      },
      NNP_INVALID_ARGUMENT, {"opset 9 is not written; use 13 to 17"});
  expect_error([&] { nnp::onnx::export_model(mlp, {}, file); }, NNP_INVALID_ARGUMENT, {"at least one example input"});
  expect_error([&] { nnp::onnx::export_model(mlp, {randn({3, 5})}, file); }, NNP_SHAPE_MISMATCH, {""});
  // An op with no ONNX form (the int8 layers themselves are written as nodes
  // of their own domain, nn.quantized, which only nnplug reads).
  struct Quantizing : nn::Module {
    Quantizing() : Module("Quantizing") {}
    Tensor forward(const Tensor& x) override { return quantize_per_tensor(x, 0.1, 0, kQInt8).dequantize(); }
  };
  auto quantizing = std::make_shared<Quantizing>();
  nn::ModuleHandle quantized(quantizing);
  expect_error(
      [&] {
        nnp::onnx::export_model(quantized, {randn({3, 4})}, file);
      },
      NNP_UNIMPLEMENTED, {"quantize_per_tensor has no ONNX form in this exporter"});
  expect_error(
      [&] {
        nnp::onnx::export_model(mlp, {randn({3, 4})}, path("missing/folder/x.onnx"));
      },
      NNP_IO_ERROR, {"cannot create"});
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
