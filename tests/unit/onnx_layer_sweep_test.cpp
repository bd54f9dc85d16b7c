// Every built-in layer ONNX can express, one file each: exported by nnplug,
// run by ONNX Runtime (one node process for the whole sweep) and imported
// back by nnp::onnx::load, all three compared with nnplug's own outputs at
// the traced batch and, where the batch axis stayed symbolic, at another.
// The layers ONNX cannot express are refused naming the layer. The README's
// ONNX table is this file's list.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <set>
#include <string>
#include <vector>

#include "onnx_runtime_client.hpp"
#include "test_support.hpp"

namespace {

using namespace nnp;
using json = nlohmann::json;
namespace fs = std::filesystem;

// One input: its shape after the batch, and what values it holds.
struct Input {
  std::vector<int64_t> item_shape;
  enum Kind { Normal, Probability, Sign, Index } kind = Normal;
  int64_t classes = 0;  // Index: values in [0, classes)
};
Input probabilities(std::vector<int64_t> shape) { return {std::move(shape), Input::Probability}; }
Input signs(std::vector<int64_t> shape) { return {std::move(shape), Input::Sign}; }
Input indices(std::vector<int64_t> shape, int64_t classes) { return {std::move(shape), Input::Index, classes}; }

struct SweepCase {
  std::string name;  // the test's name
  std::string spec;  // the model, as nnplug's JSON spec
  std::vector<Input> inputs;
  bool batch_norm_statistics = false;  // run in training mode first, so the running statistics matter
};

std::string layer(const std::string& type, const std::string& attrs = "") {
  return R"({"type": "nn.)" + type + "\"" + (attrs.empty() ? "" : ", " + attrs) + "}";
}

// clang-format off
const std::vector<SweepCase>& sweep_cases() {
  static const std::vector<SweepCase> cases = {
      {"Linear", layer("Linear", R"("in_features": 5, "out_features": 4)"), {{{5}}}},
      {"Linear3d", layer("Linear", R"("in_features": 5, "out_features": 4, "bias": false)"), {{{2, 5}}}},
      {"Bilinear", layer("Bilinear", R"("in1_features": 4, "in2_features": 3, "out_features": 2)"), {{{4}}, {{3}}}},
      {"Identity", layer("Identity"), {{{4}}}},
      {"Flatten", layer("Flatten"), {{{2, 3, 2}}}},
      {"Unflatten", layer("Unflatten", R"("dim": 1, "unflattened_size": [2, 3])"), {{{6}}}},
      {"Dropout", layer("Dropout", R"("p": 0.3)"), {{{6}}}},
      {"ReLU", layer("ReLU"), {{{6}}}},
      {"LeakyReLU", layer("LeakyReLU", R"("negative_slope": 0.2)"), {{{6}}}},
      {"GELU", layer("GELU"), {{{6}}}},
      {"GELUTanh", layer("GELU", R"("approximate": "tanh")"), {{{6}}}},
      {"SiLU", layer("SiLU"), {{{6}}}},
      {"Sigmoid", layer("Sigmoid"), {{{6}}}},
      {"Tanh", layer("Tanh"), {{{6}}}},
      {"Softmax", layer("Softmax", R"("dim": 1)"), {{{6}}}},
      {"LogSoftmax", layer("LogSoftmax", R"("dim": 1)"), {{{6}}}},
      {"Softmin", layer("Softmin", R"("dim": 1)"), {{{6}}}},
      {"Softmax2d", layer("Softmax2d"), {{{3, 2, 2}}}},
      {"ELU", layer("ELU", R"("alpha": 0.7)"), {{{6}}}},
      {"CELU", layer("CELU", R"("alpha": 0.7)"), {{{6}}}},
      {"SELU", layer("SELU"), {{{6}}}},
      {"GLU", layer("GLU"), {{{6}}}},
      {"Hardtanh", layer("Hardtanh", R"("min_val": -0.5, "max_val": 0.7)"), {{{6}}}},
      {"ReLU6", layer("ReLU6"), {{{6}}}},
      {"Hardswish", layer("Hardswish"), {{{6}}}},
      {"Hardsigmoid", layer("Hardsigmoid"), {{{6}}}},
      {"Hardshrink", layer("Hardshrink"), {{{6}}}},
      {"Softshrink", layer("Softshrink"), {{{6}}}},
      {"Tanhshrink", layer("Tanhshrink"), {{{6}}}},
      {"Softsign", layer("Softsign"), {{{6}}}},
      {"LogSigmoid", layer("LogSigmoid"), {{{6}}}},
      {"Softplus", layer("Softplus", R"("beta": 2, "threshold": 1)"), {{{6}}}},
      {"Mish", layer("Mish"), {{{6}}}},
      {"Threshold", layer("Threshold", R"("threshold": 0.1, "value": 20)"), {{{6}}}},
      {"RReLU", layer("RReLU"), {{{6}}}},
      {"PReLU", layer("PReLU", R"("num_parameters": 3)"), {{{3, 4}}}},
      {"MSELoss", layer("MSELoss"), {{{4}}, {{4}}}},
      {"L1Loss", layer("L1Loss", R"("reduction": "sum")"), {{{4}}, {{4}}}},
      {"CrossEntropyLoss", layer("CrossEntropyLoss"), {{{5}}, indices({}, 5)}},
      {"NLLLoss", layer("NLLLoss"), {{{5}}, indices({}, 5)}},
      {"BCELoss", layer("BCELoss"), {probabilities({4}), probabilities({4})}},
      {"BCEWithLogitsLoss", layer("BCEWithLogitsLoss"), {{{4}}, probabilities({4})}},
      {"SmoothL1Loss", layer("SmoothL1Loss"), {{{4}}, {{4}}}},
      {"HuberLoss", layer("HuberLoss", R"("delta": 0.5)"), {{{4}}, {{4}}}},
      {"SoftMarginLoss", layer("SoftMarginLoss"), {{{4}}, signs({4})}},
      {"KLDivLoss", layer("KLDivLoss", R"("reduction": "batchmean")"), {{{4}}, probabilities({4})}},
      {"HingeEmbeddingLoss", layer("HingeEmbeddingLoss"), {{{4}}, signs({4})}},
      {"PoissonNLLLoss", layer("PoissonNLLLoss"), {{{4}}, probabilities({4})}},
      {"MultiLabelSoftMarginLoss", layer("MultiLabelSoftMarginLoss"), {{{4}}, probabilities({4})}},
      {"CosineEmbeddingLoss", layer("CosineEmbeddingLoss"), {{{4}}, {{4}}, signs({})}},
      {"MarginRankingLoss", layer("MarginRankingLoss"), {{{}}, {{}}, signs({})}},
      {"MultiMarginLoss", layer("MultiMarginLoss"), {{{5}}, indices({}, 5)}},
      {"MultiLabelMarginLoss", layer("MultiLabelMarginLoss"), {{{4}}, indices({4}, 4)}},
      {"TripletMarginLoss", layer("TripletMarginLoss"), {{{4}}, {{4}}, {{4}}}},
      {"GaussianNLLLoss", layer("GaussianNLLLoss"), {{{4}}, {{4}}, probabilities({4})}},
      {"BatchNorm1d", layer("BatchNorm1d", R"("num_features": 4)"), {{{4, 5}}}, true},
      {"BatchNorm2d", layer("BatchNorm2d", R"("num_features": 3)"), {{{3, 4, 4}}}, true},
      {"BatchNorm3d", layer("BatchNorm3d", R"("num_features": 2)"), {{{2, 3, 3, 3}}}, true},
      {"InstanceNorm1d", layer("InstanceNorm1d", R"("num_features": 3, "affine": true)"), {{{3, 6}}}},
      {"InstanceNorm2d", layer("InstanceNorm2d", R"("num_features": 3)"), {{{3, 4, 4}}}},
      {"InstanceNorm3d", layer("InstanceNorm3d", R"("num_features": 2)"), {{{2, 3, 3, 3}}}},
      {"GroupNorm", layer("GroupNorm", R"("num_groups": 2, "num_channels": 4)"), {{{4, 3, 3}}}},
      {"LocalResponseNorm", layer("LocalResponseNorm", R"("size": 3)"), {{{5, 3, 3}}}},
      {"CrossMapLRN2d", layer("CrossMapLRN2d", R"("size": 3)"), {{{5, 3, 3}}}},
      {"LayerNorm", layer("LayerNorm", R"("normalized_shape": [3, 4])"), {{{2, 3, 4}}}},
      {"Conv1d", layer("Conv1d", R"("in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1)"), {{{2, 8}}}},
      {"Conv2d", layer("Conv2d", R"("in_channels": 2, "out_channels": 4, "kernel_size": 3, "stride": 2, "groups": 2)"), {{{2, 7, 7}}}},
      {"Conv2dDilatedSame", layer("Conv2d", R"("in_channels": 2, "out_channels": 3, "kernel_size": 3, "dilation": 2, "padding": "same")"), {{{2, 7, 7}}}},
      {"Conv2dReflect", layer("Conv2d", R"("in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1, "padding_mode": "reflect")"), {{{2, 5, 5}}}},
      {"Conv3d", layer("Conv3d", R"("in_channels": 2, "out_channels": 2, "kernel_size": 2)"), {{{2, 3, 4, 4}}}},
      {"ConvTranspose1d", layer("ConvTranspose1d", R"("in_channels": 2, "out_channels": 3, "kernel_size": 3, "stride": 2)"), {{{2, 5}}}},
      {"ConvTranspose2d", layer("ConvTranspose2d", R"("in_channels": 2, "out_channels": 2, "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1)"), {{{2, 4, 4}}}},
      {"ConvTranspose3d", layer("ConvTranspose3d", R"("in_channels": 2, "out_channels": 2, "kernel_size": 2)"), {{{2, 2, 3, 3}}}},
      {"Unfold", layer("Unfold", R"("kernel_size": 2)"), {{{2, 4, 4}}}},
      {"Fold", layer("Fold", R"("output_size": [4, 4], "kernel_size": 2)"), {{{8, 9}}}},
      {"RNN", layer("RNN", R"("input_size": 4, "hidden_size": 3, "num_layers": 2, "batch_first": true)"), {{{5, 4}}}},
      {"LSTM", layer("LSTM", R"("input_size": 4, "hidden_size": 3, "batch_first": true)"), {{{5, 4}}}},
      {"GRU", layer("GRU", R"("input_size": 4, "hidden_size": 3, "bidirectional": true, "batch_first": true)"), {{{5, 4}}}},
      {"RNNCell", layer("RNNCell", R"("input_size": 4, "hidden_size": 3)"), {{{4}}}},
      {"LSTMCell", layer("LSTMCell", R"("input_size": 4, "hidden_size": 3)"), {{{4}}}},
      {"GRUCell", layer("GRUCell", R"("input_size": 4, "hidden_size": 3)"), {{{4}}}},
      {"MultiheadAttention", layer("MultiheadAttention", R"("embed_dim": 8, "num_heads": 2, "batch_first": true)"), {{{5, 8}}, {{6, 8}}, {{6, 8}}}},
      {"TransformerEncoderLayer", layer("TransformerEncoderLayer", R"("d_model": 8, "nhead": 2, "dim_feedforward": 16, "batch_first": true, "norm_first": true)"), {{{5, 8}}}},
      {"TransformerDecoderLayer", layer("TransformerDecoderLayer", R"("d_model": 8, "nhead": 2, "dim_feedforward": 16, "batch_first": true)"), {{{5, 8}}, {{4, 8}}}},
      {"TransformerEncoder", layer("TransformerEncoder", R"("num_layers": 2, "d_model": 8, "nhead": 2, "dim_feedforward": 16, "batch_first": true, "norm": true)"), {{{5, 8}}}},
      {"TransformerDecoder", layer("TransformerDecoder", R"("num_layers": 2, "d_model": 8, "nhead": 2, "dim_feedforward": 16, "batch_first": true)"), {{{5, 8}}, {{4, 8}}}},
      {"Transformer", layer("Transformer", R"("d_model": 8, "nhead": 2, "num_encoder_layers": 1, "num_decoder_layers": 1, "dim_feedforward": 16, "batch_first": true)"), {{{4, 8}}, {{5, 8}}}},
      {"ReflectionPad1d", layer("ReflectionPad1d", R"("padding": [1, 2])"), {{{2, 5}}}},
      {"ReflectionPad2d", layer("ReflectionPad2d", R"("padding": 1)"), {{{2, 4, 4}}}},
      {"ReflectionPad3d", layer("ReflectionPad3d", R"("padding": 1)"), {{{1, 3, 3, 3}}}},
      {"ReplicationPad1d", layer("ReplicationPad1d", R"("padding": 2)"), {{{2, 5}}}},
      {"ReplicationPad2d", layer("ReplicationPad2d", R"("padding": [1, 0, 2, 1])"), {{{2, 4, 4}}}},
      {"ReplicationPad3d", layer("ReplicationPad3d", R"("padding": 1)"), {{{1, 3, 3, 3}}}},
      {"CircularPad1d", layer("CircularPad1d", R"("padding": 2)"), {{{2, 5}}}},
      {"CircularPad2d", layer("CircularPad2d", R"("padding": 1)"), {{{2, 4, 4}}}},
      {"CircularPad3d", layer("CircularPad3d", R"("padding": 1)"), {{{1, 3, 3, 3}}}},
      {"ZeroPad1d", layer("ZeroPad1d", R"("padding": [1, 2])"), {{{2, 5}}}},
      {"ZeroPad2d", layer("ZeroPad2d", R"("padding": [1, 0, 2, 1])"), {{{2, 4, 4}}}},
      {"ZeroPad3d", layer("ZeroPad3d", R"("padding": 1)"), {{{1, 3, 3, 3}}}},
      {"ConstantPad1d", layer("ConstantPad1d", R"("padding": 2, "value": 0.5)"), {{{2, 5}}}},
      {"ConstantPad2d", layer("ConstantPad2d", R"("padding": 1, "value": -1)"), {{{2, 4, 4}}}},
      {"ConstantPad3d", layer("ConstantPad3d", R"("padding": 1, "value": 2)"), {{{1, 3, 3, 3}}}},
      {"Dropout1d", layer("Dropout1d"), {{{3, 4}}}},
      {"Dropout2d", layer("Dropout2d"), {{{3, 4, 4}}}},
      {"Dropout3d", layer("Dropout3d"), {{{2, 2, 2, 2}}}},
      {"AlphaDropout", layer("AlphaDropout"), {{{6}}}},
      {"FeatureAlphaDropout", layer("FeatureAlphaDropout"), {{{3, 4, 4}}}},
      {"PixelShuffle", layer("PixelShuffle", R"("upscale_factor": 2)"), {{{8, 3, 3}}}},
      {"PixelUnshuffle", layer("PixelUnshuffle", R"("downscale_factor": 2)"), {{{2, 4, 4}}}},
      {"ChannelShuffle", layer("ChannelShuffle", R"("groups": 2)"), {{{4, 3, 3}}}},
      {"CosineSimilarity", layer("CosineSimilarity"), {{{6}}, {{6}}}},
      {"PairwiseDistance", layer("PairwiseDistance"), {{{6}}, {{6}}}},
      {"MaxPool1d", layer("MaxPool1d", R"("kernel_size": 3, "stride": 2, "padding": 1)"), {{{2, 9}}}},
      {"MaxPool2d", layer("MaxPool2d", R"("kernel_size": 2)"), {{{2, 6, 6}}}},
      {"MaxPool2dDilatedCeil", layer("MaxPool2d", R"("kernel_size": 2, "stride": 2, "dilation": 2, "ceil_mode": true)"), {{{2, 7, 7}}}},
      {"MaxPool3d", layer("MaxPool3d", R"("kernel_size": 2)"), {{{2, 4, 4, 4}}}},
      {"AvgPool1d", layer("AvgPool1d", R"("kernel_size": 3, "stride": 2, "padding": 1)"), {{{2, 9}}}},
      {"AvgPool2d", layer("AvgPool2d", R"("kernel_size": 2, "ceil_mode": true)"), {{{2, 5, 5}}}},
      {"AvgPool3d", layer("AvgPool3d", R"("kernel_size": 2)"), {{{2, 4, 4, 4}}}},
      {"AdaptiveAvgPool1d", layer("AdaptiveAvgPool1d", R"("output_size": 3)"), {{{2, 7}}}},
      {"AdaptiveAvgPool2d", layer("AdaptiveAvgPool2d", R"("output_size": [2, 3])"), {{{2, 5, 7}}}},
      {"AdaptiveAvgPool2dGlobal", layer("AdaptiveAvgPool2d", R"("output_size": 1)"), {{{2, 5, 7}}}},
      {"AdaptiveAvgPool3d", layer("AdaptiveAvgPool3d", R"("output_size": 2)"), {{{2, 4, 5, 3}}}},
      {"AdaptiveMaxPool1d", layer("AdaptiveMaxPool1d", R"("output_size": 3)"), {{{2, 7}}}},
      {"AdaptiveMaxPool2d", layer("AdaptiveMaxPool2d", R"("output_size": [2, 3])"), {{{2, 5, 7}}}},
      {"AdaptiveMaxPool3d", layer("AdaptiveMaxPool3d", R"("output_size": 2)"), {{{2, 4, 5, 3}}}},
      {"LPPool1d", layer("LPPool1d", R"("norm_type": 2, "kernel_size": 2)"), {{{2, 6}}}},
      {"LPPool2d", layer("LPPool2d", R"("norm_type": 3, "kernel_size": 2)"), {probabilities({2, 4, 4})}},
      {"Embedding", layer("Embedding", R"("num_embeddings": 10, "embedding_dim": 3)"), {indices({4}, 10)}},
      {"EmbeddingBag", layer("EmbeddingBag", R"("num_embeddings": 10, "embedding_dim": 3)"), {indices({4}, 10)}},
      {"Upsample", layer("Upsample", R"("scale_factor": 2)"), {{{2, 3, 3}}}},
      {"UpsampleBilinear", layer("Upsample", R"("scale_factor": 2, "mode": "bilinear")"), {{{2, 3, 3}}}},
      {"UpsamplingNearest2d", layer("UpsamplingNearest2d", R"("size": [5, 4])"), {{{2, 3, 3}}}},
      {"UpsamplingBilinear2d", layer("UpsamplingBilinear2d", R"("scale_factor": 2)"), {{{2, 3, 3}}}},
  };
  return cases;
}
// clang-format on

// Layers whose file keeps the traced batch (its doc_string says why): their
// forward makes tensors with the batch size in them that ONNX would need a
// node of its own for (the recurrent layers' zero initial state, Unfold's
// and Fold's index tables, EmbeddingBag's offsets, MultiLabelMarginLoss's
// target mask). They run at that batch.
const std::set<std::string> kBatchFixed = {"Unfold",  "Fold",     "RNN",     "LSTM",         "GRU",
                                           "RNNCell", "LSTMCell", "GRUCell", "EmbeddingBag", "MultiLabelMarginLoss"};

std::vector<Tensor> make_inputs(const SweepCase& c, int64_t batch) {
  std::vector<Tensor> out;
  for (const Input& in : c.inputs) {
    std::vector<int64_t> shape{batch};
    shape.insert(shape.end(), in.item_shape.begin(), in.item_shape.end());
    switch (in.kind) {
      case Input::Normal: out.push_back(randn(shape)); break;
      case Input::Probability: out.push_back(rand(shape) * 0.9 + 0.05); break;
      case Input::Sign: out.push_back(randint(0, 2, shape).to(Dtype::f32) * 2.0 - 1.0); break;
      case Input::Index: out.push_back(randint(0, in.classes, shape)); break;
    }
  }
  return out;
}

std::vector<Tensor> call_all(nn::ModuleHandle& m, const std::vector<Tensor>& inputs) {
  std::vector<Value> args(inputs.begin(), inputs.end());
  std::vector<Tensor> out;
  for (const Value& v : m.call_values(args))
    if (v.isTensor()) out.push_back(v.toTensor());
  return out;
}

json feeds(const std::vector<Tensor>& inputs) {
  json given = json::object();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    json& entry = given[i == 0 ? "input" : "input" + std::to_string(i)];
    entry["dims"] = t.shape();
    if (t.dtype() == Dtype::i64) {
      entry["dtype"] = "int64";
      entry["data"] = t.contiguous().to_vector<int64_t>();
    } else {
      entry["data"] = t.contiguous().to_vector<float>();
    }
  }
  return given;
}

// One exported layer: its file, the inputs at each batch, nnplug's outputs
// there, and (after the sweep's one node run) ONNX Runtime's.
struct Exported {
  std::string file, export_error, doc, compile_explained;
  std::vector<std::vector<Tensor>> inputs, want, compiled;  // compiled: nnp::compile's outputs
  std::vector<json> ort;
};

class OnnxLayerSweep : public ::testing::TestWithParam<size_t> {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("nnp_onnx_sweep_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Only the cases this run selects (ctest runs each in a process of its own).
    std::set<std::string> selected;
    const ::testing::TestSuite& suite = *::testing::UnitTest::GetInstance()->current_test_suite();
    for (int i = 0; i < suite.total_test_count(); ++i)
      if (suite.GetTestInfo(i)->should_run()) selected.insert(suite.GetTestInfo(i)->name());
    json manifest = json::array();
    for (const SweepCase& c : sweep_cases()) {
      if (!selected.count("ExportsRunsInOnnxRuntimeAndImports/" + c.name)) continue;
      Exported& e = exported_[c.name];
      e.file = (dir_ / (c.name + ".onnx")).string();
      manual_seed(7);
      try {
        nn::ModuleHandle m = nn::model_from_spec(c.spec);
        if (c.batch_norm_statistics)
          for (int i = 0; i < 3; ++i) call_all(m, {make_inputs(c, 6)[0] * 2.0 + 1.0});
        nnp::onnx::export_model(m, make_inputs(c, 3), e.file);
        m.eval();
        ::onnx::ModelProto written;
        std::ifstream in(e.file, std::ios::binary);
        written.ParseFromIstream(&in);
        e.doc = written.doc_string();
        // The traced batch, and another where the batch axis is symbolic.
        nn::ModuleHandle compiled = compile(m, make_inputs(c, 3));
        for (int64_t batch : e.doc.empty() ? std::vector<int64_t>{3, 2} : std::vector<int64_t>{3}) {
          e.inputs.push_back(make_inputs(c, batch));
          e.want.push_back(call_all(m, e.inputs.back()));
          NoGradGuard no_grad;
          e.compiled.push_back(call_all(compiled, e.inputs.back()));
          manifest.push_back({{"model", e.file}, {"inputs", feeds(e.inputs.back())}});
        }
        e.compile_explained = compile_explain(compiled);
      } catch (const Error& err) {
        e.export_error = err.what();
      }
    }
    ort_reason_ = nnp::test::ort_unavailable();
    if (!ort_reason_.empty()) return;
    const std::string manifest_path = (dir_ / "manifest.json").string(), out = (dir_ / "ort.json").string();
    std::ofstream(manifest_path) << manifest.dump();
    const std::string command =
        std::string("node ") + NNP_ORT_CLIENT_DIR + "/run_model.js --many " + manifest_path + " 1 > " + out;
    if (std::system(command.c_str()) != 0) {
      ort_reason_ = "node failed: " + command;
      return;
    }
    std::ifstream in(out);
    json results = json::parse(in);
    size_t next = 0;
    for (const SweepCase& c : sweep_cases()) {
      auto it = exported_.find(c.name);
      if (it == exported_.end()) continue;
      for (size_t i = 0; i < it->second.inputs.size(); ++i) it->second.ort.push_back(results.at(next++));
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static fs::path dir_;
  static std::map<std::string, Exported> exported_;
  static std::string ort_reason_;
};
fs::path OnnxLayerSweep::dir_;
std::map<std::string, Exported> OnnxLayerSweep::exported_;
std::string OnnxLayerSweep::ort_reason_;

TEST_P(OnnxLayerSweep, ExportsRunsInOnnxRuntimeAndImports) {
  const SweepCase& c = sweep_cases()[GetParam()];
  const Exported& e = exported_[c.name];
  ASSERT_EQ(e.export_error, "") << c.spec;
  if (kBatchFixed.count(c.name))
    EXPECT_EQ(e.doc.rfind("batch fixed at 3: ", 0), 0u) << "doc_string: '" << e.doc << "'";
  else
    EXPECT_EQ(e.doc, "") << "the batch axis should stay symbolic";

  nn::ModuleHandle imported = nnp::onnx::load(e.file);
  for (size_t b = 0; b < e.inputs.size(); ++b) {
    SCOPED_TRACE("batch " + std::to_string(e.inputs[b][0].size(0)));
    const std::vector<Tensor> got = call_all(imported, e.inputs[b]);
    ASSERT_EQ(got.size(), e.want[b].size()) << "the imported module's outputs";
    for (size_t i = 0; i < got.size(); ++i) nnp::test::expect_close(got[i], e.want[b][i], 1e-5);
    // Compiled (graph mode's plan of the same capture): within 1e-5 of eager.
    ASSERT_EQ(e.compiled[b].size(), e.want[b].size()) << "the compiled module's outputs";
    for (size_t i = 0; i < e.compiled[b].size(); ++i) nnp::test::expect_close(e.compiled[b][i], e.want[b][i], 1e-5);
  }
  EXPECT_NE(e.compile_explained.find("last call: the captured plan"), std::string::npos) << e.compile_explained;
  if (!ort_reason_.empty()) GTEST_SKIP() << "ONNX Runtime comparison skipped: " << ort_reason_;
  for (size_t b = 0; b < e.inputs.size(); ++b) {
    SCOPED_TRACE("batch " + std::to_string(e.inputs[b][0].size(0)));
    const json& result = e.ort[b];
    ASSERT_FALSE(result.contains("error")) << "ONNX Runtime: " << result["error"].get<std::string>();
    ASSERT_EQ(result.size(), e.want[b].size()) << "ONNX Runtime's outputs";
    for (size_t i = 0; i < e.want[b].size(); ++i) {
      const json& out = result.at(i == 0 ? "output" : "output" + std::to_string(i));
      EXPECT_EQ(out["dims"].get<std::vector<int64_t>>(), e.want[b][i].shape()) << "output " << i;
      nnp::test::expect_close(out["data"].get<std::vector<float>>(), e.want[b][i].to(Dtype::f32).to_vector<float>(),
                              1e-5);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLayer, OnnxLayerSweep, ::testing::Range<size_t>(0, sweep_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return sweep_cases()[info.param].name; });

}  // namespace

namespace {

// What ONNX cannot hold is refused, naming what and why, and nothing is written.
TEST(OnnxLayerSweepRefusals, RandomDrawsAndInPlaceState) {
  const std::string file =
      (fs::temp_directory_path() / ("nnp_refused_" + std::to_string(::getpid()) + ".onnx")).string();
  auto refused = [&](const std::string& spec, const std::vector<int64_t>& shape, const std::string& what) {
    SCOPED_TRACE(spec);
    nn::ModuleHandle m = nn::model_from_spec(spec);
    nnp::test::expect_error([&] { nnp::onnx::export_model(m, {randn(shape)}, file); }, NNP_UNIMPLEMENTED,
                            {what, "to_onnx"});
    EXPECT_FALSE(fs::exists(file));
  };
  refused(layer("FractionalMaxPool2d", R"("kernel_size": 2, "output_size": [3, 3])"), {2, 2, 6, 6}, "random numbers");
  refused(layer("FakeQuantize"), {2, 4}, "in-place write");
  refused(layer("MinMaxObserver"), {2, 4}, "in-place write");
}

// The int8 layers travel as nodes of their own domain (nnplug reads them
// back; other runtimes do not) with their attributes and tensors.
TEST(OnnxLayerSweepRefusals, QuantizedLayersTravelInTheirOwnDomain) {
  const std::string file =
      (fs::temp_directory_path() / ("nnp_quantized_" + std::to_string(::getpid()) + ".onnx")).string();
  manual_seed(9);
  nn::ModuleHandle m = nn::model_from_spec(layer("quantized.dynamic.Linear", R"("in_features": 4, "out_features": 2)"));
  m.get_buffer("weight").copy_(randint(-128, 128, {2, 4}, Dtype::i8));
  const Tensor x = randn({3, 4});
  nnp::onnx::export_model(m, {x}, file);
  ::onnx::ModelProto written;
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(written.ParseFromIstream(&in));
  bool found = false;
  for (const auto& n : written.graph().node())
    found = found || (n.domain() == "nn.quantized.dynamic" && n.op_type() == "Linear");
  EXPECT_TRUE(found) << "no Linear node of domain nn.quantized.dynamic";
  nn::ModuleHandle back = nnp::onnx::load(file);
  EXPECT_EQ(back(x).to_vector<float>(), m(x).to_vector<float>());
  fs::remove(file);
}

}  // namespace
