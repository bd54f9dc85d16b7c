// Runs the benchmarks, then prints each workload's ratio against its peer
// measured in this same run (the figures WORKLOADS.md asks for).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench_tier.hpp"

namespace {

// Console output as usual, plus each run's time and GFLOP/s kept by name.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  struct Figure {
    double seconds_per_iteration = 0;
    double gflops = 0;
    // A run that times two variants in turn (counters "ours_us", "peer_us").
    double ours_us = 0, peer_us = 0;
  };
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;  // e.g. no GPU here: no figure
      // With repetitions only the median counts; without, the single run.
      if (run.run_type == Run::RT_Aggregate ? run.aggregate_name != "median" : run.repetitions > 1) continue;
      Figure& figure = figures[run.run_name.function_name];
      figure.seconds_per_iteration = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      auto it = run.counters.find("GFLOP/s");
      if (it != run.counters.end()) figure.gflops = it->second.value / 1e9;  // the counter is in FLOP/s
      auto ours = run.counters.find("ours_us"), peer = run.counters.find("peer_us");
      if (ours != run.counters.end() && peer != run.counters.end())
        figure.ours_us = ours->second.value, figure.peer_us = peer->second.value;
    }
  }
  std::map<std::string, Figure> figures;
};

// ops: how many ops one iteration runs (W2b runs 100 and a backward).
void print_ratio(const RatioReporter& r, const char* workload, const char* ours, const char* peer, bool by_rate,
                 const char* target, double ops = 1) {
  auto a = r.figures.find(ours), b = r.figures.find(peer);
  if (a == r.figures.end()) return;  // not in this binary, filtered out, or skipped (its reason is above)
  if (b == r.figures.end()) {
    std::printf("%-4s %s vs %s: the peer was not measured in this run (missing or filtered out)\n", workload, ours,
                peer);
    return;
  }
  if (by_rate)
    std::printf("%-4s %-12s %8.1f GFLOP/s  %-16s %8.1f GFLOP/s  ratio %.3f  (target %s)\n", workload, ours,
                a->second.gflops, peer, b->second.gflops, a->second.gflops / b->second.gflops, target);
  else
    std::printf("%-4s %-12s %8.1f ns/op    %-16s %8.1f ns/op    ratio %.3f  (target %s)\n", workload, ours,
                a->second.seconds_per_iteration * 1e9 / ops, peer, b->second.seconds_per_iteration * 1e9 / ops,
                a->second.seconds_per_iteration / b->second.seconds_per_iteration, target);
}

// Each kernel's GFLOP/s as a share of this tier's FMA peak (Peak/fma),
// measured in this run.
void print_peak_shares(const RatioReporter& r) {
  auto peak = r.figures.find("Peak/fma");
  if (peak == r.figures.end() || peak->second.gflops <= 0) return;
  std::printf("Tier %s: FMA peak %.1f GFLOP/s on every thread; each kernel's share of it:\n", nnp::bench::fma_tier(),
              peak->second.gflops);
  const std::pair<const char*, const char*> kernels[] = {
      {"W4/nnplug", "f32 GEMM 1024^3"},
      {"Kernel/gemm_bf16", "bf16 GEMM 1024^3 (f32 sums)"},
      {"Kernel/gemm_int8", "int8 GEMM 256x1024x1024 (int8 multiply-adds counted as FMAs)"},
      {"Kernel/attention", "attention, W7's 128 heads of 64 x 32 (compiled)"},
      {"Kernel/conv_direct", "W3's first convolution, batch 64 (packed direct; direct FLOPs)"},
      {"Kernel/conv_winograd", "W3's second convolution, batch 64 (packed Winograd; direct FLOPs)"}};
  for (const auto& [name, what] : kernels) {
    auto k = r.figures.find(name);
    if (k == r.figures.end() || k->second.gflops <= 0) continue;
    std::printf("Peak %-22s %8.1f GFLOP/s  %5.1f %% of the %s peak  (%s)\n", name, k->second.gflops,
                100.0 * k->second.gflops / peak->second.gflops, nnp::bench::fma_tier(), what);
  }
}

// A run that timed both variants, interleaved step by step.
void print_interleaved(const RatioReporter& r, const char* workload, const char* name, const char* ours,
                       const char* peer, const char* target) {
  auto a = r.figures.find(name);
  if (a == r.figures.end() || a->second.peer_us <= 0) return;
  std::printf("%-4s %-12s %8.1f us/step  %-16s %8.1f us/step  ratio %.3f  (target %s; interleaved in one run)\n",
              workload, ours, a->second.ours_us, peer, a->second.peer_us, a->second.ours_us / a->second.peer_us,
              target);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nratios measured in this run (nnplug / peer), cpu tier %s%s:\n", nnp::bench::fma_tier(),
              std::getenv("NNP_CPU_ISA") ? " (capped by NNP_CPU_ISA)" : "");
  print_ratio(reporter, "W1", "W1/nnplug", "W1/libtorch", false, "<= 0.75; time per training step");
  print_ratio(reporter, "W1", "W1/nnplug", "W10/cblas_sgemm", false, "<= 1.10; against its eight GEMMs alone (W10)");
  print_interleaved(reporter, "W1c", "W1c/interleaved", "captured", "eager", "<= 0.9");
  print_ratio(reporter, "W2a", "W2a/nnplug", "W2a/libtorch", false, "<= 0.10");
  print_ratio(reporter, "W2b", "W2b/nnplug", "W2b/libtorch", false, "<= 0.10; forward and backward per op", 100);
  print_ratio(reporter, "W2c", "W2c/compiled", "W2c/eager", false, "<= 0.3; 20 elementwise ops on [64,64]");
  print_ratio(reporter, "W2c", "W2c/arith_compiled", "W2c/arith_eager", false,
              "informative; the arithmetic and ReLU alone");
  print_ratio(reporter, "W3", "W3/nnplug", "W3/libtorch", false, "<= 0.60; time per training step");
  print_ratio(reporter, "W7", "W7/nnplug", "W7/libtorch", false, "<= 0.80; time per training step");
  // NNP_CPU_ISA=avx2 (docs/plugins.md) runs the cpu backend as a CPU without AVX-512: the AVX2 target applies.
  const char* isa_cap = std::getenv("NNP_CPU_ISA");
  const bool capped = isa_cap && (std::string(isa_cap) == "avx2" || std::string(isa_cap) == "baseline");
  print_interleaved(reporter, "W7amp", "W7amp/interleaved", "bf16 autocast", "f32",
                    capped ? "<= 1.0; NNP_CPU_ISA caps the cpu backend below AVX-512 (an AVX2 CPU's paths)"
                    : __builtin_cpu_supports("avx512bf16") ? "<= 0.8; this CPU has AVX512_BF16"
                                                           : "<= 1.0; this CPU lacks AVX512_BF16");
  if (auto a = reporter.figures.find("W7amp/interleaved"), b = reporter.figures.find("W7amp/libtorch");
      a != reporter.figures.end() && b != reporter.figures.end() && a->second.ours_us > 0)
    std::printf(
        "%-4s %-12s %8.1f us/step  %-16s %8.1f us/step  ratio %.3f  (target <= 0.5; libtorch's W7 under "
        "its own CPU autocast)\n",
        "W7amp", "bf16 autocast", a->second.ours_us, "W7amp/libtorch", b->second.seconds_per_iteration * 1e6,
        a->second.ours_us / (b->second.seconds_per_iteration * 1e6));
  print_ratio(reporter, "W4", "W4/nnplug", "W4/cblas_sgemm", true, ">= 0.97");
  print_ratio(reporter, "W4", "W4/nnplug", "W4/libtorch", true, "informative");
  print_ratio(reporter, "Q1", "QLinear/int8_batch1", "QLinear/f32_batch1", false,
              "informative; dynamic int8 / f32 Linear 784->512, batch 1");
  print_ratio(reporter, "Q64", "QLinear/int8_batch64", "QLinear/f32_batch64", false, "<= 0.6; batch 64");
  print_peak_shares(reporter);
  // On a GPU (cuda:0), in nnp_gpu_bench. PyTorch for CUDA is not in Debian
  // (libtorch-dev is CPU-only): G1's peer here is the same step written
  // directly in CUDA; scripts/gpu_checks.sh adds PyTorch where the GPU
  // machine has it.
  print_ratio(reporter, "G1", "G1/nnplug", "G1/cuda_direct", false, "<= 1.1; time per training step");
  print_ratio(reporter, "G2", "G2/nnplug_f32", "G2/cublas_f32", true, ">= 0.95");
  print_ratio(reporter, "G2", "G2/nnplug_bf16", "G2/cublas_bf16", true, ">= 0.95");
  benchmark::Shutdown();
  return 0;
}
