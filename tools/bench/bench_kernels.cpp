// Each GEMM-shaped kernel of the cpu backend against this CPU tier's FMA
// peak: the f32 and bf16 products, the int8 product, attention (graph
// mode's fused kernel) and the packed convolutions, each at a size where
// it is the whole of the work, and Peak/fma: independent fused
// multiply-add chains on every thread this process may use, in the widest
// vectors the tier has (AVX-512, AVX2 or, at the baseline, SSE's separate
// multiplies and adds). The tier is the cpu backend's: NNP_CPU_ISA=avx2 (or
// baseline) caps it, so a second run under the cap judges the AVX2 forms
// against the AVX2 peak. bench_main prints each kernel's share.
#include <benchmark/benchmark.h>
#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nnp/nnp.hpp>
#include <nnp/quantization.hpp>
#include <thread>
#include <vector>

#include "bench_tier.hpp"

namespace {

using nnp::Tensor;

#if defined(__x86_64__)
// 12 independent chains of `iterations` steps; FLOPs done returned. The
// chains' registers are named in the asm, so nothing is elided or spilled.
#define NNP_CHAINS(OP, R)                                                                                             \
  OP R "1\n" OP R "2\n" OP R "3\n" OP R "4\n" OP R "5\n" OP R "6\n" OP R "7\n" OP R "8\n" OP R "9\n" OP R "10\n" OP R \
       "11\n" OP R "12\n"
__attribute__((target("avx512f"))) double fma_chains_avx512(long iterations) {
  asm volatile("vxorps %%xmm0, %%xmm0, %%xmm0" ::: "xmm0");
  for (long i = 0; i < iterations; ++i)
    asm volatile(NNP_CHAINS("vfmadd231ps %%zmm0, %%zmm0, ", "%%zmm")::
                     : "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                       "xmm12");
  return 12.0 * 16 * 2 * static_cast<double>(iterations);
}
__attribute__((target("avx2,fma"))) double fma_chains_avx2(long iterations) {
  asm volatile("vxorps %%xmm0, %%xmm0, %%xmm0" ::: "xmm0");
  for (long i = 0; i < iterations; ++i)
    asm volatile(NNP_CHAINS("vfmadd231ps %%ymm0, %%ymm0, ", "%%ymm")::
                     : "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
                       "xmm12");
  return 12.0 * 8 * 2 * static_cast<double>(iterations);
}
// SSE2 has no fused multiply-add: 6 chains of multiplies and 6 of adds,
// which run on separate units; a multiply and an add are 2 FLOPs a lane.
double mul_add_chains_sse(long iterations) {
  asm volatile("xorps %%xmm0, %%xmm0" ::: "xmm0");
  for (long i = 0; i < iterations; ++i)
    asm volatile(
        "mulps %%xmm0, %%xmm1\n addps %%xmm0, %%xmm2\n mulps %%xmm0, %%xmm3\n addps %%xmm0, %%xmm4\n"
        "mulps %%xmm0, %%xmm5\n addps %%xmm0, %%xmm6\n mulps %%xmm0, %%xmm7\n addps %%xmm0, %%xmm8\n"
        "mulps %%xmm0, %%xmm9\n addps %%xmm0, %%xmm10\n mulps %%xmm0, %%xmm11\n addps %%xmm0, %%xmm12\n" ::
            : "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12");
  return 12.0 * 4 * static_cast<double>(iterations);
}
#endif

double fma_chains(const char* tier, long iterations) {
#if defined(__x86_64__)
  if (std::strcmp(tier, "avx512") == 0) return fma_chains_avx512(iterations);
  if (std::strcmp(tier, "avx2") == 0) return fma_chains_avx2(iterations);
  return mul_add_chains_sse(iterations);
#else
  (void)tier;
  (void)iterations;
  return 0;
#endif
}

int cpus_this_process_may_use() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

// Every thread this process may use, each running the chains at once.
void Peak_fma(benchmark::State& state) {
  const char* tier = nnp::bench::fma_tier();
  const int threads = cpus_this_process_may_use();
  constexpr long kIterations = 4'000'000;
  double flops = 0;
  for (auto _ : state) {
    std::vector<std::thread> pool;
    std::vector<double> done(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { done[static_cast<size_t>(t)] = fma_chains(tier, kIterations); });
    for (std::thread& th : pool) th.join();
    for (double d : done) flops += d;
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.SetLabel(std::string(tier) + ", " + std::to_string(threads) + " threads");
}
BENCHMARK(Peak_fma)->Name("Peak/fma")->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.3);

void set_rate(benchmark::State& state, double flops_per_call) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_call, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void Kernel_gemm_bf16(benchmark::State& state) {
  const int64_t n = 1024;
  const Tensor a = nnp::rand({n, n}).to(nnp::Dtype::bf16), b = nnp::rand({n, n}).to(nnp::Dtype::bf16);
  for (auto _ : state) benchmark::DoNotOptimize(a.matmul(b).get());
  set_rate(state, 2.0 * n * n * n);
}
BENCHMARK(Kernel_gemm_bf16)->Name("Kernel/gemm_bf16")->Unit(benchmark::kMillisecond)->UseRealTime();

// Multiply-adds of int8 pairs, counted as an f32 FMA's two FLOPs each.
void Kernel_gemm_int8(benchmark::State& state) {
  const int64_t m = 256, n = 1024, k = 1024;
  const Tensor a = nnp::randint(-128, 128, {m, k}, nnp::kInt8);
  const Tensor b = nnp::randint(-128, 128, {n, k}, nnp::kInt8);
  for (auto _ : state) benchmark::DoNotOptimize(nnp::matmul_i8(a, b).get());
  set_rate(state, 2.0 * m * n * k);
}
BENCHMARK(Kernel_gemm_int8)->Name("Kernel/gemm_int8")->Unit(benchmark::kMillisecond)->UseRealTime();

// W7's attention at batch 32: 128 heads of 64 queries and keys, 32 wide,
// compiled (graph mode fuses the two products and the softmax into one kernel).
struct Attention : nnp::nn::Module {
  Attention() : Module("Attention") {}
  Tensor forward(const std::vector<Tensor>& in) override {
    return nnp::nn::functional::scaled_dot_product_attention(in[0], in[1], in[2]);
  }
};
void Kernel_attention(benchmark::State& state) {
  const int64_t heads = 128, length = 64, width = 32;
  const Tensor q = nnp::randn({heads, length, width}), k = nnp::randn({heads, length, width}),
               v = nnp::randn({heads, length, width});
  nnp::nn::ModuleHandle module(nnp::nn::make<Attention>());
  module.eval();
  nnp::nn::ModuleHandle compiled = nnp::compile(module, {q, k, v});
  nnp::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(compiled.call({q, k, v}).get());
  set_rate(state, 2.0 * heads * length * length * (width + width));
}
BENCHMARK(Kernel_attention)->Name("Kernel/attention")->Unit(benchmark::kMicrosecond)->UseRealTime();

// W3's convolutions at batch 64, compiled with their ReLU and pooling (the
// packed direct kernel for the first, Winograd for the second), counted as
// a direct convolution's FLOPs.
void time_conv(benchmark::State& state, int64_t in, int64_t out, int64_t size) {
  nnp::manual_seed(3);
  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec(
      R"({"type": "nn.Sequential", "children": [{"type": "nn.Conv2d", "in_channels": )" + std::to_string(in) +
      R"(, "out_channels": )" + std::to_string(out) +
      R"(, "kernel_size": 5}, {"type": "nn.ReLU"}, {"type": "nn.MaxPool2d", "kernel_size": 2}]})");
  net.eval();
  const Tensor x = nnp::randn({64, in, size, size});
  nnp::nn::ModuleHandle compiled = nnp::compile(net, {x});
  nnp::NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(compiled(x).get());
  const double outputs = 64.0 * out * (size - 4) * (size - 4);
  set_rate(state, 2.0 * outputs * in * 25);
}
void Kernel_conv_direct(benchmark::State& state) { time_conv(state, 1, 16, 28); }
void Kernel_conv_winograd(benchmark::State& state) { time_conv(state, 16, 32, 12); }
BENCHMARK(Kernel_conv_direct)->Name("Kernel/conv_direct")->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(Kernel_conv_winograd)->Name("Kernel/conv_winograd")->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
