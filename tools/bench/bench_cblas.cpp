// The W4 peer every machine has: cblas_sgemm called directly.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <random>
#include <vector>

namespace {

void W4_cblas(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size());
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(0, 1);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = uniform(rng);
    b[i] = uniform(rng);
  }
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(W4_cblas)->Name("W4/cblas_sgemm")->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
