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
  nnp::nn::ModuleHandle net = nnp::bench::w3_model();
  run_steps(state, net, nnp::randn({32, 1, 28, 28}), nnp::randint(0, 10, {32}));
}
BENCHMARK(W3_nnplug)->Name("W3/nnplug")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void W7_nnplug(benchmark::State& state) {
  nnp::nn::ModuleHandle net = nnp::bench::w7_model();
  run_steps(state, net, nnp::randn({32, 64, 128}), nnp::randint(0, 10, {32}),
            nnp::optim::Optimizer("AdamW", net.parameters(), std::move(nnp::nn::Attrs().set("lr", 1e-3))));
}
BENCHMARK(W7_nnplug)->Name("W7/nnplug")->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace
