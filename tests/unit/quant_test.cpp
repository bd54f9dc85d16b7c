// Quantized tensors beyond the PyTorch fixtures: the i8 dtype, round, the
// int8 GEMM on every backend against plain sums, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
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

// quantized_matmul's values from the host: offsets as quantize_per_tensor
// rounds them (NaN -> 0), exact sums, then a product and a sum in f32.
std::vector<float> host_quantized_matmul(const std::vector<float>& x, double scale, int64_t zero_point,
                                         const std::vector<int64_t>& w, const std::vector<float>& col_scale,
                                         const std::vector<float>& bias, int64_t m, int64_t n, int64_t k) {
  const float inv = 1.0f / static_cast<float>(scale);
  std::vector<int64_t> q(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i] * inv;
    q[i] = std::isnan(v)
               ? 0
               : static_cast<int64_t>(std::min(
                     std::max(std::nearbyint(v), static_cast<float>(std::max<int64_t>(-128, -zero_point))), 127.0f));
  }
  const std::vector<int64_t> sums = plain_products(q, w, m, n, k);
  std::vector<float> out(sums.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      volatile float y = static_cast<float>(sums[i * n + j]) * col_scale[j];  // rounded before the sum
      out[i * n + j] = bias.empty() ? y : y + bias[j];
    }
  return out;
}

TEST(QuantTensor, QuantizedMatmulEqualsItsCompositionExactly) {
  // The cpu kernel (quantization in the packing, rescaling in the
  // epilogue) against the reference backend, which composes the same values
  // from quantize_per_tensor, matmul_i8 and elementwise ops, and against the
  // host. Shapes cover the tiles' edges (rows by 4, columns by 4, k by 64
  // and 16); inputs hold ties (x / scale = n + 0.5), NaN, infinities and
  // values past the int8 range; zero points 0, inside, and 128.
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},     {1, 37, 33},   {3, 5, 17},
                                                      {4, 8, 64},    {5, 9, 65},    {7, 13, 130},
                                                      {64, 70, 200}, {1, 300, 784}, {2, 3, 2000}};
  const double scale = 0.0625;
  int64_t round = 0;
  for (auto [m, n, k] : shapes) {
    const int64_t zero_point = std::array<int64_t, 3>{0, 37, 128}[round % 3];
    const bool with_bias = round++ % 2 == 0;
    std::vector<float> x = (randn({m, k}) * 4.0).to_vector<float>();
    const float specials[] = {2.5f * 0.0625f, -3.5f * 0.0625f, NAN, INFINITY, -INFINITY, 1e6f, -1e6f, 0.5f * 0.0625f};
    for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i) x[i * 7 % x.size()] = specials[i];
    const Tensor xt = from_vector<float>(x).reshape({m, k});
    const Tensor w = randint(-128, 128, {n, k}, Dtype::i64), col_scale = rand({n}) * 0.01, bias = randn({n});
    const std::vector<float> want =
        host_quantized_matmul(x, scale, zero_point, w.to_vector<int64_t>(), col_scale.to_vector<float>(),
                              with_bias ? bias.to_vector<float>() : std::vector<float>{}, m, n, k);
    for (const char* device : {"cpu", "reference"}) {
      const Device d(device);
      const Tensor got = quantized_matmul(xt.to(d), scale, zero_point, w.to(Dtype::i8).to(d), col_scale.to(d),
                                          with_bias ? bias.to(d) : Tensor());
      EXPECT_EQ(got.shape(), (Shape{m, n}));
      EXPECT_FALSE(got.requires_grad());
      EXPECT_EQ(got.to(Device("cpu")).to_vector<float>(), want)
          << device << " " << m << "x" << n << "x" << k << " zero_point " << zero_point;
    }
  }
  // Empty sizes: no rows, no columns, no depth (then out is the bias).
  EXPECT_EQ(quantized_matmul(zeros({0, 4}), 0.1, 0, zeros({3, 4}, Dtype::i8), ones({3})).shape(), (Shape{0, 3}));
  EXPECT_EQ(quantized_matmul(zeros({2, 4}), 0.1, 0, zeros({0, 4}, Dtype::i8), ones({0})).shape(), (Shape{2, 0}));
  EXPECT_EQ(
      quantized_matmul(zeros({2, 0}), 0.1, 0, zeros({3, 0}, Dtype::i8), ones({3}), full({3}, 1.5)).to_vector<float>(),
      std::vector<float>(6, 1.5f));
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
  const Tensor w = zeros({2, 3}, Dtype::i8), s = ones({2});
  expect_error([&] { quantized_matmul(x.t(), 0.1, 0, w, s); }, NNP_SHAPE_MISMATCH, {"x [M,K], w [N,K]", "[3,4]"});
  expect_error([&] { quantized_matmul(x, 0.1, 0, w.to(Dtype::u8), s); }, NNP_DTYPE_MISMATCH, {"i8 w", "u8"});
  expect_error([&] { quantized_matmul(x, 0.1, 129, w, s); }, NNP_INVALID_ARGUMENT, {"zero_point 129", "[0, 128]"});
  expect_error([&] { quantized_matmul(x, 0.0, 0, w, s); }, NNP_INVALID_ARGUMENT, {"scale 0"});
  expect_error([&] { quantized_matmul(x, 0.1, 0, w, ones({3})); }, NNP_SHAPE_MISMATCH, {"col_scale [N]"});
  expect_error(
      [&] {
        quantized_matmul(zeros({1, 70000}), 0.1, 0, zeros({1, 70000}, Dtype::i8), ones({1}));
      },
      NNP_INVALID_ARGUMENT, {"exceeds 65536"});
  expect_error([&] { quantized_matmul(x, 0.1, 0, w.to(Device("reference")), s); }, NNP_DEVICE_MISMATCH, {});
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

#include <filesystem>
#include <nnp/quantize_model.hpp>

namespace {

using namespace nnp;
using nnp::test::expect_error;

nn::ModuleHandle small_mlp() {
  return nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Linear", "in_features": 6, "out_features": 8}, {"type": "nn.ReLU"},
      {"type": "nn.Linear", "in_features": 8, "out_features": 3}]})");
}

TEST(QuantModel, QuantizedModelsSaveAndLoadThroughSafetensors) {
  manual_seed(3);
  nn::ModuleHandle mlp = quantization::quantize_dynamic(small_mlp());
  const Tensor x = randn({4, 6});
  const Tensor y = mlp(x);
  const std::string path = (std::filesystem::temp_directory_path() / "nnp_quant_model.safetensors").string();
  mlp.save(path);
  nn::ModuleHandle again = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.quantized.dynamic.Linear", "in_features": 6, "out_features": 8}, {"type": "nn.ReLU"},
      {"type": "nn.quantized.dynamic.Linear", "in_features": 8, "out_features": 3}]})");
  again.load_state_dict(load_safetensors(path));
  EXPECT_EQ(again.get_buffer("0.weight").dtype(), Dtype::i8);
  EXPECT_EQ(again(x).to_vector<float>(), y.to_vector<float>());
  std::filesystem::remove(path);
}

TEST(QuantModel, DynamicQuantizationStaysCloseToFloat) {
  manual_seed(4);
  nn::ModuleHandle mlp = small_mlp();
  const Tensor x = randn({32, 6}), want = mlp(x);
  nn::ModuleHandle q = quantization::quantize_dynamic(mlp);
  const double error = (q(x) - want).abs().amax().item<float>(), range = want.abs().amax().item<float>();
  EXPECT_LT(error, 0.05 * range);
  EXPECT_GT(error, 0.0);  // it did quantize
  // Batch 1 and an empty batch; leading dimensions are kept.
  EXPECT_EQ(q(randn({1, 6})).shape(), (Shape{1, 3}));
  EXPECT_EQ(q(randn({2, 5, 6})).shape(), (Shape{2, 5, 3}));
  EXPECT_EQ(q(randn({0, 6})).shape(), (Shape{0, 3}));
}

TEST(QuantModel, RefusalsNameTheFix) {
  expect_error([] { nn::create_layer("nn.MinMaxObserver", nn::Attrs().set("dtype", "int4")); }, NNP_INVALID_ARGUMENT,
               {"dtype 'int4'", "quint8 or qint8"});
  expect_error([] { nn::create_layer("nn.MinMaxObserver", nn::Attrs().set("qscheme", "per_channel_affine")); },
               NNP_INVALID_ARGUMENT, {"qscheme 'per_channel_affine'", "per_tensor_affine"});
  expect_error([] { nn::create_layer("nn.MinMaxObserver", nn::Attrs().set("quant_min", int64_t{0})); },
               NNP_INVALID_ARGUMENT, {"both quant_min and quant_max"});
  expect_error([] { nn::create_layer("nn.FakeQuantize", nn::Attrs().set("observer", "Histogram")); },
               NNP_INVALID_ARGUMENT, {"observer 'Histogram'"});
  nn::ModuleHandle per_channel = nn::create_layer("nn.PerChannelMinMaxObserver");
  per_channel(randn({3, 4}));
  expect_error([&] { per_channel(randn({5, 4})); }, NNP_SHAPE_MISMATCH, {"observed 3 channels before and 5 now"});
  expect_error([&] { per_channel(randn({5})); }, NNP_SHAPE_MISMATCH, {"observed 3 channels"});

  nn::ModuleHandle mlp = small_mlp();
  auto run = quantization::prepare(mlp);
  expect_error([&] { run.convert(); }, NNP_INVALID_ARGUMENT, {"saw no data", "calibration"});
  nn::ModuleHandle q = quantization::quantize_dynamic(small_mlp());
  expect_error([&] { q(randn({2, 7})); }, NNP_SHAPE_MISMATCH, {"DynamicQuantizedLinear", "[2,7]", "6 features"});
  expect_error([] { quantization::prepare(nn::create_layer("nn.ReLU")); }, NNP_INVALID_ARGUMENT,
               {"no Linear or Conv2d"});
}

TEST(QuantModel, StaticQuantizationFusesReluAndKeepsAccuracy) {
  manual_seed(5);
  nn::ModuleHandle mlp = small_mlp();
  const Tensor calibration = randn({64, 6}), x = randn({16, 6}), want = mlp(x);
  auto run = quantization::prepare(mlp);
  run.model()(calibration);
  nn::ModuleHandle q = run.convert();
  EXPECT_EQ(q.get_submodule("0").type_name(), "QuantizedLinearReLU");
  EXPECT_EQ(q.get_submodule("1").type_name(), "Identity");
  const double error = (q(x) - want).abs().amax().item<float>(), range = want.abs().amax().item<float>();
  EXPECT_LT(error, 0.1 * range);
  // The output lies on the last layer's grid.
  const float scale = q.get_buffer("2.scale").item<float>();
  const int64_t zero_point = q.get_buffer("2.zero_point").item<int64_t>();
  for (float v : q(x).reshape({-1}).to_vector<float>()) {
    const double steps = v / scale + static_cast<double>(zero_point);
    EXPECT_NEAR(steps, std::nearbyint(steps), 1e-3);
  }
}

}  // namespace

namespace {

TEST(QuantModel, LayersInsideLayersThatCallTheirMembersStayFloat) {
  nnp::nn::ModuleHandle model = nnp::nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.TransformerEncoderLayer", "d_model": 8, "nhead": 2, "dim_feedforward": 16, "dropout": 0.0},
      {"type": "nn.Linear", "in_features": 8, "out_features": 3}]})");
  model.eval();
  const nnp::Tensor x = nnp::randn({2, 5, 8});
  const nnp::Tensor want = model(x);
  nnp::nn::ModuleHandle q = nnp::quantization::quantize_dynamic(model);
  EXPECT_EQ(q.get_submodule("0.linear1").type_name(), "Linear");
  EXPECT_EQ(q.get_submodule("1").type_name(), "DynamicQuantizedLinear");
  EXPECT_LT((q(x) - want).abs().amax().item<float>(), 0.05 * want.abs().amax().item<float>());
}

}  // namespace

namespace {

// A backend whose kernel table is ABI 1.6's size never gets i8 or round.
TEST(QuantTensor, BackendsBuiltBeforeAbi17AreNeverHandedI8OrRound) {
  const std::string plugin = std::string(NNP_CORPUS_DIR) + "/libflawed_pre17.so";
  (void)nnp::api().load_plugin(plugin.c_str());  // another test of this process may have loaded it
  const nnp::Device old("flawed_pre17");
  nnp::test::expect_error([&] { nnp::empty({2}, nnp::Dtype::i8, old); }, NNP_DTYPE_MISMATCH,
                          {"'flawed_pre17' predates ABI 1.7", "cannot hold i8"});
  nnp::test::expect_error([&] { nnp::randn({2}).to(old).round(); }, NNP_UNIMPLEMENTED, {"round:", "predates ABI 1.7"});
  // Everything else still runs there.
  EXPECT_EQ((nnp::ones({2}).to(old) * 2.0).to(nnp::Device("cpu")).to_vector<float>(), (std::vector<float>{2, 2}));
}

}  // namespace

namespace {

TEST(QuantModel, HostileAttributesAreRefusedBeforeAnyArithmetic) {
  using nnp::nn::Attrs;
  nnp::test::expect_error(
      [] {
        nnp::nn::create_layer("nn.MinMaxObserver", Attrs()
                                                       .set("quant_min", std::numeric_limits<int64_t>::min())
                                                       .set("quant_max", std::numeric_limits<int64_t>::max()));
      },
      NNP_INVALID_ARGUMENT, {"must include 0 and span at most 256 values"});
  nnp::test::expect_error(
      [] {
        nnp::nn::create_layer("nn.quantized.Conv2d", Attrs()
                                                         .set("in_channels", int64_t{1} << 40)
                                                         .set("out_channels", 2)
                                                         .set("kernel_size", std::vector<int64_t>{1 << 20}));
      },
      NNP_INVALID_ARGUMENT, {"QuantizedConv2d: in_channels", "must be positive"});
  nnp::test::expect_error(
      [] {
        nnp::nn::create_layer(
            "nn.quantized.Conv2d",
            Attrs().set("in_channels", 2).set("out_channels", 2).set("kernel_size", std::vector<int64_t>{0}));
      },
      NNP_INVALID_ARGUMENT, {"kernel_size [0,0]"});
}

}  // namespace
