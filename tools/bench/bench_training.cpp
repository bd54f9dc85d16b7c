// W1 (MLP training step), W3 (CNN training step) and W7 (Transformer
// training step) for nnplug
// (../shared/WORKLOADS.md): zero_grad + forward + loss + backward + step.
#include <benchmark/benchmark.h>

#include <nnp/nnp.hpp>

#include "bench_workloads.hpp"

namespace {

using nnp::bench::run_steps;

void W1_nnplug(benchmark::State& state) {
  nnp::nn::ModuleHandle net = nnp::bench::w1_model();
  run_steps(state, net, nnp::randn({128, 784}), nnp::randint(0, 10, {128}));
}
BENCHMARK(W1_nnplug)->Name("W1/nnplug")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void W3_nnplug(benchmark::State& state) {
  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Conv2d", "in_channels": 1, "out_channels": 16, "kernel_size": 5}, {"type": "nn.ReLU"},
    {"type": "nn.MaxPool2d", "kernel_size": 2},
    {"type": "nn.Conv2d", "in_channels": 16, "out_channels": 32, "kernel_size": 5}, {"type": "nn.ReLU"},
    {"type": "nn.MaxPool2d", "kernel_size": 2}, {"type": "nn.Flatten"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
  run_steps(state, net, nnp::randn({32, 1, 28, 28}), nnp::randint(0, 10, {32}));
}
BENCHMARK(W3_nnplug)->Name("W3/nnplug")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// W7's model: two encoder layers, the mean over the sequence, a classifier.
struct W7Model : nnp::nn::Module {
  nnp::nn::ModuleHandle encoder, head;
  W7Model() : Module("W7") {
    const auto layer =
        nnp::nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(512).dropout(0.1).batch_first(true);
    encoder = register_module("encoder", nnp::nn::TransformerEncoder(nnp::nn::TransformerEncoderOptions(layer, 2)));
    head = register_module("head", nnp::nn::Linear(128, 10));
  }
  nnp::Tensor forward(const nnp::Tensor& x) override { return head(encoder(x).mean({1})); }
};

void W7_nnplug(benchmark::State& state) {
  auto model = nnp::nn::make<W7Model>();
  nnp::nn::ModuleHandle net(model);
  run_steps(state, net, nnp::randn({32, 64, 128}), nnp::randint(0, 10, {32}),
            nnp::optim::Optimizer("AdamW", net.parameters(), std::move(nnp::nn::Attrs().set("lr", 1e-3))));
}
BENCHMARK(W7_nnplug)->Name("W7/nnplug")->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace
