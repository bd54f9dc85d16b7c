// The cpu backend's sums and variances over a contiguous last dimension
// (softmax's backward, layer norm's statistics) run in AVX2 where the CPU
// has it, f32 and bf16: they must give the bits of their definition, four
// double accumulators over every fourth element, the tail added to the
// first, (acc0 + acc1) + (acc2 + acc3), rounded once to the tensor's dtype.
// Lengths around the vector of four and odd ones; mean and var (correction
// 1 and 0) over the same rows. Sums down the columns over two reduced
// dimensions that do not merge (a transposed activation's bias gradient)
// must give the sequential double sum in the reduced dimensions' order.
#include <gtest/gtest.h>
#include <nnp/half.h>

#include <cmath>
#include <cstring>
#include <nnp/nnp.hpp>
#include <random>
#include <vector>

namespace cpu_row_sums_test {

using namespace nnp;

// The definition, on the values as the tensor holds them.
double four_accumulator_sum(const std::vector<float>& row) {
  double acc[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= row.size(); i += 4)
    for (size_t j = 0; j < 4; ++j) acc[j] += static_cast<double>(row[i + j]);
  for (; i < row.size(); ++i) acc[0] += static_cast<double>(row[i]);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
double four_accumulator_squares(const std::vector<float>& row, double mean) {
  double acc[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= row.size(); i += 4)
    for (size_t j = 0; j < 4; ++j) {
      const double d = static_cast<double>(row[i + j]) - mean;
      acc[j] += d * d;
    }
  for (; i < row.size(); ++i) {
    const double d = static_cast<double>(row[i]) - mean;
    acc[0] += d * d;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(CpuRowSums, SumMeanAndVarGiveTheirDefinitionsBitsInF32AndBf16) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(1.5f, 3.0f);  // an offset mean: the deviations matter
  for (Dtype dtype : {Dtype::f32, Dtype::bf16}) {
    for (int64_t length : {1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 67, 130}) {
      const int64_t rows = 6;
      std::vector<float> values(static_cast<size_t>(rows * length));
      for (float& v : values) v = normal(rng);
      const Tensor x = from_vector(values, {rows, length}).to(dtype);
      const std::vector<float> held = x.to(Dtype::f32).to_vector<float>();  // bf16's rounded values
      const std::vector<float> sum = x.sum({-1}).to(Dtype::f32).to_vector<float>();
      const std::vector<float> mean = x.mean({-1}).to(Dtype::f32).to_vector<float>();
      const std::vector<float> var1 = x.var({-1}).to(Dtype::f32).to_vector<float>();
      const std::vector<float> var0 = x.var({-1}, 0).to(Dtype::f32).to_vector<float>();
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<float> row(held.begin() + r * length, held.begin() + (r + 1) * length);
        const double s = four_accumulator_sum(row), m = s / static_cast<double>(length);
        const double squares = four_accumulator_squares(row, m);
        // To float, then (bf16) to nearest even: the kernel's two roundings.
        auto rounded = [&](double v) {
          const float f = static_cast<float>(v);
          return dtype == Dtype::bf16 ? nnp_bf16_to_float(nnp_float_to_bf16(f)) : f;
        };
        const size_t at = static_cast<size_t>(r);
        const std::string where =
            std::string(dtype_name(dtype)) + " row " + std::to_string(r) + " of length " + std::to_string(length);
        EXPECT_EQ(bits(sum[at]), bits(rounded(s))) << "sum, " << where;
        EXPECT_EQ(bits(mean[at]), bits(rounded(m))) << "mean, " << where;
        if (length > 1) {
          EXPECT_EQ(bits(var1[at]), bits(rounded(squares / static_cast<double>(length - 1)))) << "var, " << where;
        }
        EXPECT_EQ(bits(var0[at]), bits(rounded(squares / static_cast<double>(length))))
            << "var (correction 0), " << where;
      }
    }
  }
}

TEST(CpuRowSums, ColumnSumsOverUnmergedDimensionsGiveTheSequentialSumsBits) {
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  const int64_t n = 6, l = 5, e = 37;  // x [n, l, e], summed as x.transpose(0, 1) [l, n, e] over (0, 1)
  std::vector<float> values(static_cast<size_t>(n * l * e));
  for (float& v : values) v = normal(rng);
  for (Dtype dtype : {Dtype::f32, Dtype::bf16}) {
    const Tensor x = from_vector(values, {n, l, e}).to(dtype);
    const std::vector<float> held = x.to(Dtype::f32).to_vector<float>();
    const std::vector<float> sums = x.transpose(0, 1).sum({0, 1}).to(Dtype::f32).to_vector<float>();
    const std::vector<float> means = x.transpose(0, 1).mean({0, 1}).to(Dtype::f32).to_vector<float>();
    for (int64_t c = 0; c < e; ++c) {
      double acc = 0;
      for (int64_t i = 0; i < l; ++i)    // the transposed view's first dimension
        for (int64_t j = 0; j < n; ++j)  // then its second
          acc += static_cast<double>(held[static_cast<size_t>((j * l + i) * e + c)]);
      auto rounded = [&](double v) {
        const float f = static_cast<float>(v);
        return dtype == Dtype::bf16 ? nnp_bf16_to_float(nnp_float_to_bf16(f)) : f;
      };
      EXPECT_EQ(bits(sums[static_cast<size_t>(c)]), bits(rounded(acc))) << dtype_name(dtype) << " column " << c;
      EXPECT_EQ(bits(means[static_cast<size_t>(c)]), bits(rounded(acc / static_cast<double>(n * l))))
          << dtype_name(dtype) << " column " << c;
    }
  }
}

}  // namespace cpu_row_sums_test
