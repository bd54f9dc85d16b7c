// bf16 products on the cpu backend (AMX tiles where the CPU has them, its
// own kernels widening bf16 as they pack elsewhere, a conversion around
// OpenBLAS for the smallest): equal to the f32 product
// of the same values rounded once to bf16, within one bf16 unit (the sums
// run in f32 in another order), on the shapes where the tiles' blocking has
// edges (rows and columns past a block of 32, k past a tile of 32, odd k),
// transposed views of either operand, batches; inf and NaN where f32 has
// them.
#include <gtest/gtest.h>

#include <cmath>
#include <nnp/nnp.hpp>

#include "test_support.hpp"

namespace bf16_matmul_test {

using namespace nnp;
using nnp::test::floats;

// One bf16 unit of the result, plus what summing k terms of about 1 in f32
// in another order may change where they cancel (about k * 2^-24 each way).
void expect_within_one_unit(const Tensor& got, const Tensor& want, int64_t k) {
  const std::vector<float> g = floats(got), w = floats(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) || std::isinf(w[i])) {
      EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]) << i << ": " << g[i] << " vs " << w[i];
      continue;
    }
    EXPECT_LE(std::fabs(g[i] - w[i]), std::ldexp(std::fabs(w[i]), -7) + 1e-7 * static_cast<double>(k))
        << i << ": " << g[i] << " vs " << w[i];
  }
}

// The f32 product of bf16 values, rounded once to bf16.
Tensor f32_product(const Tensor& a, const Tensor& b) {
  return a.to(Dtype::f32).matmul(b.to(Dtype::f32)).to(Dtype::bf16);
}

TEST(Bf16Matmul, EqualsTheF32ProductRoundedOnceOnEveryEdge) {
  manual_seed(3);
  const int64_t shapes[][3] = {{67, 45, 300}, {64, 64, 32}, {33, 97, 61}, {128, 130, 2048}, {64, 32, 64}, {96, 40, 33}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    const Tensor a = randn({m, k}).to(Dtype::bf16), b = randn({k, n}).to(Dtype::bf16);
    const Tensor at = a.t().contiguous().t(), bt = b.t().contiguous().t();  // the same values, transposed in memory
    expect_within_one_unit(a.matmul(b), f32_product(a, b), k);
    expect_within_one_unit(at.matmul(b), f32_product(a, b), k);
    expect_within_one_unit(a.matmul(bt), f32_product(a, b), k);
    expect_within_one_unit(at.matmul(bt), f32_product(a, b), k);
  }
}

TEST(Bf16Matmul, BatchesAndNonFiniteValuesAsF32) {
  manual_seed(4);
  Tensor a = randn({3, 70, 96}), b = randn({3, 96, 50});
  std::vector<float> va = floats(a);
  va[5] = std::numeric_limits<float>::infinity();                      // row 0 of batch 0
  va[70 * 96 + 96 * 3 + 7] = std::numeric_limits<float>::quiet_NaN();  // row 3 of batch 1
  a = from_vector(va, a.shape()).to(Dtype::bf16);
  b = b.to(Dtype::bf16);
  expect_within_one_unit(a.matmul(b), f32_product(a, b), 96);
}

// The reference backend (double sums, rounded once) agrees within a unit.
TEST(Bf16Matmul, AgreesWithTheReferenceBackend) {
  manual_seed(5);
  const Tensor a = randn({80, 200}).to(Dtype::bf16), b = randn({200, 72}).to(Dtype::bf16);
  const Device reference("reference");
  expect_within_one_unit(a.matmul(b), a.to(reference).matmul(b.to(reference)).to(Device::cpu()), 200);
}

}  // namespace bf16_matmul_test
