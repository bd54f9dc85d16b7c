// Creation, host round trips, dtype conversion and moving between devices.
#include <cmath>
#include <limits>

#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;
using nnp::test::floats;

class Creation : public ::testing::TestWithParam<const char*> {
 protected:
  Device device{GetParam()};
};

TEST_P(Creation, FullZerosOnes) {
  Tensor t = full({2, 3}, 2.5, Dtype::f32, device);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>(6, 2.5f));
  EXPECT_EQ(zeros({4}, Dtype::i64, device).to_vector<int64_t>(), std::vector<int64_t>(4, 0));
  EXPECT_EQ(ones({2}, Dtype::boolean, device).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.strides(), (Shape{3, 1}));
  EXPECT_EQ(t.device(), device);
}

TEST_P(Creation, ScalarsAndEmptyTensors) {
  Tensor scalar = full({}, 7, Dtype::i32, device);
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.item<int32_t>(), 7);
  Tensor none = empty({0, 5}, Dtype::f32, device);
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.to_vector<float>().size(), 0u);
  EXPECT_EQ(none.sum().item<float>(), 0.0f);
  EXPECT_EQ(none.sum({0}).shape(), (Shape{5}));
  expect_error([&] { none.item<float>(); }, NNP_INVALID_ARGUMENT, {"0 elements"});
}

TEST_P(Creation, Arange) {
  EXPECT_EQ(arange(0, 5, 1, Dtype::i64, device).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1, 2, 0.25, Dtype::f32, device).to_vector<float>(), (std::vector<float>{1, 1.25f, 1.5f, 1.75f}));
  EXPECT_EQ(arange(3, 0, -1, Dtype::i32, device).to_vector<int32_t>(), (std::vector<int32_t>{3, 2, 1}));
  EXPECT_EQ(arange(2, 2, 1, Dtype::f32, device).numel(), 0);
  expect_error([&] { arange(0, 1, 0, Dtype::f32, device); }, NNP_INVALID_ARGUMENT, {"step must be nonzero"});
  expect_error([&] { arange(0, 5, -1, Dtype::f32, device); }, NNP_INVALID_ARGUMENT, {"sign of step"});
}

TEST_P(Creation, HostRoundTrip) {
  std::vector<double> values = {1.5, -2.25, 3e10, 0.0, -0.0, 1e-300};
  Tensor t = from_vector(values, {2, 3}, device);
  EXPECT_EQ(t.dtype(), Dtype::f64);
  EXPECT_EQ(t.to_vector<double>(), values);
  expect_error([&] { from_vector(std::vector<float>{1, 2, 3}, {2, 2}, device); }, NNP_SHAPE_MISMATCH, {"3 values"});
}

TEST_P(Creation, BoolFromHostTreatsAnyNonzeroByteAsTrue) {
  const uint8_t bytes[] = {0, 2, 255, 1};
  const int64_t shape[] = {4};
  nnp_tensor* raw = nullptr;
  check(api().from_host(bytes, shape, 1, NNP_BOOL, device.raw(), &raw));
  Tensor flags = Tensor::adopt(raw);
  EXPECT_EQ(flags.to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(flags.to(Dtype::u8).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(flags.sum().item<int64_t>(), 3);
}

TEST_P(Creation, DtypeConversionRoundsLikePyTorch) {
  Tensor t = from_vector(std::vector<float>{1.7f, -1.7f, 2.5f, 0.0f, 300.0f}, device);
  EXPECT_EQ(t.to(Dtype::i64).to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 2, 0, 300}));  // truncation
  EXPECT_EQ(t.to(Dtype::boolean).to_vector<bool>(), (std::vector<bool>{true, true, true, false, true}));
  // 1 + 2^-11 is halfway between two f16 values: ties go to even (1.0).
  Tensor halfway = from_vector(std::vector<float>{1.0f + 1.0f / 2048, 65520.0f, 1e-8f}, device);
  EXPECT_EQ(floats(halfway.to(Dtype::f16)), (std::vector<float>{1.0f, INFINITY, 0.0f}));
  // bf16 keeps 8 bits of mantissa: 1 + 2^-8 rounds to even (1.0), 1 + 3*2^-8 up.
  Tensor b = from_vector(std::vector<float>{1.0f + 1.0f / 256, 1.0f + 3.0f / 256}, device);
  EXPECT_EQ(floats(b.to(Dtype::bf16)), (std::vector<float>{1.0f, 1.0f + 4.0f / 256}));
  Tensor ints = from_vector(std::vector<int32_t>{-1, 256, 7}, device);
  EXPECT_EQ(ints.to(Dtype::u8).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 0, 7}));  // wraps
}

TEST_P(Creation, ToSameDeviceAndDtypeSharesTheTensor) {
  Tensor t = ones({3}, Dtype::f32, device);
  EXPECT_EQ(t.to(device, Dtype::f32).get(), t.get());
  EXPECT_NE(t.to(Dtype::f64).get(), t.get());
}

INSTANTIATE_TEST_SUITE_P(Devices, Creation, ::testing::Values("cpu", "reference"));

TEST(Devices, MoveBetweenBackendsKeepsValuesAndLayout) {
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor on_reference = x.t().to(Device("reference"));
  EXPECT_EQ(on_reference.device().name(), "reference:0");
  EXPECT_EQ(on_reference.shape(), (Shape{3, 2}));
  EXPECT_EQ(on_reference.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  Tensor back = on_reference.to(Device("cpu"), Dtype::f64);
  EXPECT_EQ(back.to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  Tensor target = zeros({2, 3}, Dtype::f32, Device("reference"));
  target.copy_(x.slice(1, 0, 1));  // [2,1] broadcast into [2,3], across devices
  EXPECT_EQ(target.to_vector<float>(), (std::vector<float>{1, 1, 1, 4, 4, 4}));
}

TEST(Devices, NamesAndErrors) {
  EXPECT_EQ(Device("cpu").name(), "cpu:0");
  EXPECT_EQ(Device("reference:0").name(), "reference:0");
  bool gpu = false;
  for (const nnp_backend_info& info : backends()) gpu = gpu || (info.score > 100 && info.device_count > 0);
  if (!gpu) {
    EXPECT_EQ(Device("auto").name(), "cpu:0");  // cpu outscores reference
  }
  expect_error([] { Device("tpu:0"); }, NNP_NOT_FOUND, {"tpu:0", "no backend named 'tpu'", "cpu", "reference"});
  expect_error([] { Device("cpu:1"); }, NNP_NOT_FOUND, {"has 1 device(s)"});
  expect_error([] { Device("cpu:x"); }, NNP_INVALID_ARGUMENT, {"backend:index"});
  expect_error([] { Device(":0"); }, NNP_INVALID_ARGUMENT, {"empty"});
  Tensor a = ones({2}), b = ones({2}, Dtype::f32, Device("reference"));
  expect_error([&] { a + b; }, NNP_DEVICE_MISMATCH, {"add", "cpu:0", "reference:0"});
}

TEST(Random, SeededDrawsRepeatAndHaveTheRightDistribution) {
  manual_seed(42);
  std::vector<float> first = rand({1000}).to_vector<float>();
  manual_seed(42);
  EXPECT_EQ(rand({1000}).to_vector<float>(), first);
  EXPECT_NE(rand({1000}).to_vector<float>(), first);  // the offset moved on
  for (float v : first) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  Tensor normal = randn({200000}, Dtype::f64);
  EXPECT_NEAR(normal.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(normal.var().item<double>(), 1.0, 0.02);
  Tensor dice = randint(1, 7, {10000});
  EXPECT_EQ(dice.amin().item<int64_t>(), 1);
  EXPECT_EQ(dice.amax().item<int64_t>(), 6);
  expect_error([] { randint(5, 5, {3}); }, NNP_INVALID_ARGUMENT, {"low < high"});
  expect_error([] { rand({3}, Dtype::i64); }, NNP_DTYPE_MISMATCH, {"floating-point"});
}

// Found by UBSan: float -> u8 of a negative value went straight through a
// C++ conversion (undefined); both backends now go through int64, as the
// reference always did.
TEST(Conversions, NegativeFloatsToU8WrapThroughInt64) {
  for (const char* device : {"cpu", "reference"}) {
    Tensor x = from_vector<float>({-1.6f, 2.9f, -0.5f}, {3}, Device(device));
    EXPECT_EQ(x.to(Dtype::u8).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 2, 0})) << device;
  }
}

// Found by fuzz_api_sequence (C's conversion of NaN to an integer is
// undefined): NaN, infinities and values past int64 become INT64_MIN on every
// host backend, as on x86 and in PyTorch; narrower types take its low bits.
TEST(Conversions, NanAndOutOfRangeFloatsBecomeInt64Min) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const char* device : {"cpu", "reference"}) {
    for (Dtype dtype : {Dtype::f32, Dtype::f64, Dtype::f16}) {
      Tensor x = from_vector<float>({nan, inf, -inf, 1e30f, -7.9f}, {5}, Device(device)).to(dtype);
      const int64_t min = std::numeric_limits<int64_t>::min();
      EXPECT_EQ(x.to(Dtype::i64).to_vector<int64_t>(), (std::vector<int64_t>{min, min, min, min, -7})) << device;
      EXPECT_EQ(x.to(Dtype::i32).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, -7})) << device;
      EXPECT_EQ(x.to(Dtype::u8).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0, 249})) << device;
    }
  }
}

// libtorch's creation: nested braces with torch.tensor's dtype inference,
// the *_like family, linspace and eye, the kFloat32-style dtype names.
TEST(TensorCreation, TensorFromNestedBracesInfersTheDtypeAsPyTorch) {
  Tensor ints = nnp::tensor({{1, 2}, {3, 4}});
  EXPECT_EQ(ints.dtype(), kInt64);
  EXPECT_EQ(ints.shape(), (Shape{2, 2}));
  EXPECT_EQ(ints.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4}));
  Tensor mixed = nnp::tensor({1, 2.5});
  EXPECT_EQ(mixed.dtype(), kFloat32);
  EXPECT_EQ(mixed.to_vector<float>(), (std::vector<float>{1, 2.5}));
  EXPECT_EQ(nnp::tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(nnp::tensor({true, 2}).dtype(), kInt64);
  Tensor scalar = nnp::tensor(2.5);
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.item<float>(), 2.5f);
  EXPECT_EQ(nnp::tensor({{{1}, {2}}}).shape(), (Shape{1, 2, 1}));
  Tensor as_f64 = nnp::tensor({{1, 2}}, kFloat64);
  EXPECT_EQ(as_f64.dtype(), kDouble);
  EXPECT_EQ(as_f64.to_vector<double>(), (std::vector<double>{1, 2}));
  EXPECT_EQ(nnp::tensor({9007199254740993LL}).to_vector<int64_t>()[0], 9007199254740993LL);  // exact past 2^53
  test::expect_error(
      [] {
        nnp::tensor({{1, 2}, {3}});
      },
      NNP_SHAPE_MISMATCH, {"expected sequence of length 2 at dim 1 (got 1)"});
  test::expect_error([] { nnp::tensor({1, {2}}); }, NNP_SHAPE_MISMATCH, {"nest evenly"});
}

TEST(TensorCreation, LikeLinspaceEye) {
  Tensor base = nnp::tensor({{1.5, 2}, {3, 4}}, kFloat64);
  EXPECT_EQ(zeros_like(base).to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(ones_like(base).dtype(), kFloat64);
  EXPECT_EQ(full_like(base, 7).to_vector<double>(), (std::vector<double>{7, 7, 7, 7}));
  EXPECT_EQ(empty_like(base).shape(), (Shape{2, 2}));
  EXPECT_EQ(rand_like(base).shape(), (Shape{2, 2}));
  EXPECT_EQ(randn_like(base).dtype(), kFloat64);
  // PyTorch 1.13's values.
  EXPECT_EQ(linspace(-1, 1, 4).to_vector<float>(),
            (std::vector<float>{-1.0f, -0.3333333134651184f, 0.3333333134651184f, 1.0f}));
  EXPECT_EQ(linspace(0, 1, 7, kFloat64).to_vector<double>(),
            (std::vector<double>{0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666667,
                                 0.8333333333333334, 1.0}));
  EXPECT_EQ(linspace(3, 3, 1).to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(linspace(0, 10, 0).numel(), 0);
  test::expect_error([] { linspace(0, 1, -1); }, NNP_INVALID_ARGUMENT, {"non-negative"});
  EXPECT_EQ(eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(eye(2).to_vector<float>(), (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(eye(2, 2, kInt64).dtype(), kInt64);
}

// item<T>() converts as libtorch's does, whatever the tensor's dtype.
TEST(TensorCreation, ItemConvertsAsPyTorch) {
  EXPECT_EQ(nnp::tensor(3).item<float>(), 3.0f);
  EXPECT_EQ(nnp::tensor(2.7).item<int64_t>(), 2);
  EXPECT_EQ(nnp::tensor(-2.7).item<int32_t>(), -2);
  EXPECT_EQ(nnp::tensor(0.5).item<bool>(), true);
  EXPECT_EQ(nnp::tensor(0).item<bool>(), false);
  EXPECT_EQ(nnp::tensor(true).item<double>(), 1.0);
  EXPECT_EQ(nnp::tensor({{1.25}}).item<double>(), 1.25);
  Tensor x = nnp::tensor(1.5).requires_grad_();
  EXPECT_EQ(x.item<int64_t>(), 1);
  test::expect_error([] { nnp::tensor({1, 2}).item<float>(); }, NNP_INVALID_ARGUMENT, {"exactly one"});
}
