// W1's, W3's and W7's models (docs/benchmarks.md, Workloads), for the benchmarks
// and for the tests that check what nnplug does with them.
#pragma once

#include <nnp/nnp.hpp>

namespace nnp::bench {

inline nn::ModuleHandle w1_model() {
  return nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 784, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
}

inline nn::ModuleHandle w3_model() {
  return nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Conv2d", "in_channels": 1, "out_channels": 16, "kernel_size": 5}, {"type": "nn.ReLU"},
    {"type": "nn.MaxPool2d", "kernel_size": 2},
    {"type": "nn.Conv2d", "in_channels": 16, "out_channels": 32, "kernel_size": 5}, {"type": "nn.ReLU"},
    {"type": "nn.MaxPool2d", "kernel_size": 2}, {"type": "nn.Flatten"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
}

// W7's model: two encoder layers, the mean over the sequence, a classifier.
struct W7Model : nn::Module {
  nn::ModuleHandle encoder, head;
  W7Model() : Module("W7") {
    const auto layer = nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(512).dropout(0.1).batch_first(true);
    encoder = register_module("encoder", nn::TransformerEncoder(nn::TransformerEncoderOptions(layer, 2)));
    head = register_module("head", nn::Linear(128, 10));
  }
  Tensor forward(const Tensor& x) override { return head(encoder(x).mean({1})); }
};
inline nn::ModuleHandle w7_model() { return nn::ModuleHandle(nn::make<W7Model>()); }

}  // namespace nnp::bench
