#include "training.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <nnp/onnx.hpp>
#include <sstream>

#include "checkpoint.hpp"

namespace nnplug {

const char* const kDefaultDigitsModel = R"({"type": "nn.Sequential", "children": [
  {"type": "nn.Conv2d", "in_channels": 1, "out_channels": 16, "kernel_size": 3, "padding": 1},
  {"type": "nn.ReLU"},
  {"type": "nn.MaxPool2d", "kernel_size": 2},
  {"type": "nn.Conv2d", "in_channels": 16, "out_channels": 32, "kernel_size": 3, "padding": 1},
  {"type": "nn.ReLU"},
  {"type": "nn.MaxPool2d", "kernel_size": 2},
  {"type": "nn.Flatten"},
  {"type": "nn.Linear", "in_features": 128, "out_features": 10}]})";

std::string default_data_path() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "nnplug" / "digits.csv.gz";
    if (fs::exists(installed)) return installed.string();
  }
  return NNPLUG_SOURCE_DATA_DIR "/digits.csv.gz";
}

nnp::nn::ModuleHandle build_model(const std::string& model_path) {
  if (model_path.empty()) return nnp::nn::model_from_spec(kDefaultDigitsModel);
  const std::string onnx = ".onnx";
  if (model_path.size() > onnx.size() && model_path.compare(model_path.size() - onnx.size(), onnx.size(), onnx) == 0)
    return nnp::onnx::load(model_path);
  return nnp::nn::model_from_spec_file(model_path);
}

nnp::nn::ModuleHandle open_model(const std::string& model_path, const std::string& weights,
                                 const std::string& checkpoint) {
  if (!checkpoint.empty()) {
    TrainCheckpoint c = load_train_checkpoint(checkpoint);
    nnp::nn::ModuleHandle model = model_path.empty() ? nnp::nn::model_from_spec(c.model_spec) : build_model(model_path);
    model.load_state_dict(c.model);
    return model;
  }
  nnp::nn::ModuleHandle model = build_model(model_path);
  if (!weights.empty()) model.load_state_dict(nnp::load_safetensors(weights));
  return model;
}

nnp::Shape parse_shape(const std::string& text, const std::string& option) {
  nnp::Shape shape;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v <= 0 || errno == ERANGE)
      throw nnp::Error(NNP_INVALID_ARGUMENT, option + " '" + text + "': expected positive sizes like 1,8,8");
    shape.push_back(v);
  }
  return shape;
}

nnp::Shape sample_shape(const std::string& option, const Dataset& data, bool default_model) {
  nnp::Shape shape = !option.empty()
                         ? parse_shape(option, "--input-shape")
                         : (default_model && data.features == 64 ? nnp::Shape{1, 8, 8} : nnp::Shape{data.features});
  int64_t count = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(count, s, &count))
      throw nnp::Error(NNP_INVALID_ARGUMENT, "--input-shape: the sizes multiply past 2^63-1; the data has " +
                                                 std::to_string(data.features) + " features per row");
  if (shape.size() > NNP_MAX_DIMS - 1)
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--input-shape: at most " + std::to_string(NNP_MAX_DIMS - 1) +
                                               " dimensions per sample (the batch is one more)");
  if (count != data.features)
    throw nnp::Error(NNP_SHAPE_MISMATCH, "the input shape holds " + std::to_string(count) +
                                             " values but the data has " + std::to_string(data.features) +
                                             " features per row; set --input-shape");
  return shape;
}

std::shared_ptr<nnp::data::TensorDataset> samples_of(const Dataset& data, const nnp::Shape& shape, float scale,
                                                     const nnp::Device& device) {
  nnp::Shape full_shape{data.rows};
  full_shape.insert(full_shape.end(), shape.begin(), shape.end());
  nnp::Tensor x = data.x.reshape(full_shape) * static_cast<double>(scale);
  return std::make_shared<nnp::data::TensorDataset>(x.to(device), data.y.to(device));
}

Evaluation evaluate(nnp::nn::ModuleHandle& model, const std::shared_ptr<nnp::data::TensorDataset>& samples,
                    const std::vector<int64_t>& indices) {
  if (indices.empty()) return {};
  nnp::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  nnp::nn::CrossEntropyLoss criterion(nnp::nn::CrossEntropyLossOptions().reduction(nnp::kSum));
  int64_t correct = 0;
  double loss = 0;
  nnp::data::DataLoader loader(std::make_shared<nnp::data::Subset>(samples, indices), 256);
  for (nnp::data::Example& batch : loader) {
    nnp::Tensor logits = model(batch.data);
    loss += criterion(logits, batch.target).item<float>();
    correct += logits.argmax(1).eq(batch.target).to(nnp::kInt64).sum().item<int64_t>();
  }
  model.train(was_training);
  const double n = static_cast<double>(indices.size());
  return {loss / n, static_cast<double>(correct) / n};
}

int64_t output_classes(nnp::nn::ModuleHandle& model, const nnp::data::TensorDataset& samples) {
  nnp::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();  // no dropout draw: the RNG stream stays as it was
  nnp::Tensor logits = model(samples.get_batch({0}).data);
  model.train(was_training);
  if (logits.ndim() != 2)
    throw nnp::Error(NNP_SHAPE_MISMATCH, "the model gives outputs of " + std::to_string(logits.ndim()) +
                                             " dimensions per batch; a classifier gives [batch, classes]");
  return logits.size(1);
}

std::string model_spec_text(const std::string& model_path) {
  if (model_path.empty()) return kDefaultDigitsModel;
  std::ifstream file(model_path);  // read after model_from_spec_file accepted it
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace nnplug
