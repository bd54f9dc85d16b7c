// What `nnplug train` and `nnplug eval` share: the default model and data,
// building the model, turning rows into batches, measuring accuracy.
#pragma once

#include <memory>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "dataset.hpp"

namespace nnplug {

// A small CNN for the 8x8 digits (input [N, 1, 8, 8]).
extern const char* const kDefaultDigitsModel;

// data/digits.csv.gz of the source tree, or <prefix>/share/nnplug/digits.csv.gz.
std::string default_data_path();

// A model spec (JSON) or an ONNX file (.onnx, imported); empty: the default CNN.
nnp::nn::ModuleHandle build_model(const std::string& model_path);
// The model a command runs: a checkpoint's (its spec, or model_path's, with
// its weights), or model_path (an ONNX file, or a spec with weights from a
// safetensors file, or fresh ones without).
nnp::nn::ModuleHandle open_model(const std::string& model_path, const std::string& weights,
                                 const std::string& checkpoint);

// Per-sample input shape: given ("1,8,8"), or [1, 8, 8] for the default
// model on 64 features, or the flat feature count.
nnp::Shape sample_shape(const std::string& option, const Dataset& data, bool default_model);

// The rows as the model's examples: features as [rows, sample_shape...]
// times scale, and labels, on device.
std::shared_ptr<nnp::data::TensorDataset> samples_of(const Dataset& data, const nnp::Shape& shape, float scale,
                                                     const nnp::Device& device);

// The mean cross-entropy and the fraction of rows whose arg-max output equals
// the label (eval mode, no grad).
struct Evaluation {
  double loss = 0, accuracy = 0;
};
Evaluation evaluate(nnp::nn::ModuleHandle& model, const std::shared_ptr<nnp::data::TensorDataset>& samples,
                    const std::vector<int64_t>& indices);

// How many classes the model scores (its output's second dimension), from
// one sample in eval mode; refuses outputs that are not [batch, classes].
int64_t output_classes(nnp::nn::ModuleHandle& model, const nnp::data::TensorDataset& samples);

// The spec's JSON: the file's text, or the default model's.
std::string model_spec_text(const std::string& model_path);

nnp::Shape parse_shape(const std::string& text, const std::string& option);

}  // namespace nnplug
