// Quantization against PyTorch 1.13 (quant_fixtures.py wrote the numbers):
// quantized integers, dequantized values and fake quantization equal
// PyTorch's exactly; observers and FakeQuantize have its state-dict keys,
// values and qparams; quantized models give its outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/quantization.hpp>

#include "test_support.hpp"

namespace {

using json = nlohmann::json;
using namespace nnp;

const json& fixtures() {
  static const json all = [] {
    std::ifstream in(NNP_QUANT_FIXTURES);
    return json::parse(in);
  }();
  return all;
}

Dtype dtype_of(const std::string& name) {
  if (name == "u8" || name == "uint8") return Dtype::u8;
  if (name == "i8" || name == "int8") return Dtype::i8;
  if (name == "int32") return Dtype::i32;
  if (name == "int64") return Dtype::i64;
  return Dtype::f32;
}

Tensor tensor_of(const json& t) {
  return from_vector(t["values"].get<std::vector<double>>(), t["shape"].get<std::vector<int64_t>>())
      .to(dtype_of(t["dtype"]));
}

std::vector<double> values_of(const Tensor& t) { return t.to(Dtype::f64).contiguous().to_vector<double>(); }

void expect_values(const Tensor& got, const json& want, double tolerance, const std::string& what) {
  const std::vector<double> values = values_of(got), expected = want.get<std::vector<double>>();
  ASSERT_EQ(values.size(), expected.size()) << what;
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(values[i], expected[i], tolerance * (1 + std::fabs(expected[i]))) << what << " element " << i;
}

TEST(QuantFixture, PerTensorIntegersAndValuesEqualPyTorchs) {
  const json& f = fixtures()["per_tensor"];
  const Tensor x = tensor_of(f["x"]);
  for (const json& c : f["cases"]) {
    const std::string what = "scale " + std::to_string(c["scale"].get<double>()) + " " + c["dtype"].get<std::string>();
    QTensor q = quantize_per_tensor(x, c["scale"], c["zero_point"], dtype_of(c["dtype"]));
    EXPECT_EQ(q.int_repr().dtype(), dtype_of(c["dtype"]));
    expect_values(q.int_repr(), c["int_repr"], 0.0, what + " int_repr");
    expect_values(q.dequantize(), c["dequantized"], 0.0, what + " dequantize");
    EXPECT_EQ(q.dequantize().dtype(), Dtype::f32);
  }
}

TEST(QuantFixture, PerChannelIntegersAndValuesEqualPyTorchs) {
  const json& f = fixtures()["per_channel"];
  const Tensor x = tensor_of(f["x"]);
  for (const json& c : f["cases"]) {
    const Tensor scales = from_vector(c["scales"].get<std::vector<double>>());
    const Tensor zero_points = from_vector(c["zero_points"].get<std::vector<double>>()).to(Dtype::i64);
    QTensor q = quantize_per_channel(x, scales, zero_points, c["axis"], dtype_of(c["dtype"]));
    const std::string what = "axis " + std::to_string(c["axis"].get<int>());
    expect_values(q.int_repr(), c["int_repr"], 0.0, what + " int_repr");
    expect_values(q.dequantize(), c["dequantized"], 0.0, what + " dequantize");
    EXPECT_EQ(q.q_per_channel_axis(), c["axis"].get<int64_t>());
  }
}

TEST(QuantFixture, FakeQuantizeValuesAndStraightThroughGradients) {
  const json& f = fixtures()["fake_quantize"];
  {
    const json& c = f["per_tensor"];
    Tensor x = tensor_of(c["x"]).requires_grad_();
    Tensor y = fake_quantize_per_tensor_affine(x, c["scale"], c["zero_point"], c["quant_min"], c["quant_max"]);
    expect_values(y, c["out"], 0.0, "per tensor out");
    y.backward(arange(0, static_cast<double>(x.numel()), 1, Dtype::f32));
    expect_values(x.grad(), c["grad"], 0.0, "per tensor grad");
  }
  {
    const json& c = f["per_channel"];
    Tensor x = tensor_of(c["x"]).requires_grad_();
    Tensor y = fake_quantize_per_channel_affine(x, from_vector(c["scales"].get<std::vector<double>>()),
                                                from_vector(c["zero_points"].get<std::vector<double>>()).to(Dtype::i32),
                                                c["axis"], c["quant_min"], c["quant_max"]);
    expect_values(y, c["out"], 0.0, "per channel out");
    y.backward(ones_like(y));
    expect_values(x.grad(), c["grad"], 0.0, "per channel grad");
  }
}

}  // namespace
