// The libtorch peer, built from the same workload definitions when
// find_package(Torch) succeeds. A benchmark-only dependency.
#include <ATen/autocast_mode.h>
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cstdlib>
#include <string>

namespace {

void W2a_libtorch(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  torch::Tensor b = torch::rand({16});
  torch::Tensor c = torch::zeros({16});
  for (auto _ : state) {
    c = c + b;
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(W2a_libtorch)->Name("W2a/libtorch");

void W2b_libtorch(benchmark::State& state) {
  torch::Tensor b = (torch::rand({16}) * 0.01 + 1.0).requires_grad_();
  for (auto _ : state) {
    torch::Tensor c = torch::ones({16});
    for (int i = 0; i < 100; ++i) c = c * b;
    c.sum().backward();
    benchmark::DoNotOptimize(b.grad().data_ptr());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(W2b_libtorch)->Name("W2b/libtorch");

template <typename Net, typename Optimizer>
void torch_steps(benchmark::State& state, Net& net, const torch::Tensor& x, const torch::Tensor& y, Optimizer& opt) {
  auto step = [&] {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 10; ++i) step();
  for (auto _ : state) step();
}
template <typename Net>
void torch_steps(benchmark::State& state, Net& net, const torch::Tensor& x, const torch::Tensor& y) {
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  torch_steps(state, net, x, y, opt);
}

void W1_libtorch(benchmark::State& state) {
  torch::nn::Sequential net(torch::nn::Linear(784, 512), torch::nn::ReLU(), torch::nn::Linear(512, 512),
                            torch::nn::ReLU(), torch::nn::Linear(512, 10));
  torch_steps(state, net, torch::randn({128, 784}), torch::randint(0, 10, {128}));
}
BENCHMARK(W1_libtorch)->Name("W1/libtorch")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

void W3_libtorch(benchmark::State& state) {
  torch::nn::Sequential net(torch::nn::Conv2d(1, 16, 5), torch::nn::ReLU(), torch::nn::MaxPool2d(2),
                            torch::nn::Conv2d(16, 32, 5), torch::nn::ReLU(), torch::nn::MaxPool2d(2),
                            torch::nn::Flatten(), torch::nn::Linear(512, 10));
  torch_steps(state, net, torch::randn({32, 1, 28, 28}), torch::randint(0, 10, {32}));
}
BENCHMARK(W3_libtorch)->Name("W3/libtorch")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

// W7: libtorch 1.13's encoder layer has no batch_first, so the batch goes in
// sequence-first ([64, 32, 128]): the same work.
struct W7Impl : torch::nn::Module {
  torch::nn::TransformerEncoder encoder{nullptr};
  torch::nn::Linear head{nullptr};
  W7Impl() {
    auto layer = torch::nn::TransformerEncoderLayerOptions(128, 4).dim_feedforward(512).dropout(0.1);
    encoder = register_module("encoder", torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(layer, 2)));
    head = register_module("head", torch::nn::Linear(128, 10));
  }
  torch::Tensor forward(const torch::Tensor& x) { return head(encoder(x).mean(0)); }
};
TORCH_MODULE(W7);

void W7_libtorch(benchmark::State& state) {
  W7 net;
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-3));
  torch_steps(state, net, torch::randn({64, 32, 128}), torch::randint(0, 10, {32}), opt);
}
BENCHMARK(W7_libtorch)->Name("W7/libtorch")->Unit(benchmark::kMillisecond)->MinTime(3.0);

// W7amp's second peer: libtorch's W7 under its own CPU autocast (bf16).
void W7amp_libtorch(benchmark::State& state) {
  // oneDNN capped below AVX-512 (scripts/bench.sh's AVX2 run) has no bf16
  // primitives, and libtorch 1.13 then aborts the process from inside.
  const char* onednn_cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (onednn_cap && std::string(onednn_cap).find("AVX512") == std::string::npos) {
    state.SkipWithError("skipped: ONEDNN_MAX_CPU_ISA caps oneDNN below AVX-512, where libtorch's bf16 autocast aborts");
    return;
  }
  W7 net;
  torch::optim::AdamW opt(net->parameters(), torch::optim::AdamWOptions(1e-3));
  const torch::Tensor x = torch::randn({64, 32, 128}), y = torch::randint(0, 10, {32});
  auto step = [&] {
    opt.zero_grad();
    torch::Tensor loss;
    {
      at::autocast::set_cpu_enabled(true);
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::increment_nesting();
      loss = torch::nn::functional::cross_entropy(net->forward(x), y);
      if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
      at::autocast::set_cpu_enabled(false);
    }
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 3; ++i) step();
  for (auto _ : state) step();
}
BENCHMARK(W7amp_libtorch)->Name("W7amp/libtorch")->Unit(benchmark::kMillisecond)->MinTime(3.0);

void W4_libtorch(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const int64_t n = state.range(0);
  torch::Tensor a = torch::rand({n, n}), b = torch::rand({n, n});
  for (auto _ : state) {
    torch::Tensor c = torch::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(W4_libtorch)->Name("W4/libtorch")->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
