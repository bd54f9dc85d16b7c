// W1 (MLP training step), W3 (CNN training step) and W7 (Transformer
// training step) for nnplug
// (docs/benchmarks.md, Workloads): zero_grad + forward + loss + backward + step.
#include <benchmark/benchmark.h>

#include <chrono>
#include <nnp/nnp.hpp>
#include <optional>

#include "bench_workloads.hpp"

namespace {

using nnp::bench::run_steps;

void W1_nnplug(benchmark::State& state) {
  nnp::nn::ModuleHandle net = nnp::bench::w1_model();
  run_steps(state, net, nnp::randn({128, 784}), nnp::randint(0, 10, {128}));
}
BENCHMARK(W1_nnplug)->Name("W1/nnplug")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// W1c: the captured W1 step (nnp::compile_step) against the eager one, the
// two interleaved step by step on two copies of the model, so that both
// see the same machine (WORKLOADS.md).
void W1c_interleaved(benchmark::State& state) {
  using namespace nnp;
  struct Trainee {
    nn::ModuleHandle net = bench::w1_model();
    optim::Optimizer opt{"SGD", net.parameters(), std::move(nn::Attrs().set("lr", 0.01).set("momentum", 0.9))};
    nn::ModuleHandle loss_fn = nn::create_layer("nn.CrossEntropyLoss");
    Tensor step(const Tensor& x, const Tensor& y) {
      opt.zero_grad();
      Tensor loss = loss_fn.call({net(x), y});
      loss.backward();
      opt.step();
      return loss;
    }
  };
  Trainee eager, captured;
  const Tensor x = randn({128, 784}), y = randint(0, 10, {128});
  CapturedStep step =
      compile_step([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{captured.step(in[0], in[1])}; });
  for (int i = 0; i < 10; ++i) eager.step(x, y), step({x, y});  // warm-up: the capture's runs among them
  using Clock = std::chrono::steady_clock;
  Clock::duration eager_time{}, captured_time{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    eager.step(x, y);
    const auto t1 = Clock::now();
    step({x, y});
    const auto t2 = Clock::now();
    eager_time += t1 - t0;
    captured_time += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["ours_us"] = std::chrono::duration<double, std::micro>(captured_time).count() / n;
  state.counters["peer_us"] = std::chrono::duration<double, std::micro>(eager_time).count() / n;
  if (step.explain().find("replays") == std::string::npos) state.SkipWithError(step.explain().c_str());
}
BENCHMARK(W1c_interleaved)->Name("W1c/interleaved")->Unit(benchmark::kMicrosecond)->MinTime(3.0);

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

// W7amp: W7 under CPU bf16 autocast against W7 in f32, interleaved step by
// step on two copies of the model (WORKLOADS.md).
void W7amp_interleaved(benchmark::State& state) {
  using namespace nnp;
  struct Trainee {
    nn::ModuleHandle net = bench::w7_model();
    optim::Optimizer opt{"AdamW", net.parameters(), std::move(nn::Attrs().set("lr", 1e-3))};
    void step(const Tensor& x, const Tensor& y, bool amp) {
      opt.zero_grad();
      Tensor loss;
      {
        std::optional<nnp::autocast> mixed;
        if (amp) mixed.emplace("cpu", Dtype::bf16);
        loss = nn::functional::cross_entropy(net(x), y);
      }
      loss.backward();
      opt.step();
    }
  };
  Trainee f32, amp;
  const Tensor x = randn({32, 64, 128}), y = randint(0, 10, {32});
  for (int i = 0; i < 3; ++i) f32.step(x, y, false), amp.step(x, y, true);
  using Clock = std::chrono::steady_clock;
  Clock::duration f32_time{}, amp_time{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    f32.step(x, y, false);
    const auto t1 = Clock::now();
    amp.step(x, y, true);
    const auto t2 = Clock::now();
    f32_time += t1 - t0;
    amp_time += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["ours_us"] = std::chrono::duration<double, std::micro>(amp_time).count() / n;
  state.counters["peer_us"] = std::chrono::duration<double, std::micro>(f32_time).count() / n;
}
BENCHMARK(W7amp_interleaved)->Name("W7amp/interleaved")->Unit(benchmark::kMillisecond)->MinTime(3.0);

}  // namespace
