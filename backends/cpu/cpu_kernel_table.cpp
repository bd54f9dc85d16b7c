#include "cpu_kernel_table.hpp"

#include <cstdlib>
#include <cstring>

namespace nnp::cpu {
namespace {

bool is(const char* value, const char* want) { return value != nullptr && std::strcmp(value, want) == 0; }

// The widest of the kernel's forms (down from `widest`) that the CPU has.
Tier widest(const CpuIsa& isa, Tier widest_form) {
  const bool avx2 = isa.avx2 && isa.fma;
  if (widest_form == Tier::avx512 && avx2 && isa.avx512f) return Tier::avx512;
  if (widest_form != Tier::baseline && avx2) return Tier::avx2;
  return Tier::baseline;
}

}  // namespace

const char* tier_name(Tier tier) {
  switch (tier) {
    case Tier::avx512: return "avx512";
    case Tier::avx2: return "avx2";
    default: return "baseline";
  }
}

KernelTable choose_kernels(const CpuIsa& isa, const KernelOverrides& overrides) {
  KernelTable t{};
  t.cap = isa.cap;
  t.tier = isa.avx512f ? Tier::avx512 : isa.avx2 ? Tier::avx2 : Tier::baseline;
  t.gemm = is(overrides.sgemm, "openblas") ? Tier::baseline
           : is(overrides.sgemm, "avx2")   ? widest(isa, Tier::avx2)
                                           : widest(isa, Tier::avx512);
  t.gemm_amx_bf16 = isa.avx512f && isa.avx512bf16 && isa.amx_bf16;
  t.attention = is(overrides.attention, "generic") ? Tier::baseline : widest(isa, Tier::avx512);
  t.conv_packed = widest(isa, Tier::avx512);
  const bool vnni = isa.avx512vnni && isa.avx512bw && isa.avx512vl;
  t.int8_gemm = is(overrides.int8, "scalar")          ? Int8Form::scalar
                : vnni && !is(overrides.int8, "avx2") ? Int8Form::vnni
                : isa.avx2                            ? Int8Form::avx2
                                                      : Int8Form::scalar;
  t.int8_conv_packed = vnni && !is(overrides.int8, "avx2") && !is(overrides.int8, "scalar") ? Tier::avx512
                       : isa.avx2 && !is(overrides.int8, "scalar")                          ? Tier::avx2
                                                                                            : Tier::baseline;
  t.layer_norm = widest(isa, Tier::avx512);
  t.softmax_rows = widest(isa, Tier::avx2);
  t.reductions = isa.avx2 ? Tier::avx2 : Tier::baseline;
  t.pooling = isa.avx2 ? Tier::avx2 : Tier::baseline;
  t.relu_backward = isa.avx2 ? Tier::avx2 : Tier::baseline;
  t.random = isa.avx512f && isa.avx512dq ? Tier::avx512 : isa.avx2 ? Tier::avx2 : Tier::baseline;
  t.bf16_vectors = isa.avx512f ? Tier::avx512 : isa.avx2 ? Tier::avx2 : Tier::baseline;
  return t;
}

const KernelTable& kernel_table() {
  static const KernelTable table = choose_kernels(
      cpu_isa(), {std::getenv("NNP_CPU_ATTENTION"), std::getenv("NNP_CPU_GEMM_I8"), std::getenv("NNP_CPU_SGEMM")});
  return table;
}

std::vector<TableEntry> entries(const KernelTable& t) {
  const Tier int8 = t.int8_gemm == Int8Form::vnni   ? Tier::avx512
                    : t.int8_gemm == Int8Form::avx2 ? Tier::avx2
                                                    : Tier::baseline;
  return {{"gemm", t.gemm},
          {"attention", t.attention},
          {"conv packed", t.conv_packed},
          {"int8 gemm", int8},
          {"int8 conv packed", t.int8_conv_packed},
          {"layer norm", t.layer_norm},
          {"softmax rows", t.softmax_rows},
          {"reductions", t.reductions},
          {"pooling", t.pooling},
          {"relu backward", t.relu_backward},
          {"random", t.random},
          {"bf16", t.bf16_vectors},
          {"elementwise", t.tier}};
}

std::string describe(const KernelTable& t) {
  std::string s = std::string("tier ") + tier_name(t.tier);
  if (*t.cap) s += std::string(" (capped by NNP_CPU_ISA=") + t.cap + ")";
  s += "; kernels:";
  bool first = true;
  for (const TableEntry& e : entries(t)) {
    const char* form = tier_name(e.tier);
    if (e.tier == Tier::baseline && std::strcmp(e.kernel, "gemm") == 0) form = "openblas";
    if (e.tier == Tier::baseline && std::strstr(e.kernel, "packed") != nullptr) form = "none";
    if (e.tier == Tier::avx512 && std::strncmp(e.kernel, "int8", 4) == 0) form = "vnni";
    s += std::string(first ? " " : ", ") + e.kernel + " " + form;
    first = false;
  }
  if (t.gemm_amx_bf16) s += " (bf16 products on AMX where the OS grants its tiles)";
  return s;
}

}  // namespace nnp::cpu
