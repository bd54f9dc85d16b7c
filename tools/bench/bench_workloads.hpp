// What the nnplug benchmarks share: W1's, W3's and W7's models and the
// training step of ../shared/WORKLOADS.md (zero_grad + forward + loss +
// backward + step).
#pragma once

#include <benchmark/benchmark.h>

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

// Times training steps; on a device with a queue, each timed step ends when
// the device has finished it.
inline void run_steps(benchmark::State& state, nn::ModuleHandle& net, const Tensor& x, const Tensor& y,
                      optim::Optimizer opt) {
  nn::ModuleHandle loss_fn = nn::create_layer("nn.CrossEntropyLoss");
  const nnp_device device = x.device().raw();
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = loss_fn.call({net(x), y});
    loss.backward();
    opt.step();
    check(api().synchronize(device));
  };
  for (int i = 0; i < 10; ++i) step();  // warm-up
  for (auto _ : state) step();
}
// With SGD(lr=0.01, momentum=0.9), W1's and W3's optimizer.
inline void run_steps(benchmark::State& state, nn::ModuleHandle& net, const Tensor& x, const Tensor& y) {
  run_steps(state, net, x, y,
            optim::Optimizer("SGD", net.parameters(), std::move(nn::Attrs().set("lr", 0.01).set("momentum", 0.9))));
}

}  // namespace nnp::bench
