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

namespace {

// W10: the eight GEMMs of one W1 step, with the layouts a training step uses
// (row-major x [batch, in], weight [out, in]): per layer y = x W^T, dW = g^T
// x, and dx = g W for the two layers whose input needs a gradient. Nothing
// else: the floor W1 is compared with.
void W10_cblas(benchmark::State& state) {
  constexpr int kBatch = 128;
  struct Layer {
    int in, out;
  };
  const Layer layers[] = {{784, 512}, {512, 512}, {512, 10}};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = uniform(rng);
    return v;
  };
  std::vector<std::vector<float>> x, w, y, g, dw, dx;
  for (const Layer& l : layers) {
    x.push_back(random(static_cast<size_t>(kBatch) * l.in));
    w.push_back(random(static_cast<size_t>(l.out) * l.in));
    y.emplace_back(static_cast<size_t>(kBatch) * l.out);
    g.push_back(random(static_cast<size_t>(kBatch) * l.out));
    dw.emplace_back(static_cast<size_t>(l.out) * l.in);
    dx.emplace_back(static_cast<size_t>(kBatch) * l.in);
  }
  for (auto _ : state) {
    for (size_t i = 0; i < 3; ++i) {  // forward
      const Layer& l = layers[i];
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kBatch, l.out, l.in, 1.0f, x[i].data(), l.in, w[i].data(),
                  l.in, 0.0f, y[i].data(), l.out);
    }
    for (size_t i = 3; i-- > 0;) {  // backward, last layer first
      const Layer& l = layers[i];
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l.out, l.in, kBatch, 1.0f, g[i].data(), l.out, x[i].data(),
                  l.in, 0.0f, dw[i].data(), l.in);
      if (i > 0)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kBatch, l.in, l.out, 1.0f, g[i].data(), l.out,
                    w[i].data(), l.in, 0.0f, dx[i].data(), l.in);
    }
    benchmark::DoNotOptimize(dw[0].data());
  }
}
BENCHMARK(W10_cblas)->Name("W10/cblas_sgemm")->Unit(benchmark::kMicrosecond)->MinTime(2.0);

}  // namespace
