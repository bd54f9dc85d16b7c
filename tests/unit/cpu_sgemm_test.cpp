// The cpu backend's own f32 GEMM kernels (backends/cpu/cpu_sgemm*.cpp,
// compiled into this test): every kernel this CPU can run, against a loop in
// double precision, on the shapes where their packing and blocking have
// edges: rows and columns that are not multiples of the register block, k
// over several cache blocks and not a multiple of the vector width, every
// transpose, leading dimensions wider than the matrix, beta 0 over NaN, and
// beta 1. The conformance kit checks the backend's matmul through the ABI;
// this test reaches the kernels the CPU has but the backend does not choose
// (AVX2 on an AVX-512 machine). The bf16 forms of the kernels must give the
// bits of the f32 kernel run on the widened operands, then rounded.
#include "cpu_sgemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu_isa.hpp"

namespace {

using nnp::cpu::SgemmKernel;
using Kernel = void (*)(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float,
                        float*, int64_t, const nnp::cpu::SgemmEpilogue&);

struct Case {
  bool trans_a, trans_b;
  int64_t m, n, k;
  int64_t pad;  // leading dimensions exceed the stored width by this much
  float beta;
  bool epilogue = false;  // bias of each column, then ReLU, as the last block of k stores
};

// Fails with the case and the worst element unless kernel(case) matches the
// double-precision product within k ulps-scale of the sum's magnitude.
void check(Kernel kernel, const Case& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 7919 + c.n * 131 + c.k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  // op(a) is [m, k]: stored [m, k] or, transposed, [k, m].
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  std::vector<float> a(static_cast<size_t>(a_rows * lda)), b(static_cast<size_t>(b_rows * ldb));
  for (float& x : a) x = uniform(rng);
  for (float& x : b) x = uniform(rng);
  std::vector<float> out(static_cast<size_t>(c.m * ldc));
  for (float& x : out) x = c.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : uniform(rng);
  const std::vector<float> before = out;

  std::vector<float> bias(static_cast<size_t>(c.n));
  for (float& x : bias) x = uniform(rng);
  nnp::cpu::SgemmEpilogue epilogue;
  if (c.epilogue) {
    epilogue.bias = bias.data();
    epilogue.relu = true;
  }
  kernel(c.trans_a, c.trans_b, c.m, c.n, c.k, a.data(), lda, b.data(), ldb, c.beta, out.data(), ldc, epilogue);

  auto at_a = [&](int64_t i, int64_t p) { return c.trans_a ? a[p * lda + i] : a[i * lda + p]; };
  auto at_b = [&](int64_t p, int64_t j) { return c.trans_b ? b[j * ldb + p] : b[p * ldb + j]; };
  double worst = 0;
  std::string where;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= c.n) {  // the padding past each row is never written
        ASSERT_TRUE(std::isnan(out[at]) ? std::isnan(before[at]) : out[at] == before[at]) << "wrote column " << j;
        continue;
      }
      double sum = c.beta == 0.0f ? 0.0 : static_cast<double>(c.beta) * before[at];
      for (int64_t p = 0; p < c.k; ++p) sum += static_cast<double>(at_a(i, p)) * at_b(p, j);
      if (c.epilogue) sum = std::max(0.0, sum + bias[static_cast<size_t>(j)]);
      const double error = std::fabs(out[at] - sum);
      if (!(error <= worst)) {  // also catches NaN
        worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
        where = "c[" + std::to_string(i) + "," + std::to_string(j) + "] = " + std::to_string(out[at]) + ", expected " +
                std::to_string(sum);
      }
    }
  EXPECT_LE(worst, 1e-6 * static_cast<double>(c.k) + 1e-6)
      << (c.trans_a ? "a^T " : "a ") << (c.trans_b ? "b^T " : "b ") << c.m << "x" << c.n << "x" << c.k << " pad "
      << c.pad << " beta " << c.beta << (c.epilogue ? " bias+relu" : "") << ": " << where;
}

const Case kCases[] = {
    // W1's products as the pool splits them.
    {false, true, 128, 256, 784, 0, 0.0f},
    {true, false, 256, 512, 128, 0, 0.0f},
    {false, false, 128, 256, 512, 0, 0.0f},
    // Edges: a row block and a column block short, k just over one and over
    // two cache blocks (256 and 512 for AVX2 and AVX-512) and not a
    // multiple of 8 or 16.
    {false, false, 25, 33, 33, 0, 0.0f},
    {false, false, 128, 512, 10, 0, 0.0f},
    {true, true, 30, 40, 9, 2, 0.0f},
    {false, true, 31, 47, 257, 3, 0.0f},
    {true, false, 13, 70, 513, 5, 0.0f},
    {true, true, 67, 35, 1100, 1, 0.0f},
    {false, false, 200, 100, 300, 0, 0.0f},
    // More rows than one block of rows (72 and 192).
    {false, true, 400, 40, 64, 2, 0.0f},
    {true, true, 197, 161, 40, 0, 0.0f},
    // beta: added to, and (beta 1) as a later block of k does.
    {false, false, 50, 60, 70, 4, 1.0f},
    {true, false, 30, 100, 600, 0, 0.5f},
    {false, true, 24, 32, 32, 0, -2.0f},
    // The epilogue (gemm_epilogue): on the last block of k only (k over
    // two blocks), short row and column blocks, after beta.
    {false, false, 50, 45, 600, 3, 0.0f, true},
    {true, true, 13, 70, 64, 0, 0.0f, true},
    {false, false, 30, 33, 40, 0, 1.0f, true},
};

void check_all(Kernel kernel) {
  for (const Case& c : kCases) check(kernel, c);
}

bool has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool has_avx512() { return has_avx2() && __builtin_cpu_supports("avx512f"); }

TEST(CpuSgemm, Avx2KernelMatchesADoubleLoop) {
  if (!has_avx2()) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
  check_all(nnp::cpu::sgemm_avx2);
}

TEST(CpuSgemm, Avx512KernelMatchesADoubleLoop) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512F: the AVX-512 kernel is not run";
  check_all(nnp::cpu::sgemm_avx512);
}

// The packed right operand (the gemm_pack / gemm_packed kernels): b packed
// once, then c written in two column ranges as two threads split it, the
// first ending on a panel's edge.
void packed_in_two_ranges(bool, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                          const float* b, int64_t ldb, float, float* c, int64_t ldc,
                          const nnp::cpu::SgemmEpilogue& epilogue) {
  std::vector<float> storage(static_cast<size_t>(nnp::cpu::sgemm_avx512_packed_b_floats(k, n) + 16));
  auto* packed = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) & ~uintptr_t{63});
  nnp::cpu::sgemm_avx512_pack_b(trans_b, k, n, b, ldb, packed);
  const int64_t panel = nnp::cpu::sgemm_avx512_panel_columns(), split = n / 2 / panel * panel;
  if (split > 0) nnp::cpu::sgemm_avx512_packed(m, n, k, a, lda, packed, 0, split, c, ldc, epilogue);
  nnp::cpu::sgemm_avx512_packed(m, n, k, a, lda, packed, split, n, c, ldc, epilogue);
}

TEST(CpuSgemm, Avx512KernelFromAPackedRightOperandMatchesADoubleLoop) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512F: the packed products are not run";
  for (const Case& c : kCases)  // the packed path multiplies a as it lies, into a c it does not read
    if (!c.trans_a && c.beta == 0.0f) check(packed_in_two_ranges, c);
  // Every height of the 6 x 64 register block's tiles (1 to 6 rows, and 6
  // then 2), an odd k where one or two rows keep two sets of accumulators,
  // over two and three blocks of k, with and without the epilogue.
  const Case few_rows[] = {{false, false, 5, 70, 600, 0, 0.0f, true},  {false, true, 1, 33, 40, 2, 0.0f},
                           {false, false, 1, 64, 7, 0, 0.0f, true},    {false, true, 2, 70, 33, 1, 0.0f},
                           {false, false, 3, 130, 100, 0, 0.0f, true}, {false, true, 4, 64, 17, 3, 0.0f},
                           {false, false, 8, 96, 1030, 0, 0.0f},       {false, true, 11, 96, 7, 1, 0.0f, true}};
  for (const Case& c : few_rows) check(packed_in_two_ranges, c);
}

// gemm_packed cuts its rows at multiples of 48 (whole 6-row tiles) for its
// threads, in as many parts as the cores' speeds make: every cut must give
// the bits of the uncut product, or results would vary from run to run.
TEST(CpuSgemm, Avx512PackedProductCutAtWholeTilesGivesTheSameBits) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512F: the packed products are not run";
  const int64_t m = 301, n = 70, k = 37;  // the last tile has one row (two sets of accumulators)
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), bias(static_cast<size_t>(n));
  for (std::vector<float>* v : {&a, &b, &bias})
    for (float& x : *v) x = uniform(rng);
  std::vector<float> storage(static_cast<size_t>(nnp::cpu::sgemm_avx512_packed_b_floats(k, n) + 16));
  auto* packed = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) & ~uintptr_t{63});
  nnp::cpu::sgemm_avx512_pack_b(false, k, n, b.data(), n, packed);
  nnp::cpu::SgemmEpilogue epilogue;
  epilogue.bias = bias.data();
  std::vector<float> whole(static_cast<size_t>(m * n)), cut(whole.size());
  nnp::cpu::sgemm_avx512_packed(m, n, k, a.data(), k, packed, 0, n, whole.data(), n, epilogue);
  for (const std::vector<int64_t>& cuts : std::vector<std::vector<int64_t>>{{0, 48, m}, {0, 144, 192, 288, m}}) {
    std::fill(cut.begin(), cut.end(), 0.0f);
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
      nnp::cpu::sgemm_avx512_packed(cuts[i + 1] - cuts[i], n, k, a.data() + cuts[i] * k, k, packed, 0, n,
                                    cut.data() + cuts[i] * n, n, epilogue);
    EXPECT_EQ(0, std::memcmp(whole.data(), cut.data(), whole.size() * sizeof(float))) << cuts.size() - 1 << " parts";
  }
}

// bf16 operands widened as they are packed and c rounded as each block is
// finished must be exactly the f32 kernel on the widened operands with its
// result rounded to nearest even: the same blocks, the same sums. The
// shapes add bf16's own edges: odd runs (the last element loaded alone),
// runs of under a vector, one block of k (sums kept per block of rows) and
// several (sums of the whole c), and operands allocated to their last
// element (ASan sees a read past it).
using Bf16Kernel = void (*)(bool, bool, int64_t, int64_t, int64_t, const uint16_t*, int64_t, const uint16_t*, int64_t,
                            uint16_t*, int64_t);

float widened(uint16_t bits) {
  const uint32_t word = uint32_t{bits} << 16;
  float x;
  std::memcpy(&x, &word, sizeof x);
  return x;
}

uint16_t rounded(float x) {  // to nearest even; a NaN stays a quiet NaN
  uint32_t word;
  std::memcpy(&word, &x, sizeof word);
  if (std::isnan(x)) return static_cast<uint16_t>((word >> 16) | 0x40);
  return static_cast<uint16_t>((word + 0x7FFF + ((word >> 16) & 1)) >> 16);
}

void check_bf16(Bf16Kernel kernel16, Kernel kernel32, const Case& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.m * 31 + c.n * 17 + c.k));
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  // Exactly as long as the last element needs.
  std::vector<uint16_t> a(static_cast<size_t>((a_rows - 1) * lda + a_cols));
  std::vector<uint16_t> b(static_cast<size_t>((b_rows - 1) * ldb + b_cols));
  for (uint16_t& x : a) x = rounded(uniform(rng));
  for (uint16_t& x : b) x = rounded(uniform(rng));
  std::vector<float> a32(a.size()), b32(b.size());
  std::transform(a.begin(), a.end(), a32.begin(), widened);
  std::transform(b.begin(), b.end(), b32.begin(), widened);
  std::vector<float> sums(static_cast<size_t>(c.m * ldc));
  kernel32(c.trans_a, c.trans_b, c.m, c.n, c.k, a32.data(), lda, b32.data(), ldb, 0.0f, sums.data(), ldc, {});
  std::vector<uint16_t> out(static_cast<size_t>(c.m * ldc), 0xABCD);
  kernel16(c.trans_a, c.trans_b, c.m, c.n, c.k, a.data(), lda, b.data(), ldb, out.data(), ldc);
  int64_t wrong = 0;
  std::string first;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      const uint16_t expected = j < c.n ? rounded(sums[at]) : uint16_t{0xABCD};  // padding never written
      if (out[at] != expected && wrong++ == 0)
        first = "c[" + std::to_string(i) + "," + std::to_string(j) + "] = " + std::to_string(out[at]) + ", expected " +
                std::to_string(expected);
    }
  EXPECT_EQ(wrong, 0) << (c.trans_a ? "a^T " : "a ") << (c.trans_b ? "b^T " : "b ") << c.m << "x" << c.n << "x" << c.k
                      << " pad " << c.pad << ": " << first;
}

void check_all_bf16(Bf16Kernel kernel16, Kernel kernel32) {
  for (const Case& c : kCases)
    if (c.beta == 0.0f && !c.epilogue) check_bf16(kernel16, kernel32, c);
  const Case odd[] = {{false, false, 7, 33, 5, 0, 0.0f},     {true, true, 9, 35, 11, 1, 0.0f},
                      {true, false, 31, 17, 3, 0, 0.0f},     {false, true, 250, 45, 1201, 1, 0.0f},
                      {true, false, 300, 129, 130, 3, 0.0f}, {false, false, 1, 1, 1, 0, 0.0f}};
  for (const Case& c : odd) check_bf16(kernel16, kernel32, c);
}

TEST(CpuSgemm, Avx2Bf16KernelGivesTheRoundedF32Product) {
  if (!has_avx2()) GTEST_SKIP() << "this CPU has no AVX2 + FMA";
  check_all_bf16(nnp::cpu::sgemm_bf16_avx2, nnp::cpu::sgemm_avx2);
}

TEST(CpuSgemm, Avx512Bf16KernelGivesTheRoundedF32Product) {
  if (!has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512F: the AVX-512 kernel is not run";
  check_all_bf16(nnp::cpu::sgemm_bf16_avx512, nnp::cpu::sgemm_avx512);
}

TEST(CpuSgemm, TheBackendChoosesTheWidestKernelAndKeepsSmallProductsForOpenBlas) {
  const char* asked = std::getenv("NNP_CPU_SGEMM");
  const SgemmKernel chosen = nnp::cpu::own_sgemm_kernel();
  if (asked != nullptr && std::string(asked) == "openblas") {
    EXPECT_EQ(chosen, SgemmKernel::openblas);
  } else if (nnp::cpu::cpu_isa().avx512f && !(asked != nullptr && std::string(asked) == "avx2")) {
    EXPECT_EQ(chosen, SgemmKernel::avx512);  // (NNP_CPU_ISA=avx2 caps cpu_isa() below AVX-512)
  } else if (nnp::cpu::cpu_isa().avx2 && nnp::cpu::cpu_isa().fma) {
    EXPECT_EQ(chosen, SgemmKernel::avx2);
  } else {
    EXPECT_EQ(chosen, SgemmKernel::openblas);
  }
  EXPECT_STREQ(nnp::cpu::own_sgemm_kernel_name(chosen), chosen == SgemmKernel::avx512 ? "avx512"
                                                        : chosen == SgemmKernel::avx2 ? "avx2"
                                                                                      : "openblas");
  // A row against a matrix, few rows or columns, and almost no depth stay
  // with OpenBLAS; W1's last layer's input gradient (depth 10) does not.
  EXPECT_FALSE(nnp::cpu::own_sgemm_pays(1, 512, 784));
  EXPECT_FALSE(nnp::cpu::own_sgemm_pays(128, 10, 512));
  EXPECT_FALSE(nnp::cpu::own_sgemm_pays(10, 512, 128));
  EXPECT_FALSE(nnp::cpu::own_sgemm_pays(128, 512, 4));
  EXPECT_EQ(nnp::cpu::own_sgemm_pays(128, 512, 10), chosen != SgemmKernel::openblas);
  EXPECT_EQ(nnp::cpu::own_sgemm_pays(128, 256, 784), chosen != SgemmKernel::openblas);
  // bf16 products go to the own kernels from far less work (an attention
  // head's), past the same least rows, columns and depth.
  EXPECT_FALSE(nnp::cpu::own_sgemm_pays(64, 32, 64));
  EXPECT_EQ(nnp::cpu::own_sgemm_bf16_pays(64, 32, 64), chosen != SgemmKernel::openblas);
  EXPECT_FALSE(nnp::cpu::own_sgemm_bf16_pays(32, 10, 128));
  EXPECT_FALSE(nnp::cpu::own_sgemm_bf16_pays(128, 512, 4));
}

}  // namespace
