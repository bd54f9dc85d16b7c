// nnplug.blocks: the plugin layer built on the SDK's conv2d gives the
// built-in nn.Conv2d's values and gradients (followed by ReLU) and takes the
// same fused convolution kernel where the backend has one.
#include <gtest/gtest.h>

#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>
#include <string>
#include <vector>

namespace {

using nnp::Tensor;
using nnp::nn::Attrs;

nnp::nn::Attrs conv_attrs() {
  return std::move(
      Attrs().set("in_channels", 3).set("out_channels", 5).set("kernel_size", 3).set("stride", 2).set("padding", 1));
}

// The convolution kernel events of one forward without history.
int fused_calls(nnp::nn::ModuleHandle& m, const Tensor& x) {
  nnp::NoGradGuard inference;
  nnp::profiler::Profiler recording;
  m(x);
  int calls = 0;
  for (const nnp::profiler::Event& e : recording.stop().events()) calls += e.name == "conv2d";
  return calls;
}

void expect_equal(const Tensor& got, const Tensor& want) {
  const std::vector<float> g = got.contiguous().to_vector<float>(), w = want.contiguous().to_vector<float>();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5) << i;
}

TEST(Blocks, ConvReLU2dMatchesTheBuiltInConv2dThroughTheSameFusedKernel) {
  nnp::manual_seed(4);
  nnp::nn::ModuleHandle block = nnp::nn::create_layer("blocks.ConvReLU2d", conv_attrs());
  nnp::nn::ModuleHandle conv = nnp::nn::create_layer("nn.Conv2d", conv_attrs());
  block.load_state_dict(conv.state_dict());  // the same parameter names

  Tensor x = nnp::randn({4, 3, 9, 8});
  x.requires_grad_();
  Tensor y = block(x);
  Tensor want = conv(x).relu();
  expect_equal(y, want);
  EXPECT_EQ(y.shape(), (nnp::Shape{4, 5, 5, 4}));

  y.sum().backward();
  const Tensor block_dx = x.grad(), block_dw = block.get_parameter("weight").grad();
  x.set_grad(Tensor());
  want.sum().backward();
  expect_equal(block_dx, x.grad());
  expect_equal(block_dw, conv.get_parameter("weight").grad());

  const int builtin_calls = fused_calls(conv, x);
  EXPECT_EQ(fused_calls(block, x), builtin_calls) << "the plugin's layer takes the path the built-in layer takes";
  EXPECT_EQ(block.repr(), "ConvReLU2d(3, 5, kernel_size=3, stride=2, padding=1)");
}

TEST(Blocks, ConvReLU2dRefusesSizesThatMakeNoConvolution) {
  EXPECT_THROW(nnp::nn::create_layer("blocks.ConvReLU2d", std::move(conv_attrs().set("kernel_size", 0))),
               nnp::Error);
}

}  // namespace
