// W1 (MLP training step) and W3 (CNN training step) for nnplug
// (../shared/WORKLOADS.md): zero_grad + forward + loss + backward + step.
#include <benchmark/benchmark.h>

#include <nnp/nnp.hpp>

namespace {

using nnp::nn::Attrs;
using nnp::nn::create_layer;

void run_steps(benchmark::State& state, nnp::nn::ModuleHandle& net, const nnp::Tensor& x, const nnp::Tensor& y) {
  nnp::optim::Optimizer opt("SGD", net.parameters(), std::move(Attrs().set("lr", 0.01).set("momentum", 0.9)));
  nnp::nn::ModuleHandle loss_fn = create_layer("nn.CrossEntropyLoss");
  auto step = [&] {
    opt.zero_grad();
    nnp::Tensor loss = loss_fn.call({net(x), y});
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 10; ++i) step();  // warm-up
  for (auto _ : state) step();
}

void W1_nnplug(benchmark::State& state) {
  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 784, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
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

}  // namespace
