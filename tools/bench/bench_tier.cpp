// The CPU tier nnp_bench's figures are measured at (bench_tier.hpp).
#include "bench_tier.hpp"

#include <cstdlib>
#include <cstring>

namespace nnp::bench {

const char* fma_tier() {
#if defined(__x86_64__)
  const char* cap = std::getenv("NNP_CPU_ISA");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (cap && std::strcmp(cap, "baseline") == 0) return "baseline";
  if (__builtin_cpu_supports("avx512f") && avx2 && !(cap && std::strcmp(cap, "avx2") == 0)) return "avx512";
  if (avx2) return "avx2";
#endif
  return "baseline";
}

}  // namespace nnp::bench
