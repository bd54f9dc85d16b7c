// G1-G3 of docs/benchmarks.md, Workloads on cuda:0, nnplug's side, and G4: W3's and
// W7's inference there (the W8 cases), as written and compiled. Where there
// is no CUDA device each reports the reason instead of a time.
#include <benchmark/benchmark.h>

#include <nnp/nnp.hpp>
#include <optional>
#include <string>

#include "bench_workloads.hpp"

namespace {

// cuda:0, or why not.
std::optional<nnp::Device> cuda_device(std::string* why) {
  for (const nnp_backend_info& info : nnp::backends())
    if (std::string(info.name) == "cuda") {
      if (info.device_count > 0) return nnp::Device("cuda:0");
      *why = std::string("no CUDA device: ") + info.unavailable_reason;
      return std::nullopt;
    }
  *why = "the cuda backend is not built";
  return std::nullopt;
}

#define NNP_REQUIRE_CUDA(state, device)                  \
  std::string why;                                       \
  std::optional<nnp::Device> device = cuda_device(&why); \
  if (!device) {                                         \
    state.SkipWithError(why.c_str());                    \
    return;                                              \
  }

// G1: W1 at batch 1024 on cuda:0.
void G1_nnplug(benchmark::State& state) {
  NNP_REQUIRE_CUDA(state, device);
  nnp::nn::ModuleHandle net = nnp::bench::w1_model();
  net.to(*device);
  nnp::bench::run_steps(state, net, nnp::randn({1024, 784}).to(*device), nnp::randint(0, 10, {1024}).to(*device));
}
BENCHMARK(G1_nnplug)->Name("G1/nnplug")->Unit(benchmark::kMicrosecond)->MinTime(2.0)->UseRealTime();

// G2: an 8192^3 GEMM through nnplug's matmul.
void G2_nnplug(benchmark::State& state) {
  NNP_REQUIRE_CUDA(state, device);
  const nnp::Dtype dtype = state.range(0) == 16 ? nnp::Dtype::bf16 : nnp::Dtype::f32;
  const int64_t n = 8192;
  nnp::Tensor a = nnp::randn({n, n}, nnp::Dtype::f32, *device).to(dtype);
  nnp::Tensor b = nnp::randn({n, n}, nnp::Dtype::f32, *device).to(dtype);
  for (auto _ : state) {
    nnp::Tensor c = a.matmul(b);
    nnp::check(nnp::api().synchronize(device->raw()));
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(G2_nnplug)->Name("G2/nnplug_f32")->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(G2_nnplug)->Name("G2/nnplug_bf16")->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

// G3: W2a on cuda:0, the cost of one small op (launch overhead included).
void G3_nnplug(benchmark::State& state) {
  NNP_REQUIRE_CUDA(state, device);
  nnp::Tensor b = nnp::rand({16}, nnp::Dtype::f32, *device);
  nnp::Tensor c = nnp::zeros({16}, nnp::Dtype::f32, *device);
  for (auto _ : state) {
    c = c + b;
    benchmark::DoNotOptimize(c.get());
  }
  nnp::check(nnp::api().synchronize(device->raw()));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(G3_nnplug)->Name("G3/nnplug")->UseRealTime();

// G4: W3's CNN and W7's encoder in inference (eval mode, no gradients) on
// cuda:0 at W8's batches, called as written (eager) and through
// nnp::compile; each call ends when the device has finished it. The peer is
// PyTorch's eager inference on the same GPU (tools/bench/pytorch_cuda_peers.py).
void G4(benchmark::State& state, bool w7, int64_t batch, bool compiled) {
  NNP_REQUIRE_CUDA(state, device);
  nnp::manual_seed(4);
  nnp::nn::ModuleHandle net = w7 ? nnp::bench::w7_model() : nnp::bench::w3_model();
  net.to(*device);
  net.eval();
  const nnp::Tensor x = (w7 ? nnp::randn({batch, 16, 128}) : nnp::randn({batch, 1, 28, 28})).to(*device);
  nnp::nn::ModuleHandle target = compiled ? nnp::compile(net, {x}) : net;
  nnp::NoGradGuard no_grad;
  for (auto _ : state) {
    nnp::Tensor y = target(x);
    nnp::check(nnp::api().synchronize(device->raw()));
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK_CAPTURE(G4, W3_b1_eager, false, 1, false)
    ->Name("G4/W3_b1/eager")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W3_b1_compiled, false, 1, true)
    ->Name("G4/W3_b1/compiled")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W3_b64_eager, false, 64, false)
    ->Name("G4/W3_b64/eager")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W3_b64_compiled, false, 64, true)
    ->Name("G4/W3_b64/compiled")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W7_b1_eager, true, 1, false)
    ->Name("G4/W7_b1/eager")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W7_b1_compiled, true, 1, true)
    ->Name("G4/W7_b1/compiled")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W7_b32_eager, true, 32, false)
    ->Name("G4/W7_b32/eager")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(G4, W7_b32_compiled, true, 32, true)
    ->Name("G4/W7_b32/compiled")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
