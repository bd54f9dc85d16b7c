#include "cpu_isa.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nnp::cpu {
namespace {

CpuIsa detect() {
  CpuIsa isa;
#if defined(__x86_64__)
  isa.avx2 = __builtin_cpu_supports("avx2");
  isa.fma = __builtin_cpu_supports("fma");
  isa.avx512f = __builtin_cpu_supports("avx512f");
  isa.avx512dq = __builtin_cpu_supports("avx512dq");
  isa.avx512bw = __builtin_cpu_supports("avx512bw");
  isa.avx512vl = __builtin_cpu_supports("avx512vl");
  isa.avx512vnni = __builtin_cpu_supports("avx512vnni");
  isa.avx512bf16 = __builtin_cpu_supports("avx512bf16");
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) isa.amx_bf16 = ((edx >> 24) & 1u) && ((edx >> 22) & 1u);
#endif
  const char* asked = std::getenv("NNP_CPU_ISA");
  if (asked == nullptr || *asked == '\0') return isa;
  const bool avx2 = std::strcmp(asked, "avx2") == 0, baseline = std::strcmp(asked, "baseline") == 0;
  if (!avx2 && !baseline) {
    // A typo must not silently measure the full CPU as if capped.
    std::fprintf(stderr, "nnplug cpu backend: NNP_CPU_ISA=%s is not avx2 or baseline; ignored\n", asked);
    return isa;
  }
  isa.cap = avx2 ? "avx2" : "baseline";
  isa.avx512f = isa.avx512dq = isa.avx512bw = isa.avx512vl = isa.avx512vnni = isa.avx512bf16 = isa.amx_bf16 = false;
  if (baseline) isa.avx2 = isa.fma = false;
  return isa;
}

}  // namespace

const CpuIsa& cpu_isa() {
  static const CpuIsa isa = detect();
  return isa;
}

}  // namespace nnp::cpu
