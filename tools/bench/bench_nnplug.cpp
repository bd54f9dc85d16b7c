// nnplug's side of the workloads (docs/benchmarks.md, Workloads).
#include <benchmark/benchmark.h>

#include <nnp/nnp.hpp>

namespace {

// W2a: small-op overhead without autograd, c = c + b on 16 f32 elements.
void W2a_nnplug(benchmark::State& state) {
  nnp::Tensor b = nnp::rand({16});
  nnp::Tensor c = nnp::zeros({16});
  for (auto _ : state) {
    c = c + b;
    benchmark::DoNotOptimize(c.get());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(W2a_nnplug)->Name("W2a/nnplug");

// W2b: small-op overhead with autograd: 100 x (c = c * b) on 16 elements
// where b requires grad, then c.sum().backward(); time per op.
void W2b_nnplug(benchmark::State& state) {
  nnp::Tensor b = (nnp::rand({16}) * 0.01 + 1.0).requires_grad_();
  for (auto _ : state) {
    nnp::Tensor c = nnp::ones({16});
    for (int i = 0; i < 100; ++i) c = c * b;
    c.sum().backward();
    benchmark::DoNotOptimize(b.grad().get());
  }
  state.SetItemsProcessed(state.iterations() * 100);
}
BENCHMARK(W2b_nnplug)->Name("W2b/nnplug");

// W4: 1024^3 f32 GEMM through the tensor op.
void W4_nnplug(benchmark::State& state) {
  const int64_t n = state.range(0);
  nnp::Tensor a = nnp::rand({n, n}), b = nnp::rand({n, n});
  for (auto _ : state) {
    nnp::Tensor c = a.matmul(b);
    benchmark::DoNotOptimize(c.get());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(W4_nnplug)->Name("W4/nnplug")->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
