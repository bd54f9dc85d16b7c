// Printing against PyTorch's own text: each fixture is repr(t) from PyTorch
// 1.13 for the tensor built the same way here (tests/unit/print_fixtures.py
// regenerates them with Debian's python3-torch).
#include <cmath>
#include <map>
#include <sstream>

#include "test_support.hpp"

using namespace nnp;

namespace {

const std::map<std::string, std::string> kPyTorch = {
    {"f32", "tensor([ 1.5000,  2.0000, -3.2500])"},
    {"arange_i64", "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"},
    {"ones_2x3",
     "tensor([[1., 1., 1.],\n"
     "        [1., 1., 1.]])"},
    {"f64", "tensor([0.1000, 0.2000], dtype=torch.float64)"},
    {"summarized_1d",
     "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
     "        1.9990e+03])"},
    {"summarized_2d",
     "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
     "         4.9000e+01],\n"
     "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
     "         9.9000e+01],\n"
     "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
     "         1.4900e+02],\n"
     "        ...,\n"
     "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
     "         1.8990e+03],\n"
     "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
     "         1.9490e+03],\n"
     "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
     "         1.9990e+03]])"},
    {"small_sci", "tensor([1.0000e-05, 1.0000e+00])"},
    {"big_sci", "tensor([1.0000e+09, 1.0000e+00])"},
    {"int_mode_wide", "tensor([1.0000e+00, 1.0000e+06])"},
    {"big_ints", "tensor([123456789012,           -5])"},
    {"bool", "tensor([ True, False,  True])"},
    {"empty_f32", "tensor([])"},
    {"empty_0x3", "tensor([], size=(0, 3))"},
    {"empty_i64", "tensor([], dtype=torch.int64)"},
    {"scalar_f32", "tensor(1.5000)"},
    {"scalar_i64", "tensor(3)"},
    {"requires_grad", "tensor([1., 2.], requires_grad=True)"},
    {"mul_grad_fn", "tensor([2., 4.], grad_fn=<MulBackward0>)"},
    {"add_grad_fn", "tensor([2., 4.], grad_fn=<AddBackward0>)"},
    {"nan_inf", "tensor([   nan,    inf,   -inf, 1.5000])"},
    {"u8", "tensor([  1, 200], dtype=torch.uint8)"},
    {"i32", "tensor([-7, 12], dtype=torch.int32)"},
    {"f16", "tensor([9.9976e-02, 6.5504e+04], dtype=torch.float16)"},
    {"bf16", "tensor([0.1001, 3.0000], dtype=torch.bfloat16)"},
    {"three_d",
     "tensor([[[ 0,  1,  2,  3],\n"
     "         [ 4,  5,  6,  7],\n"
     "         [ 8,  9, 10, 11]],\n"
     "\n"
     "        [[12, 13, 14, 15],\n"
     "         [16, 17, 18, 19],\n"
     "         [20, 21, 22, 23]]])"},
    {"wrapping",
     "tensor([ 0.0000,  1.1000,  2.2000,  3.3000,  4.4000,  5.5000,  6.6000,  7.7000,\n"
     "         8.8000,  9.9000, 11.0000, 12.1000, 13.2000, 14.3000, 15.4000, 16.5000,\n"
     "        17.6000, 18.7000, 19.8000, 20.9000, 22.0000, 23.1000, 24.2000, 25.3000,\n"
     "        26.4000, 27.5000, 28.6000, 29.7000, 30.8000, 31.9000])"},
    {"negative_zero", "tensor([-0., 1.])"},
    {"wide_f64_wrap",
     "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
     "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
     "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
     "        3.8571, 4.0000, 4.1429, 4.2857, 4.4286, 4.5714, 4.7143, 4.8571, 5.0000,\n"
     "        5.1429, 5.2857, 5.4286, 5.5714], dtype=torch.float64)"},
    {"summarized_3d",
     "tensor([[[   0,    1,    2,  ...,   27,   28,   29],\n"
     "         [  30,   31,   32,  ...,   57,   58,   59],\n"
     "         [  60,   61,   62,  ...,   87,   88,   89],\n"
     "         ...,\n"
     "         [ 210,  211,  212,  ...,  237,  238,  239],\n"
     "         [ 240,  241,  242,  ...,  267,  268,  269],\n"
     "         [ 270,  271,  272,  ...,  297,  298,  299]],\n"
     "\n"
     "        [[ 300,  301,  302,  ...,  327,  328,  329],\n"
     "         [ 330,  331,  332,  ...,  357,  358,  359],\n"
     "         [ 360,  361,  362,  ...,  387,  388,  389],\n"
     "         ...,\n"
     "         [ 510,  511,  512,  ...,  537,  538,  539],\n"
     "         [ 540,  541,  542,  ...,  567,  568,  569],\n"
     "         [ 570,  571,  572,  ...,  597,  598,  599]],\n"
     "\n"
     "        [[ 600,  601,  602,  ...,  627,  628,  629],\n"
     "         [ 630,  631,  632,  ...,  657,  658,  659],\n"
     "         [ 660,  661,  662,  ...,  687,  688,  689],\n"
     "         ...,\n"
     "         [ 810,  811,  812,  ...,  837,  838,  839],\n"
     "         [ 840,  841,  842,  ...,  867,  868,  869],\n"
     "         [ 870,  871,  872,  ...,  897,  898,  899]],\n"
     "\n"
     "        ...,\n"
     "\n"
     "        [[2100, 2101, 2102,  ..., 2127, 2128, 2129],\n"
     "         [2130, 2131, 2132,  ..., 2157, 2158, 2159],\n"
     "         [2160, 2161, 2162,  ..., 2187, 2188, 2189],\n"
     "         ...,\n"
     "         [2310, 2311, 2312,  ..., 2337, 2338, 2339],\n"
     "         [2340, 2341, 2342,  ..., 2367, 2368, 2369],\n"
     "         [2370, 2371, 2372,  ..., 2397, 2398, 2399]],\n"
     "\n"
     "        [[2400, 2401, 2402,  ..., 2427, 2428, 2429],\n"
     "         [2430, 2431, 2432,  ..., 2457, 2458, 2459],\n"
     "         [2460, 2461, 2462,  ..., 2487, 2488, 2489],\n"
     "         ...,\n"
     "         [2610, 2611, 2612,  ..., 2637, 2638, 2639],\n"
     "         [2640, 2641, 2642,  ..., 2667, 2668, 2669],\n"
     "         [2670, 2671, 2672,  ..., 2697, 2698, 2699]],\n"
     "\n"
     "        [[2700, 2701, 2702,  ..., 2727, 2728, 2729],\n"
     "         [2730, 2731, 2732,  ..., 2757, 2758, 2759],\n"
     "         [2760, 2761, 2762,  ..., 2787, 2788, 2789],\n"
     "         ...,\n"
     "         [2910, 2911, 2912,  ..., 2937, 2938, 2939],\n"
     "         [2940, 2941, 2942,  ..., 2967, 2968, 2969],\n"
     "         [2970, 2971, 2972,  ..., 2997, 2998, 2999]]])"},
    {"all_zero", "tensor([0., 0., 0.])"},
};

std::map<std::string, Tensor> tensors() {
  std::map<std::string, Tensor> t;
  t["f32"] = from_vector(std::vector<float>{1.5, 2, -3.25});
  t["arange_i64"] = arange(0, 10);
  t["ones_2x3"] = ones({2, 3});
  t["f64"] = from_vector(std::vector<double>{0.1, 0.2});
  t["summarized_1d"] = arange(0, 2000).to(Dtype::f32);
  t["summarized_2d"] = arange(0, 2000).to(Dtype::f32).reshape({40, 50});
  t["small_sci"] = from_vector(std::vector<float>{1e-5f, 1.0f});
  t["big_sci"] = from_vector(std::vector<float>{1e9f, 1.0f});
  t["int_mode_wide"] = from_vector(std::vector<float>{1.0f, 1000000.0f});
  t["big_ints"] = from_vector(std::vector<int64_t>{123456789012, -5});
  t["bool"] = from_vector(std::vector<uint8_t>{1, 0, 1}).to(Dtype::boolean);
  t["empty_f32"] = empty({0});
  t["empty_0x3"] = zeros({0, 3});
  t["empty_i64"] = zeros({0}, Dtype::i64);
  t["scalar_f32"] = full({}, 1.5);
  t["scalar_i64"] = full({}, 3, Dtype::i64);
  Tensor x = from_vector(std::vector<float>{1, 2}).requires_grad_();
  t["requires_grad"] = x;
  t["mul_grad_fn"] = x * 2.0;
  t["add_grad_fn"] = x + x;
  t["nan_inf"] = from_vector(std::vector<float>{NAN, INFINITY, -INFINITY, 1.5f});
  t["u8"] = from_vector(std::vector<uint8_t>{1, 200});
  t["i32"] = from_vector(std::vector<int32_t>{-7, 12});
  t["f16"] = from_vector(std::vector<float>{0.1f, 65504.0f}).to(Dtype::f16);
  t["bf16"] = from_vector(std::vector<float>{0.1f, 3.0f}).to(Dtype::bf16);
  t["three_d"] = arange(0, 24).reshape({2, 3, 4});
  t["wrapping"] = arange(0, 30).to(Dtype::f32) * 1.1;
  t["negative_zero"] = from_vector(std::vector<float>{-0.0f, 1.0f});
  t["wide_f64_wrap"] = arange(0, 40, 1, Dtype::f64) / 7.0;
  t["summarized_3d"] = arange(0, 3000).reshape({10, 10, 30});
  t["all_zero"] = zeros({3});
  return t;
}

}  // namespace

TEST(Printing, MatchesPyTorchsTextCharacterForCharacter) {
  std::map<std::string, Tensor> ours = tensors();
  ASSERT_EQ(ours.size(), kPyTorch.size());
  for (const auto& [name, expected] : kPyTorch) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(ours.count(name));
    EXPECT_EQ(ours.at(name).str(), expected);
    std::ostringstream out;
    out << ours.at(name);
    EXPECT_EQ(out.str(), expected);
  }
}

// On another device the suffix names it, as PyTorch's device='cuda:0'.
TEST(Printing, NamesTheDeviceWhenNotTheCpu) {
  EXPECT_EQ(ones({2}).to(Device("reference")).str(), "tensor([1., 1.], device='reference:0')");
}
