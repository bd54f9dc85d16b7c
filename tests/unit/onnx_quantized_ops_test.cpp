// ONNX's integer products and dynamic quantization as graph ops: exact
// int32 results (against sums computed here in int64) where the f32 path
// must split its operand to stay exact, and DynamicQuantizeLinear's scale,
// zero point and values as ONNX Runtime computes them in f32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using namespace nnp;

std::vector<Tensor> run(const std::string& op, const std::vector<std::string>& inputs, int outputs,
                        const std::vector<Tensor>& args, const std::string& attrs = "{}") {
  std::string in_names, in_list, out_list;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_names += (i ? ", \"" : "\"") + inputs[i] + "\"";
    in_list += (i ? ", \"" : "\"") + inputs[i] + "\"";
  }
  for (int i = 0; i < outputs; ++i) out_list += (i ? ", \"y" : "\"y") + std::to_string(i) + "\"";
  nn::ModuleHandle net =
      nn::GraphModule(R"({"inputs": [)" + in_names + R"(], "outputs": [)" + out_list +
                      R"(], "layers": [], "tensors": [], "nodes": [{"op": ")" + op + R"(", "inputs": [)" + in_list +
                      R"(], "outputs": [)" + out_list + R"(], "attrs": )" + attrs + "}]}");
  NoGradGuard no_grad;
  std::vector<Value> values(args.begin(), args.end());
  std::vector<Tensor> out;
  for (const Value& v : net.call_values(values)) out.push_back(v.toTensor());
  return out;
}

// a [m, k] u8 less its zero point, times b [k, n] i8: the int64 sums.
std::vector<int64_t> exact_matmul(const std::vector<uint8_t>& a, int64_t zero, const std::vector<int8_t>& b, int64_t m,
                                  int64_t k, int64_t n) {
  std::vector<int64_t> out(static_cast<size_t>(m * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        out[static_cast<size_t>(i * n + j)] +=
            (a[static_cast<size_t>(i * k + p)] - zero) * static_cast<int64_t>(b[static_cast<size_t>(p * n + j)]);
  return out;
}

TEST(OnnxQuantizedOps, IntegerProductsAreExactWhereF32SumsWouldNotBe) {
  // 3000 terms of up to 255 * 128: sums near 10^8, past f32's 2^24.
  const int64_t m = 3, k = 3000, n = 4;
  std::vector<uint8_t> a(static_cast<size_t>(m * k));
  std::vector<int8_t> b(static_cast<size_t>(k * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i % 7 == 0 ? 0 : 255 - i % 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int8_t>(i % 5 == 0 ? 127 : -128 + static_cast<int>(i % 2));
  const std::vector<int64_t> expected = exact_matmul(a, 3, b, m, k, n);
  const std::vector<Tensor> got = run("MatMulInteger", {"a", "b", "za"}, 1,
                                      {from_vector(a, {m, k}), from_vector(b, {k, n}), full({}, 3, Dtype::u8)});
  ASSERT_EQ(got[0].dtype(), Dtype::i32);
  const std::vector<int32_t> sums = got[0].to_vector<int32_t>();
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(sums[i], expected[i]) << "sum " << i;

  // The same sums as a 1 x 1 convolution over 3000 channels.
  const std::vector<Tensor> conv =
      run("ConvInteger", {"x", "w", "zx"}, 1,
          {from_vector(a, {m, k}).transpose(0, 1).reshape({1, k, m, 1}).contiguous(),
           from_vector(b, {k, n}).transpose(0, 1).reshape({n, k, 1, 1}).contiguous(), full({}, 3, Dtype::u8)});
  const std::vector<int32_t> maps = conv[0].contiguous().to_vector<int32_t>();  // [1, n, m, 1]
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(maps[static_cast<size_t>(j * m + i)], expected[static_cast<size_t>(i * n + j)]) << i << ", " << j;
}

TEST(OnnxQuantizedOps, DynamicQuantizeLinearAsOnnxRuntimeComputesIt) {
  const std::vector<float> x = {-1.5f, 0.25f, 3.0f, 2.999f, 0.0f, -0.7f};
  const std::vector<Tensor> got = run("DynamicQuantizeLinear", {"x"}, 3, {from_vector(x, {6})});
  const float scale = (3.0f - -1.5f) / 255.0f;
  const float zero = std::nearbyint(1.5f / scale);
  EXPECT_EQ(got[1].item<float>(), scale);
  EXPECT_EQ(got[2].item<double>(), zero);
  const std::vector<uint8_t> y = got[0].to_vector<uint8_t>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, std::nearbyint(x[i] / scale) + zero))));
  // All zeros: scale 0, zero point 0, values 0; a NaN is refused by name.
  const std::vector<Tensor> zeros = run("DynamicQuantizeLinear", {"x"}, 3, {full({4}, 0.0)});
  EXPECT_EQ(zeros[1].item<float>(), 0.0f);
  EXPECT_EQ(zeros[0].to_vector<uint8_t>(), std::vector<uint8_t>(4, 0));
  nnp::test::expect_error(
      [&] {
        run("DynamicQuantizeLinear", {"x"}, 3, {from_vector<float>({1, NAN}, {2})});
      },
      NNP_INVALID_ARGUMENT, {"DynamicQuantizeLinear", "NaN"});
}

}  // namespace
