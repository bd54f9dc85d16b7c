// The libtorch peer, built from the same workload definitions when
// find_package(Torch) succeeds. A benchmark-only dependency.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

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
