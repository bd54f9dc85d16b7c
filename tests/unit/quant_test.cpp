// Quantized tensors beyond the PyTorch fixtures: the i8 dtype, round, the
// int8 GEMM on every backend against plain sums, and the refusals.
#include <gtest/gtest.h>

#include <nnp/nnp.hpp>
#include <nnp/quantization.hpp>

#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_error;

TEST(QuantTensor, I8IsAFullIntegerDtype) {
  Tensor x = from_vector<double>({-128, -1, 0, 5, 127}).to(Dtype::i8);
  EXPECT_EQ(x.dtype(), Dtype::i8);
  EXPECT_EQ(std::string(dtype_name(Dtype::i8)), "i8");
  EXPECT_EQ(dtype_size(Dtype::i8), 1u);
  EXPECT_EQ(x.to(Dtype::f32).to_vector<float>(), (std::vector<float>{-128, -1, 0, 5, 127}));
  // Conversions wrap as C's do (through int64), as PyTorch's .to(torch.int8).
  EXPECT_EQ(from_vector<double>({200, -129.7}).to(Dtype::i8).to(Dtype::i64).to_vector<int64_t>(),
            (std::vector<int64_t>{-56, 127}));
  EXPECT_EQ((x + x).to(Dtype::i64).to_vector<int64_t>(), (std::vector<int64_t>{0, -2, 0, 10, -2}));
  EXPECT_EQ(x.abs().to(Dtype::i64).to_vector<int64_t>()[3], 5);
}

TEST(QuantTensor, RoundIsHalfToEvenWithZeroGradient) {
  Tensor x = from_vector<double>({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6, -2.6}).to(Dtype::f32).requires_grad_();
  Tensor r = x.round();
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{-2, -2, -0, 0, 2, 2, 3, -3}));
  r.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), std::vector<float>(8, 0.0f));
  EXPECT_EQ(from_vector<double>({3, -4}).to(Dtype::i32).round().to_vector<int32_t>(), (std::vector<int32_t>{3, -4}));
}

// a @ b^T in int64 on the host.
std::vector<int64_t> plain_products(const std::vector<int64_t>& a, const std::vector<int64_t>& b, int64_t m, int64_t n,
                                    int64_t k) {
  std::vector<int64_t> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) out[i * n + j] += a[i * k + p] * b[j * k + p];
  return out;
}

TEST(QuantTensor, MatmulI8IsExactOnEveryBackendAndShape) {
  // Shapes that cover the vector body, its tail, odd rows, batch 1 (split
  // over b's rows), the extreme values, and K past f32's exact range
  // (the fallback switches to f64 there).
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},   {1, 37, 33},   {2, 4, 16},    {3, 5, 17},
                                                      {7, 9, 100}, {64, 70, 200}, {1, 300, 512}, {2, 3, 2000}};
  for (const char* device : {"cpu", "reference"}) {
    for (auto [m, n, k] : shapes) {
      Tensor a = randint(-128, 128, {m, k}, Dtype::i64), b = randint(-128, 128, {n, k}, Dtype::i64);
      if (m * k > 2) a.index_put_({0, 0}, -128), a.index_put_({0, 1}, -128);
      const std::vector<int64_t> want = plain_products(a.to_vector<int64_t>(), b.to_vector<int64_t>(), m, n, k);
      Tensor got = matmul_i8(a.to(Dtype::i8).to(Device(device)), b.to(Dtype::i8).to(Device(device)));
      EXPECT_EQ(got.dtype(), Dtype::i32);
      EXPECT_EQ(got.shape(), (Shape{m, n}));
      EXPECT_EQ(got.to(Dtype::i64).to(Device("cpu")).to_vector<int64_t>(), want)
          << device << " " << m << "x" << n << "x" << k;
    }
  }
  // A backend without the gemm_i8 slot (the test backend "faulty": the
  // reference's required kernels only) gets the core's exact fallback, f32
  // up to K = 1024 and f64 beyond.
  (void)api().load_plugin(NNP_FAULT_BACKEND);  // another test of this process may have loaded it
  for (auto [m, n, k] : shapes) {
    Tensor a = randint(-128, 128, {m, k}, Dtype::i64), b = randint(-128, 128, {n, k}, Dtype::i64);
    const std::vector<int64_t> want = plain_products(a.to_vector<int64_t>(), b.to_vector<int64_t>(), m, n, k);
    Tensor got = matmul_i8(a.to(Dtype::i8).to(Device("faulty")), b.to(Dtype::i8).to(Device("faulty")));
    EXPECT_EQ(got.to(Dtype::i64).to(Device("cpu")).to_vector<int64_t>(), want)
        << "fallback " << m << "x" << n << "x" << k;
  }
  // Transposed (non-contiguous) operands are made contiguous first.
  Tensor a = randint(-5, 5, {6, 3}, Dtype::i8), b = randint(-5, 5, {4, 3}, Dtype::i8);
  EXPECT_EQ(matmul_i8(a.t().contiguous().t(), b).to(Dtype::i64).to_vector<int64_t>(),
            matmul_i8(a, b).to(Dtype::i64).to_vector<int64_t>());
}

TEST(QuantTensor, RefusalsNameTheProblem) {
  Tensor x = randn({4, 3});
  expect_error([&] { quantize_per_tensor(x, 0.0, 0, kQUInt8); }, NNP_INVALID_ARGUMENT, {"scale 0", "positive"});
  expect_error([&] { quantize_per_tensor(x, 0.1, 300, kQUInt8); }, NNP_INVALID_ARGUMENT,
               {"zero_point 300", "u8's range [0, 255]"});
  expect_error([&] { quantize_per_tensor(x, 0.1, 0, Dtype::i32); }, NNP_DTYPE_MISMATCH, {"u8 (quint8) or i8"});
  expect_error([&] { quantize_per_tensor(x.to(Dtype::i64), 0.1, 0, kQInt8); }, NNP_DTYPE_MISMATCH, {"floating-point"});
  expect_error([&] { quantize_per_channel(x, ones({3}), zeros({3}, Dtype::i64), 0, kQInt8); }, NNP_SHAPE_MISMATCH,
               {"must both be [4]", "axis 0"});
  expect_error([&] { quantize_per_channel(x, ones({4}), zeros({4}, Dtype::i64), 2, kQInt8); }, NNP_INVALID_ARGUMENT,
               {"axis 2 is out of range"});
  expect_error(
      [&] {
        quantize_per_channel(x, from_vector<double>({1, 1, -1, 1}), zeros({4}, Dtype::i64), 0, kQInt8);
      },
      NNP_INVALID_ARGUMENT, {"scale -1"});
  expect_error([&] { fake_quantize_per_tensor_affine(x, 0.1, 9, 0, 7); }, NNP_INVALID_ARGUMENT,
               {"zero_point 9", "[quant_min, quant_max] = [0, 7]"});
  expect_error([&] { fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 4); }, NNP_INVALID_ARGUMENT,
               {"quant_min <= quant_max"});
  Tensor a = zeros({2, 3}, Dtype::i8);
  expect_error([&] { matmul_i8(a, zeros({2, 4}, Dtype::i8)); }, NNP_SHAPE_MISMATCH, {"a [M,K] and b [N,K]"});
  expect_error([&] { matmul_i8(a, zeros({2, 3}, Dtype::u8)); }, NNP_DTYPE_MISMATCH, {"two i8 tensors"});
  expect_error(
      [&] {
        matmul_i8(zeros({1, 70000}, Dtype::i8), zeros({1, 70000}, Dtype::i8));
      },
      NNP_INVALID_ARGUMENT, {"exceeds 65536"});
  QTensor q = quantize_per_tensor(x, 0.1, 0, kQInt8);
  expect_error([&] { q.q_per_channel_axis(); }, NNP_INVALID_ARGUMENT, {"quantized per tensor"});
}

TEST(QuantTensor, QuantizeOnTheReferenceBackendEqualsCpu) {
  Tensor x = randn({5, 7}) * 3.0;
  QTensor cpu = quantize_per_tensor(x, 0.05, 3, kQInt8);
  QTensor ref = quantize_per_tensor(x.to(Device("reference")), 0.05, 3, kQInt8);
  EXPECT_EQ(ref.int_repr().to(Device("cpu")).to(Dtype::i64).to_vector<int64_t>(),
            cpu.int_repr().to(Dtype::i64).to_vector<int64_t>());
  EXPECT_EQ(ref.dequantize().to(Device("cpu")).to_vector<float>(), cpu.dequantize().to_vector<float>());
}

}  // namespace
