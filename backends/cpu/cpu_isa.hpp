// The instruction sets the cpu backend's kernels may use: what the CPU has,
// capped by NNP_CPU_ISA so that a machine with AVX-512 runs the paths a
// smaller CPU takes (to test them, and to measure what such a CPU gets):
//   NNP_CPU_ISA=avx2      nothing of AVX-512 or AMX (AVX2 and FMA stay)
//   NNP_CPU_ISA=baseline  x86-64's SSE2 only
// Kernels ask cpu_isa() instead of __builtin_cpu_supports, and loops built
// for several instruction sets use NNP_CPU_CLONES instead of GCC's
// target_clones (whose choice no variable can cap). Read once per process.
#pragma once

namespace nnp::cpu {

struct CpuIsa {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512dq = false, avx512bw = false, avx512vl = false;
  bool avx512vnni = false, avx512bf16 = false;  // (AMX's tiles: cpu_amx_gemm.cpp asks the CPU and the OS itself)
  const char* cap = "";                         // NNP_CPU_ISA as read: "", "avx2" or "baseline"
};
const CpuIsa& cpu_isa();

// One function built three times (targets "avx512f", "avx2" and the
// baseline, as target_clones("avx512f", "avx2", "default") builds it: the
// AVX-512 build may fuse multiplies and adds, the AVX2 one does not), the
// build chosen at its first call by cpu_isa(): GCC's target_clones, capped.
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
  return cpu_isa().avx512f ? avx512 : cpu_isa().avx2 ? avx2 : baseline;
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
// at a time.
#define NNP_CPU_CLONES_BY_WIDTH(ret, name, params, args, body)                              \
  __attribute__((target("avx512f"))) ret name##_avx512 params { return body<16> args; }     \
  __attribute__((target("avx2"))) ret name##_avx2 params { return body<8> args; }           \
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
