// Compute ops against values worked out by hand.
#include <cmath>
#include <limits>

#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;
using nnp::test::floats;

class Ops : public ::testing::TestWithParam<const char*> {
 protected:
  Device device{GetParam()};
  Tensor f(const std::vector<float>& v, const Shape& s) { return from_vector(v, s, device); }
  Tensor f(const std::vector<float>& v) { return from_vector(v, device); }
};

TEST_P(Ops, BroadcastingArithmetic) {
  Tensor a = f({1, 2}, {2, 1});
  Tensor b = f({10, 20, 30});
  Tensor sum = a + b;
  EXPECT_EQ(sum.shape(), (Shape{2, 3}));
  EXPECT_EQ(sum.to_vector<float>(), (std::vector<float>{11, 21, 31, 12, 22, 32}));
  EXPECT_EQ((b - a).to_vector<float>(), (std::vector<float>{9, 19, 29, 8, 18, 28}));
  EXPECT_EQ((a * b).to_vector<float>(), (std::vector<float>{10, 20, 30, 20, 40, 60}));
  EXPECT_EQ((b / 4.0).to_vector<float>(), (std::vector<float>{2.5f, 5, 7.5f}));
  EXPECT_EQ((1.0 - b).to_vector<float>(), (std::vector<float>{-9, -19, -29}));
  EXPECT_EQ(b.pow(2).to_vector<float>(), (std::vector<float>{100, 400, 900}));
  expect_error(
      [&] {
        f({1, 2, 3, 4, 5, 6}, {2, 3}) + f({1, 2, 3, 4});
      },
      NNP_SHAPE_MISMATCH, {"add: shapes [2,3] and [4] cannot be broadcast"});
  expect_error([&] { b + b.to(Dtype::f64); }, NNP_DTYPE_MISMATCH, {"f32 and f64"});
}

TEST_P(Ops, NonContiguousOperands) {
  Tensor m = f({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ((m.t() + m.t()).to_vector<float>(), (std::vector<float>{2, 8, 4, 10, 6, 12}));
  EXPECT_EQ((m.slice(1, 0, 3, 2) * 2.0).to_vector<float>(), (std::vector<float>{2, 6, 8, 12}));
  EXPECT_EQ((m.t().slice(0, 1, 2) + f({100})).to_vector<float>(), (std::vector<float>{102, 105}));
}

TEST_P(Ops, IntegerArithmetic) {
  Tensor a = from_vector(std::vector<int64_t>{7, -7, 9}, device);
  Tensor b = from_vector(std::vector<int64_t>{2, 2, 3}, device);
  EXPECT_EQ((a + b).to_vector<int64_t>(), (std::vector<int64_t>{9, -5, 12}));
  Tensor q = a / b;  // true division, as PyTorch
  EXPECT_EQ(q.dtype(), Dtype::f32);
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{3.5f, -3.5f, 3.0f}));
  EXPECT_EQ(a.pow(b).to_vector<int64_t>(), (std::vector<int64_t>{49, 49, 729}));
  EXPECT_EQ(a.abs().to_vector<int64_t>(), (std::vector<int64_t>{7, 7, 9}));
  EXPECT_EQ(a.exp().dtype(), Dtype::f32);  // promoted
  Tensor flags = from_vector(std::vector<uint8_t>{1, 0}, device).to(Dtype::boolean);
  expect_error([&] { flags + flags; }, NNP_DTYPE_MISMATCH, {"bool"});
}

TEST_P(Ops, UnaryValues) {
  Tensor x = f({-1, 0, 1});
  auto near = [](const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
  };
  near(x.exp().to_vector<float>(), {0.36787944f, 1, 2.7182817f});
  near(x.relu().to_vector<float>(), {0, 0, 1});
  near(x.sigmoid().to_vector<float>(), {0.26894142f, 0.5f, 0.73105858f});
  near(x.tanh().to_vector<float>(), {-0.76159416f, 0, 0.76159416f});
  near(x.gelu().to_vector<float>(), {-0.15865525f, 0, 0.84134475f});
  near(x.silu().to_vector<float>(), {-0.26894142f, 0, 0.73105858f});
  near(x.sign().to_vector<float>(), {-1, 0, 1});
  near(x.neg().abs().to_vector<float>(), {1, 0, 1});
  near(f({4}).sqrt().to_vector<float>(), {2});
  near(f({4}).rsqrt().to_vector<float>(), {0.5f});
  near(f({1}).log().to_vector<float>(), {0});
  near(f({0}).sin().to_vector<float>(), {0});
  near(f({0}).cos().to_vector<float>(), {1});
  EXPECT_TRUE(std::isnan(f({NAN}).relu().item<float>()));  // NaN propagates, as PyTorch
}

// ReLU's gradient is PyTorch's threshold_backward: zero where the output is
// <= 0, so a NaN output passes the gradient (libtorch 1.13: 5 0 5 0 here).
TEST(ReluBackward, ZeroWhereTheOutputIsAtMostZeroAndNaNPassesTheGradient) {
  for (const char* device : {"cpu", "reference"}) {
    SCOPED_TRACE(device);
    Tensor x = from_vector(std::vector<float>{NAN, -1, 2, 0}).to(Device(device)).requires_grad_();
    (x.relu() * 5.0).sum().backward();
    const std::vector<float> grad = x.grad().to(Device("cpu")).to_vector<float>();
    EXPECT_EQ(grad, (std::vector<float>{5, 0, 5, 0}));
  }
}

TEST_P(Ops, ComparisonsMaximumWhere) {
  Tensor a = f({1, 5, NAN}), b = f({3, 5, 0});
  EXPECT_EQ(a.lt(b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((a == b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((a != b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ((a >= b).dtype(), Dtype::boolean);
  std::vector<float> m = a.maximum(b).to_vector<float>();
  EXPECT_EQ(m[0], 3);
  EXPECT_TRUE(std::isnan(m[2]));  // NaN wins
  Tensor picked = where(a.gt(b), a, b);
  EXPECT_EQ(picked.to_vector<float>()[0], 3);
  EXPECT_EQ(picked.to_vector<float>()[1], 5);
  expect_error([&] { where(a, a, b); }, NNP_DTYPE_MISMATCH, {"condition must be bool"});
}

// Sums and means over a middle dimension (a mean over a sequence: [B, L, E]
// over L), whose outputs' last dimension is contiguous: more columns than
// one block of accumulators, and on a transposed view, against a loop in
// double precision.
TEST_P(Ops, ReductionsOverAMiddleDimensionMatchADoubleLoop) {
  const int64_t B = 3, L = 37, E = 300;
  std::vector<float> v(static_cast<size_t>(B * L * E));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 3.0);
  Tensor x = f(v, {B, L, E});
  auto at = [&](int64_t b, int64_t l, int64_t e) {
    return static_cast<double>(v[static_cast<size_t>((b * L + l) * E + e)]);
  };
  const std::vector<float> mean = x.mean({1}).to_vector<float>(), sum = x.transpose(0, 1).sum({0}).to_vector<float>();
  ASSERT_EQ(mean.size(), static_cast<size_t>(B * E));
  ASSERT_EQ(sum.size(), static_cast<size_t>(B * E));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t e = 0; e < E; ++e) {
      double total = 0;
      for (int64_t l = 0; l < L; ++l) total += at(b, l, e);
      const size_t o = static_cast<size_t>(b * E + e);
      ASSERT_NEAR(sum[o], total, 1e-5) << "sum over the sequence at [" << b << ", " << e << "]";
      ASSERT_NEAR(mean[o], total / L, 1e-6) << "mean over the sequence at [" << b << ", " << e << "]";
    }
}

TEST_P(Ops, Reductions) {
  Tensor x = f({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(x.sum().item<float>(), 21);
  EXPECT_EQ(x.sum({0}).to_vector<float>(), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(x.sum({1}, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(x.sum({-1}, true).to_vector<float>(), (std::vector<float>{6, 15}));
  EXPECT_EQ(x.mean({1}).to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(x.amax({0}).to_vector<float>(), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(x.amin().item<float>(), 1);
  EXPECT_EQ(x.argmax().item<int64_t>(), 5);
  EXPECT_EQ(x.argmin(1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(x.t().argmax(0).to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  // Unbiased variance of {1,2,3} is 1; population variance 2/3.
  EXPECT_EQ(x.var({1}).to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_NEAR(x.var({1}, 0).to_vector<float>()[0], 2.0f / 3, 1e-6);
  EXPECT_EQ(x.sum({0, 1}).ndim(), 0);
  Tensor ints = from_vector(std::vector<int32_t>{1, 2, 3}, device);
  EXPECT_EQ(ints.sum().dtype(), Dtype::i64);  // widened, as PyTorch
  EXPECT_EQ(ints.sum().item<int64_t>(), 6);
  expect_error([&] { ints.mean(); }, NNP_DTYPE_MISMATCH, {"mean", "floating-point"});
  expect_error([&] { empty({0}, Dtype::f32, device).amax(); }, NNP_INVALID_ARGUMENT, {"zero elements"});
  expect_error([&] { x.sum({1, 1}); }, NNP_INVALID_ARGUMENT, {"more than once"});
  EXPECT_TRUE(std::isnan(empty({0}, Dtype::f32, device).mean().item<float>()));
}

TEST_P(Ops, Matmul) {
  Tensor a = f({1, 2, 3, 4}, {2, 2}), b = f({5, 6, 7, 8}, {2, 2});
  EXPECT_EQ(a.matmul(b).to_vector<float>(), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(a.t().matmul(b).to_vector<float>(), (std::vector<float>{26, 30, 38, 44}));
  Tensor v = f({1, 1});
  EXPECT_EQ(a.matmul(v).shape(), (Shape{2}));
  EXPECT_EQ(v.matmul(a).to_vector<float>(), (std::vector<float>{4, 6}));
  EXPECT_EQ(v.matmul(v).ndim(), 0);
  Tensor batch = ones({2, 1, 3, 4}, Dtype::f32, device).matmul(ones({5, 4, 2}, Dtype::f32, device));
  EXPECT_EQ(batch.shape(), (Shape{2, 5, 3, 2}));
  EXPECT_EQ(batch.amax().item<float>(), 4);
  EXPECT_EQ(zeros({3, 0}, Dtype::f32, device).matmul(zeros({0, 2}, Dtype::f32, device)).to_vector<float>(),
            std::vector<float>(6, 0));
  expect_error(
      [&] {
        ones({4, 3}, Dtype::f32, device).matmul(ones({4, 3}, Dtype::f32, device));
      },
      NNP_SHAPE_MISMATCH, {"matmul: shapes [4,3] and [4,3] cannot be multiplied (inner dimensions 3 and 4)"});
}

TEST_P(Ops, Softmax) {
  Tensor x = f({1, 2, 3});
  std::vector<float> s = x.softmax(0).to_vector<float>();
  EXPECT_NEAR(s[0], 0.09003057f, 1e-6);
  EXPECT_NEAR(s[2], 0.66524096f, 1e-6);
  std::vector<float> ls = x.log_softmax(-1).to_vector<float>();
  EXPECT_NEAR(ls[0], -2.40760596f, 1e-6);
  Tensor big = f({1000, 1001}, {1, 2});  // stable: no overflow
  EXPECT_NEAR(big.softmax(1).to_vector<float>()[1], 0.7310586f, 1e-6);
  Tensor rows = randn({4, 7}, Dtype::f32, device).softmax(0).sum({0});
  for (float v : rows.to_vector<float>()) EXPECT_NEAR(v, 1.0f, 1e-6);
}

// Rows of every length around the cpu backend's 8-lane vectors, wide ranges
// and masked (-inf) entries, against the same softmax computed in f64.
TEST_P(Ops, SoftmaxRowsMatchDoublePrecision) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t length : {1, 2, 7, 8, 9, 16, 23, 64, 1000}) {
    Tensor x = randn({3, length}, Dtype::f32, device) * 20.0;
    std::vector<float> values = x.to_vector<float>();
    for (size_t i = 0; i < values.size(); i += 3)
      if (i % static_cast<size_t>(length) != 0) values[i] = -inf;  // a mask, never the whole row
    x = f(values, {3, length});
    const Tensor wide = x.to(Dtype::f64);
    for (bool log : {false, true}) {
      const std::vector<float> got = (log ? x.log_softmax(1) : x.softmax(1)).to_vector<float>();
      const std::vector<double> want = (log ? wide.log_softmax(1) : wide.softmax(1)).to_vector<double>();
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isinf(want[i])) {
          EXPECT_EQ(got[i], want[i]) << "length " << length << ", element " << i;
          continue;
        }
        EXPECT_NEAR(got[i], want[i], 2e-6 * (1 + std::fabs(want[i]))) << "length " << length << ", element " << i;
      }
    }
  }
  // PyTorch's answers for rows with NaN, +inf, or nothing but -inf.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::vector<float>& row :
       std::vector<std::vector<float>>{{inf, 1}, {-inf, -inf}, {nan, 1}, {1, 2, 3, 4, 5, 6, 7, 8, nan}}) {
    for (float v : f(row).softmax(0).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
    for (float v : f(row).log_softmax(0).to_vector<float>()) EXPECT_TRUE(std::isnan(v));
  }
  EXPECT_EQ(f({-inf, 0}).softmax(0).to_vector<float>(), (std::vector<float>{0, 1}));
  EXPECT_EQ(f({-inf, 0}).log_softmax(0).to_vector<float>(), (std::vector<float>{-inf, 0}));
}

TEST_P(Ops, CatIndexSelectGatherScatter) {
  Tensor a = f({1, 2, 3, 4}, {2, 2}), b = f({5, 6}, {1, 2});
  EXPECT_EQ(cat({a, b}, 0).to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(cat({a, b.t()}, 1).shape(), (Shape{2, 3}));
  EXPECT_EQ(cat({a, b.t()}, 1).to_vector<float>(), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  expect_error([&] { cat({a, b}, 1); }, NNP_SHAPE_MISMATCH, {"tensor 1 has shape [1,2]"});

  Tensor idx = from_vector(std::vector<int64_t>{1, 0, 1}, device);
  EXPECT_EQ(a.index_select(0, idx).to_vector<float>(), (std::vector<float>{3, 4, 1, 2, 3, 4}));
  EXPECT_EQ(a.index_select(1, idx).to_vector<float>(), (std::vector<float>{2, 1, 2, 4, 3, 4}));
  Tensor bad = from_vector(std::vector<int64_t>{2}, device);
  expect_error([&] { a.index_select(0, bad); }, NNP_INVALID_ARGUMENT, {"index 2 is out of range"});

  Tensor g = from_vector(std::vector<int64_t>{1, 1, 0, 1}, {2, 2}, device);
  EXPECT_EQ(a.gather(1, g).to_vector<float>(), (std::vector<float>{2, 2, 3, 4}));
  Tensor target = zeros({2, 3}, Dtype::f32, device);
  Tensor where_to = from_vector(std::vector<int64_t>{0, 2, 2, 1}, {2, 2}, device);
  Tensor added = target.scatter_add(1, where_to, a);
  EXPECT_EQ(added.to_vector<float>(), (std::vector<float>{1, 0, 2, 0, 4, 3}));
  EXPECT_EQ(target.sum().item<float>(), 0);  // out of place
  Tensor repeated = from_vector(std::vector<int64_t>{1, 1}, {1, 2}, device);
  EXPECT_EQ(zeros({1, 3}, Dtype::f32, device).scatter_add(1, repeated, b).to_vector<float>(),
            (std::vector<float>{0, 11, 0}));
  expect_error([&] { a.gather(1, a); }, NNP_DTYPE_MISMATCH, {"index must be i64"});
}

INSTANTIATE_TEST_SUITE_P(Devices, Ops, ::testing::Values("cpu", "reference"));

namespace nnp {
namespace {

// Found by fuzz_api_sequence: an empty inner dimension handed the cpu GEMM
// null operands. A product over nothing is zeros, on every backend.
TEST(Matmul, EmptyInnerDimensionGivesZeros) {
  for (const char* name : {"cpu", "reference"}) {
    Device device(name);
    for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
      Tensor a = zeros({2, 3, 0}, dtype, device), b = zeros({2, 0, 4}, dtype, device);
      Tensor c = a.matmul(b);
      EXPECT_EQ(c.shape(), (Shape{2, 3, 4})) << name;
      EXPECT_EQ(test::floats(c), std::vector<float>(24, 0.0f)) << name;
      EXPECT_EQ(test::floats(zeros({0}, dtype, device).matmul(zeros({0}, dtype, device))), std::vector<float>{0.0f});
    }
  }
}

}  // namespace
}  // namespace nnp
