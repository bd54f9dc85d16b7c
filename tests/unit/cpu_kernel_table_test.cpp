// The cpu backend's kernel table (cpu_kernel_table.hpp): each CPU tier gets
// the widest form of every hot kernel, a kernel with an AVX-512 form has an
// AVX2 one, and the variables that force a narrower form do.
#include "cpu_kernel_table.hpp"

#include <gtest/gtest.h>

#include <string>

namespace nnp::cpu {
namespace {

CpuIsa avx512_cpu() {
  CpuIsa isa;
  isa.avx2 = isa.fma = isa.avx512f = isa.avx512dq = isa.avx512bw = isa.avx512vl = true;
  isa.avx512vnni = isa.avx512bf16 = true;
  return isa;
}

CpuIsa avx2_cpu() {  // AMD's Zen 3, Intel's client cores
  CpuIsa isa;
  isa.avx2 = isa.fma = true;
  return isa;
}

TEST(CpuKernelTable, AnAvx512CpuRunsEveryKernelInVectors) {
  const KernelTable t = choose_kernels(avx512_cpu(), {});
  EXPECT_EQ(t.tier, Tier::avx512);
  for (const TableEntry& e : entries(t)) EXPECT_NE(e.tier, Tier::baseline) << e.kernel;
  EXPECT_EQ(t.int8_gemm, Int8Form::vnni);
  EXPECT_EQ(t.gemm, Tier::avx512);
  EXPECT_EQ(t.attention, Tier::avx512);
  EXPECT_EQ(t.conv_packed, Tier::avx512);
  EXPECT_FALSE(t.gemm_amx_bf16);  // no AMX tiles in this CPU
}

TEST(CpuKernelTable, EveryKernelWithAnAvx512FormHasAnAvx2One) {
  const KernelTable wide = choose_kernels(avx512_cpu(), {}), narrow = choose_kernels(avx2_cpu(), {});
  EXPECT_EQ(narrow.tier, Tier::avx2);
  const std::vector<TableEntry> w = entries(wide), n = entries(narrow);
  ASSERT_EQ(w.size(), n.size());
  for (size_t i = 0; i < w.size(); ++i) {
    ASSERT_STREQ(w[i].kernel, n[i].kernel);
    if (w[i].tier == Tier::baseline) continue;
    EXPECT_EQ(n[i].tier, Tier::avx2) << w[i].kernel << " runs " << tier_name(w[i].tier)
                                     << " on an AVX-512 CPU but has no AVX2 form";
  }
  EXPECT_EQ(narrow.int8_gemm, Int8Form::avx2);
  EXPECT_EQ(narrow.int8_conv_packed, Tier::avx2);
}

TEST(CpuKernelTable, TheBaselineRunsPlainLoopsAndOpenBlas) {
  const KernelTable t = choose_kernels(CpuIsa{}, {});
  EXPECT_EQ(t.tier, Tier::baseline);
  for (const TableEntry& e : entries(t)) EXPECT_EQ(e.tier, Tier::baseline) << e.kernel;
  EXPECT_EQ(t.int8_gemm, Int8Form::scalar);
  EXPECT_NE(describe(t).find("gemm openblas"), std::string::npos) << describe(t);
}

TEST(CpuKernelTable, AvxWithoutFmaKeepsTheFmaKernelsOff) {
  CpuIsa isa;
  isa.avx2 = true;  // FMA off: the GEMM, attention and packed convolutions need it
  const KernelTable t = choose_kernels(isa, {});
  EXPECT_EQ(t.gemm, Tier::baseline);
  EXPECT_EQ(t.attention, Tier::baseline);
  EXPECT_EQ(t.conv_packed, Tier::baseline);
  EXPECT_EQ(t.reductions, Tier::avx2);
}

TEST(CpuKernelTable, TheVariablesForceNarrowerForms) {
  KernelOverrides asked;
  asked.attention = "generic";
  asked.int8 = "avx2";
  asked.sgemm = "openblas";
  const KernelTable t = choose_kernels(avx512_cpu(), asked);
  EXPECT_EQ(t.attention, Tier::baseline);
  EXPECT_EQ(t.int8_gemm, Int8Form::avx2);
  EXPECT_EQ(t.int8_conv_packed, Tier::avx2);  // NNP_CPU_GEMM_I8 keeps the int8 convolutions on the same path
  EXPECT_EQ(t.gemm, Tier::baseline);
  asked = {};
  asked.int8 = "scalar";
  asked.sgemm = "avx2";
  const KernelTable u = choose_kernels(avx512_cpu(), asked);
  EXPECT_EQ(u.int8_gemm, Int8Form::scalar);
  EXPECT_EQ(u.int8_conv_packed, Tier::baseline);
  EXPECT_EQ(u.gemm, Tier::avx2);
}

TEST(CpuKernelTable, TheDescriptionNamesTheTierTheCapAndEveryKernel) {
  CpuIsa isa = avx2_cpu();
  isa.cap = "avx2";
  const KernelTable t = choose_kernels(isa, {});
  const std::string text = describe(t);
  EXPECT_EQ(text.rfind("tier avx2 (capped by NNP_CPU_ISA=avx2); kernels: gemm avx2, attention avx2", 0), 0u) << text;
  for (const TableEntry& e : entries(t)) EXPECT_NE(text.find(e.kernel), std::string::npos) << e.kernel;
}

}  // namespace
}  // namespace nnp::cpu
