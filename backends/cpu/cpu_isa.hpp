// The instruction sets the cpu backend's kernels may use: what the CPU has,
// capped by NNP_CPU_ISA so that a machine with AVX-512 runs the paths a
// smaller CPU takes (to test them, and to measure what such a CPU gets):
//   NNP_CPU_ISA=avx2      nothing of AVX-512 or AMX (AVX2 and FMA stay)
//   NNP_CPU_ISA=baseline  x86-64's SSE2 only
// Only the kernel table (cpu_kernel_table.hpp) reads it: kernels read their
// entry there. Read once per process.
#pragma once

namespace nnp::cpu {

struct CpuIsa {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512dq = false, avx512bw = false, avx512vl = false;
  bool avx512vnni = false, avx512bf16 = false;
  bool amx_bf16 = false;  // AMX's tiles and their bf16 products (the OS must still grant them: cpu_amx_gemm.cpp asks)
  const char* cap = "";   // NNP_CPU_ISA as read: "", "avx2" or "baseline"
};
const CpuIsa& cpu_isa();

}  // namespace nnp::cpu
