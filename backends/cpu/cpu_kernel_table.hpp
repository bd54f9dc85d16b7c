// Which form of each hot kernel the cpu backend runs: one table, filled
// once when the backend loads from what the CPU has (cpu_isa(), capped by
// NNP_CPU_ISA) and the variables that force a narrower form of one kernel
// (to test it on a wider CPU). Kernels read their entry here; none asks the
// CPU for itself. `nnplug devices` prints the table (describe()).
//
// Every hot kernel has a form per tier it can use: a kernel with an
// AVX-512 form has an AVX2 one (cpu_kernel_table_test checks it), so a CPU
// without AVX-512 (AMD's Zen 3, Intel's client cores) never falls to
// plain loops where an AVX-512 CPU runs vectors.
#pragma once

#include <string>
#include <vector>

#include "cpu_isa.hpp"

namespace nnp::cpu {

enum class Tier { baseline, avx2, avx512 };
const char* tier_name(Tier tier);

enum class Int8Form { scalar, avx2, vnni };

struct KernelTable {
  Tier tier;  // the widest the CPU allows: the builds NNP_CPU_CLONES picks from (elementwise, chains, row sums)
  Tier gemm;  // own packed f32/bf16 GEMM: avx512 (12 x 32), avx2 (6 x 16), or baseline (OpenBLAS takes every product)
  bool gemm_amx_bf16;     // the CPU has AMX tiles for bf16 products (cpu_amx_gemm.cpp asks the OS for them)
  Tier attention;         // fused attention: avx512, avx2, or baseline (GCC's generic vectors)
  Tier conv_packed;       // packed direct and Winograd convolutions; baseline: none (oneDNN or im2col)
  Int8Form int8_gemm;     // int8 products: vnni (vpdpbusd), avx2 (int16 pairs, vpmaddwd), scalar
  Tier int8_conv_packed;  // packed int8 convolutions: avx512 (VNNI's quads), avx2 (int16 pairs), baseline (none)
  Tier layer_norm;        // whole rows of 16 in AVX-512 intrinsics; else the clones' build (tier)
  Tier softmax_rows;      // f32 and bf16 rows: avx2, or baseline (scalar rows)
  Tier reductions;        // contiguous sums, variances and extremes: avx2 or baseline
  Tier pooling;           // 2 x 2 max pooling windows: avx2 or baseline
  Tier relu_backward;     // avx2 or baseline
  Tier random;            // Philox draws: avx512, avx2, or baseline
  Tier bf16_vectors;      // bf16 casts and arithmetic: avx512, avx2, or baseline
  const char* cap;        // NNP_CPU_ISA as read: "", "avx2" or "baseline"
};

// What the variables ask, read by kernel_table() from the environment.
struct KernelOverrides {
  const char* attention = nullptr;  // NNP_CPU_ATTENTION: "generic"
  const char* int8 = nullptr;       // NNP_CPU_GEMM_I8: "avx2" or "scalar"
  const char* sgemm = nullptr;      // NNP_CPU_SGEMM: "openblas" or "avx2"
};

// Each kernel's entry by name, as a tier (int8's: vnni as avx512), in the
// order describe() prints them.
struct TableEntry {
  const char* kernel;
  Tier tier;
};
std::vector<TableEntry> entries(const KernelTable& table);

// The table for a CPU with `isa` (a pure function, for the tests).
KernelTable choose_kernels(const CpuIsa& isa, const KernelOverrides& overrides);

// This process's table: chosen at its first call (the backend's init).
const KernelTable& kernel_table();

// "tier avx2 (NNP_CPU_ISA=avx2); gemm avx2, attention avx2, ...".
std::string describe(const KernelTable& table);

// One function built three times (targets "avx512f", "avx2" and the
// baseline, as target_clones("avx512f", "avx2", "default") builds it: the
// AVX-512 build may fuse multiplies and adds, the AVX2 one does not), the
// build chosen at its first call by the kernel table's tier: GCC's target_clones, capped.
// The work is an always_inline function, so that each build compiles it
// (and what it inlines) for its own instruction set:
//   NNP_CPU_INLINE void add_rows_body(const float* a, float* out, int64_t n) {
//     for (int64_t j = 0; j < n; ++j) out[j] += a[j];
//   }
//   NNP_CPU_CLONES(void, add_rows, (const float* a, float* out, int64_t n), (a, out, n), add_rows_body)
#define NNP_CPU_INLINE __attribute__((always_inline)) inline
// F named explicitly: the builds of an overloaded function resolve to it.
template <typename F>
F pick_build(F avx512, F avx2, F baseline) {
  const Tier tier = kernel_table().tier;
  return tier == Tier::avx512 ? avx512 : tier == Tier::avx2 ? avx2 : baseline;
}
#if defined(__x86_64__)
#define NNP_CPU_CLONES(ret, name, params, args, body)                                       \
  __attribute__((target("avx512f"))) ret name##_avx512 params { return body args; }         \
  __attribute__((target("avx2"))) ret name##_avx2 params { return body args; }              \
  ret name##_baseline params { return body args; }                                          \
  ret name params {                                                                         \
    static ret(*const build) params =                                                       \
        ::nnp::cpu::pick_build<ret(*) params>(name##_avx512, name##_avx2, name##_baseline); \
    return build args;                                                                      \
  }
// The same, with the body a template on the f32 lanes of the build's
// vectors (16, 8, 4), for bodies written with vmath's vectors: a generic
// vector wider than the build's registers has its selects done one lane
// at a time. The AVX2 build may fuse multiplies and adds, as the AVX-512
// one may (vmath's functions are within 2 ulp of libm's either way; the
// polynomials take a fifth fewer instructions).
#define NNP_CPU_CLONES_BY_WIDTH(ret, name, params, args, body)                              \
  __attribute__((target("avx512f"))) ret name##_avx512 params { return body<16> args; }     \
  __attribute__((target("avx2,fma"))) ret name##_avx2 params { return body<8> args; }       \
  ret name##_baseline params { return body<4> args; }                                       \
  ret name params {                                                                         \
    static ret(*const build) params =                                                       \
        ::nnp::cpu::pick_build<ret(*) params>(name##_avx512, name##_avx2, name##_baseline); \
    return build args;                                                                      \
  }
#else
#define NNP_CPU_CLONES(ret, name, params, args, body) \
  ret name params { return body args; }
#define NNP_CPU_CLONES_BY_WIDTH(ret, name, params, args, body) \
  ret name params { return body<4> args; }
#endif

}  // namespace nnp::cpu
