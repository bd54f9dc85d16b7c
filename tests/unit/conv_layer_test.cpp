// Convolution and pooling against direct loops, and their gradients against
// finite differences.
#include <cmath>
#include <limits>

#include "test_support.hpp"

using namespace nnp;
using nnp::nn::Attrs;
using nnp::nn::create_layer;
using nnp::test::expect_error;

namespace {

// out[n][o][i][j] = b[o] + sum_{c in group, ki, kj} w[o][c'][ki][kj] x[n][c][i s + ki d - p][j s + kj d - p]
std::vector<double> direct_conv(const std::vector<double>& x, const Shape& xs, const std::vector<double>& w,
                                const Shape& ws, const std::vector<double>& b, int64_t sh, int64_t sw, int64_t ph,
                                int64_t pw, int64_t dh, int64_t dw, int64_t groups, int64_t& oh, int64_t& ow) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], o = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  oh = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  ow = (wd + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  std::vector<double> out(static_cast<size_t>(n * o * oh * ow));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t io = 0; io < o; ++io) {
      int64_t g = io / (o / groups);
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double sum = b.empty() ? 0 : b[static_cast<size_t>(io)];
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t ki = 0; ki < kh; ++ki)
              for (int64_t kj = 0; kj < kw; ++kj) {
                int64_t y = i * sh + ki * dh - ph, xx = j * sw + kj * dw - pw;
                if (y < 0 || y >= h || xx < 0 || xx >= wd) continue;
                int64_t channel = g * cg + ic;
                sum += w[static_cast<size_t>(((io * cg + ic) * kh + ki) * kw + kj)] *
                       x[static_cast<size_t>(((in * c + channel) * h + y) * wd + xx)];
              }
          out[static_cast<size_t>(((in * o + io) * oh + i) * ow + j)] = sum;
        }
    }
  return out;
}

}  // namespace

TEST(ConvLayers, Conv2dMatchesDirectLoops) {
  auto conv = create_layer("nn.Conv2d", std::move(Attrs()
                                                      .set("in_channels", 4)
                                                      .set("out_channels", 6)
                                                      .set("kernel_size", std::vector<int64_t>{3, 2})
                                                      .set("stride", std::vector<int64_t>{2, 1})
                                                      .set("padding", std::vector<int64_t>{1, 0})
                                                      .set("dilation", std::vector<int64_t>{1, 2})
                                                      .set("groups", 2)));
  EXPECT_EQ(conv.repr(), "Conv2d(4, 6, kernel_size=(3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)");
  conv.to_double();
  Tensor x = randn({2, 4, 6, 5}, Dtype::f64);
  Tensor w = conv.get_parameter("weight"), b = conv.get_parameter("bias");
  EXPECT_EQ(w.shape(), (Shape{6, 2, 3, 2}));
  int64_t oh = 0, ow = 0;
  std::vector<double> want = direct_conv(x.to_vector<double>(), x.shape(), w.to_vector<double>(), w.shape(),
                                         b.to_vector<double>(), 2, 1, 1, 0, 1, 2, 2, oh, ow);
  Tensor y = conv(x);
  EXPECT_EQ(y.shape(), (Shape{2, 6, oh, ow}));
  std::vector<double> got = y.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-12) << "element " << i;
  expect_error([&] { conv(randn({2, 3, 6, 5}, Dtype::f64)); }, NNP_SHAPE_MISMATCH, {"[N, 4, H, W]"});
  EXPECT_EQ(
      create_layer("nn.Conv2d", std::move(Attrs().set("in_channels", 1).set("out_channels", 16).set("kernel_size", 5)))
          .repr(),
      "Conv2d(1, 16, kernel_size=(5, 5), stride=(1, 1))");
}

TEST(ConvLayers, Conv2dGradientsMatchFiniteDifferences) {
  auto conv = create_layer(
      "nn.Conv2d",
      std::move(Attrs().set("in_channels", 2).set("out_channels", 2).set("kernel_size", 2).set("padding", 1)));
  conv.to_double();
  Tensor x = randn({1, 2, 3, 3}, Dtype::f64).requires_grad_();
  Tensor weight = randn({1, 2, 4, 4}, Dtype::f64);
  (conv(x) * weight).sum().backward();
  std::vector<double> analytic = x.grad().to_vector<double>(), base = x.to_vector<double>();
  Tensor w = conv.get_parameter("weight");
  std::vector<double> w_analytic = w.grad().to_vector<double>();
  NoGradGuard no_grad;
  auto loss = [&](const Tensor& input) { return (conv(input) * weight).sum().item<double>(); };
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> up = base, down = base;
    up[i] += 1e-6;
    down[i] -= 1e-6;
    double numeric = (loss(from_vector(up, {1, 2, 3, 3})) - loss(from_vector(down, {1, 2, 3, 3}))) / 2e-6;
    EXPECT_NEAR(analytic[i], numeric, 1e-6) << "input element " << i;
  }
  Tensor xd = x.detach();
  std::vector<double> wbase = w.to_vector<double>();
  for (size_t i = 0; i < wbase.size(); ++i) {
    std::vector<double> up = wbase, down = wbase;
    up[i] += 1e-6;
    w.copy_(from_vector(up, w.shape()));
    double plus = loss(xd);
    down[i] -= 1e-6;
    w.copy_(from_vector(down, w.shape()));
    double minus = loss(xd);
    w.copy_(from_vector(wbase, w.shape()));
    EXPECT_NEAR(w_analytic[i], (plus - minus) / 2e-6, 1e-6) << "weight element " << i;
  }
}

TEST(ConvLayers, Pooling) {
  Tensor x = from_vector(std::vector<float>{1, 5, 2, 0, 3, 3, 8, 1, 0, 2, 4, 4, 7, 1, 6, 9}, {1, 1, 4, 4});
  auto max_pool = create_layer("nn.MaxPool2d", std::move(Attrs().set("kernel_size", 2)));
  EXPECT_EQ(max_pool.repr(), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(max_pool(x).to_vector<float>(), (std::vector<float>{5, 8, 7, 9}));
  auto avg_pool = create_layer("nn.AvgPool2d", std::move(Attrs().set("kernel_size", 2)));
  EXPECT_EQ(avg_pool(x).to_vector<float>(), (std::vector<float>{3, 2.75f, 2.5f, 5.75f}));
  // Padding with -inf: the corner window of a padded max pool sees only x[0][0].
  auto padded =
      create_layer("nn.MaxPool2d", std::move(Attrs().set("kernel_size", 3).set("stride", 2).set("padding", 1)));
  EXPECT_EQ(padded(x.neg()).to_vector<float>()[0], -1.0f);
  // The gradient of a tie goes to the first maximum, as PyTorch's.
  Tensor ties = zeros({1, 1, 2, 2}).requires_grad_();
  max_pool(ties).sum().backward();
  EXPECT_EQ(ties.grad().to_vector<float>(), (std::vector<float>{1, 0, 0, 0}));
  // ceil_mode: the last window runs past the input and sees what is there.
  auto ceil_pool = create_layer("nn.MaxPool2d", std::move(Attrs().set("kernel_size", 2).set("ceil_mode", true)));
  EXPECT_EQ(ceil_pool(arange(0, 9, 1, Dtype::f32).reshape({1, 1, 3, 3})).to_vector<float>(),
            (std::vector<float>{4, 5, 7, 8}));

  auto global = create_layer("nn.AdaptiveAvgPool2d", std::move(Attrs().set("output_size", 1)));
  EXPECT_NEAR(global(x).item<float>(), 56.0f / 16, 1e-6);
  Tensor big = randn({2, 3, 5, 7}, Dtype::f64);
  auto adaptive =
      create_layer("nn.AdaptiveAvgPool2d", std::move(Attrs().set("output_size", std::vector<int64_t>{2, 3})));
  Tensor pooled = adaptive(big);
  EXPECT_EQ(pooled.shape(), (Shape{2, 3, 2, 3}));
  // Window (1, 2) covers rows [2, 5) and columns [4, 7).
  double expected = big.slice(2, 2, 5).slice(3, 4, 7).mean({2, 3}).to_vector<double>()[0];
  EXPECT_NEAR(pooled.to_vector<double>()[5], expected, 1e-12);
}

// Inference takes the backend's max_pool2d kernel: PyTorch's answers (from
// torch.nn.functional.max_pool2d) for NaNs, where the last NaN of a window
// is its index, and for a window of nothing but -inf, which gives its first
// position; the ceil_mode windows run past the input.
TEST(ConvLayers, MaxPoolingInferenceKeepsPyTorchsNanAndInfinityRules) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Tensor x = from_vector(std::vector<float>{nan, 1, 3, nan, nan, 5, -inf, -inf, 7, 0, -inf, -inf}, {1, 1, 3, 4});
  auto pool = create_layer("nn.MaxPool2d",
                           std::move(Attrs().set("kernel_size", 2).set("ceil_mode", true).set("return_indices", true)));
  NoGradGuard no_grad;
  nn::Outputs out = pool.call_values({x});
  const std::vector<float> values = out.tensor(0).to_vector<float>();
  EXPECT_TRUE(std::isnan(values[0]) && std::isnan(values[1]));
  EXPECT_EQ(values[2], 7.0f);
  EXPECT_EQ(values[3], -inf);
  EXPECT_EQ(out.tensor(1).to_vector<int64_t>(), (std::vector<int64_t>{4, 3, 8, 10}));
  // Without indices too (the kernel's values-only path).
  auto plain = create_layer("nn.MaxPool2d", std::move(Attrs().set("kernel_size", 2).set("ceil_mode", true)));
  const std::vector<float> v = plain(x).to_vector<float>();
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]));
  EXPECT_EQ(v[2], 7.0f);
  EXPECT_EQ(v[3], -inf);
  // Kernel 2, stride 2, every window inside (the kernel's own loop for that
  // case): two NaNs (the last one's index), ties (the first), all -inf.
  Tensor y =
      from_vector(std::vector<float>{nan, 1, 3, 3, nan, 5, 3, 2, -inf, -inf, 7, 0, -inf, -inf, 7, 7}, {1, 1, 4, 4});
  auto two = create_layer("nn.MaxPool2d", std::move(Attrs().set("kernel_size", 2).set("return_indices", true)));
  nn::Outputs pooled = two.call_values({y});
  const std::vector<float> w = pooled.tensor(0).to_vector<float>();
  EXPECT_TRUE(std::isnan(w[0]));
  EXPECT_EQ(w[1], 3.0f);
  EXPECT_EQ(w[2], -inf);
  EXPECT_EQ(w[3], 7.0f);
  EXPECT_EQ(pooled.tensor(1).to_vector<int64_t>(), (std::vector<int64_t>{4, 2, 8, 10}));
}

// Wide rows take the cpu kernel's eight-at-a-time path for 2x2 windows: the
// same values and indices as the reference backend's general path, with
// ties, -inf, and a NaN that sends the rest of its row to the scalar loop.
TEST(ConvLayers, MaxPoolingTwoByTwoOnWideRowsMatchesTheGeneralPath) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const int64_t h = 6, w = 41;  // 20 windows a row: two groups of eight, then four (and an odd last column)
  std::vector<float> data = randn({2, 3, h, w}).to_vector<float>();
  for (size_t i = 0; i < data.size(); i += 7) data[i] = std::round(data[i]);  // ties between taps
  data[5] = nan;                      // plane 0, row 0: the first group
  data[w + 30] = nan;                 // plane 0, row 1: the second pair's third group
  data[h * w + 3] = data[h * w + 2];  // an exact tie inside one window
  for (int64_t j = 0; j < 16; ++j) data[2 * h * w + j] = data[2 * h * w + w + j] = -inf;  // all -inf windows
  const Tensor x = from_vector(data, {2, 3, h, w});
  std::vector<std::vector<float>> values;
  std::vector<std::vector<int64_t>> indices;
  for (const char* device : {"cpu", "reference"}) {
    auto pool = create_layer("nn.MaxPool2d", std::move(Attrs().set("kernel_size", 2).set("return_indices", true)));
    NoGradGuard no_grad;
    nn::Outputs out = pool.call_values({x.to(Device(device))});
    values.push_back(out.tensor(0).to(Device("cpu")).reshape({-1}).to_vector<float>());
    indices.push_back(out.tensor(1).to(Device("cpu")).reshape({-1}).to_vector<int64_t>());
  }
  ASSERT_EQ(values[0].size(), values[1].size());
  for (size_t i = 0; i < values[0].size(); ++i) {
    if (std::isnan(values[1][i])) {
      EXPECT_TRUE(std::isnan(values[0][i])) << "at " << i;
    } else {
      EXPECT_EQ(values[0][i], values[1][i]) << "at " << i;
    }
  }
  EXPECT_EQ(indices[0], indices[1]);
  EXPECT_TRUE(std::isnan(values[0][2]));   // the first NaN's window
  EXPECT_TRUE(std::isnan(values[0][15]));  // the second's (row 0 of the output, column 15)
}

// Training takes the backend's max_pool2d kernel too (on cpu; the reference
// backend has none and unfolds every window): the same values, indices and
// input gradients, overlapping windows (stride < kernel) and padding
// included, for f32 inputs that require grad.
TEST(ConvLayers, MaxPoolingTrainingThroughTheKernelMatchesTheGeneralPath) {
  const char* specs[] = {
      R"({"type": "nn.MaxPool2d", "kernel_size": 2, "return_indices": true})",
      R"({"type": "nn.MaxPool2d", "kernel_size": 3, "stride": 2, "padding": 1, "return_indices": true})",
      R"({"type": "nn.MaxPool2d", "kernel_size": [3, 2], "stride": 1, "dilation": [1, 2], "ceil_mode": true,
          "return_indices": true})",
  };
  const Tensor x0 = randn({2, 3, 9, 8});
  for (const char* spec : specs) {
    std::vector<std::vector<float>> values, grads;
    std::vector<std::vector<int64_t>> indices;
    for (const char* device : {"cpu", "reference"}) {
      nn::ModuleHandle pool = nn::model_from_spec(spec);
      Tensor x = x0.clone().to(Device(device)).requires_grad_();
      auto out = pool.call_values({Value(x)});
      Tensor y = out.tensor(0);
      (y * y).sum().backward();
      values.push_back(y.detach().to(Device("cpu")).reshape({-1}).to_vector<float>());
      indices.push_back(out.tensor(1).to(Device("cpu")).reshape({-1}).to_vector<int64_t>());
      grads.push_back(x.grad().to(Device("cpu")).reshape({-1}).to_vector<float>());
    }
    EXPECT_EQ(values[0], values[1]) << spec;
    EXPECT_EQ(indices[0], indices[1]) << spec;
    ASSERT_EQ(grads[0].size(), grads[1].size());
    for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_NEAR(grads[0][i], grads[1][i], 1e-5) << spec << " at " << i;
  }
}

// Training takes the backend's conv2d and conv2d_backward kernels where it
// has both (cpu; ABI 1.12): one ConvolutionBackward0 node, and the
// gradients of the reference backend's im2col ops, with groups, stride,
// padding and dilation, for an input and parameters that require grad.
TEST(ConvLayers, Conv2dTrainingThroughTheKernelsMatchesTheGeneralPath) {
  const std::string spec = R"({"type": "nn.Conv2d", "in_channels": 4, "out_channels": 6, "kernel_size": 3,
                                "stride": 2, "padding": [1, 2], "dilation": [1, 2], "groups": 2})";
  const Tensor x0 = randn({3, 4, 11, 10});
  nn::ModuleHandle cpu_conv = nn::model_from_spec(spec);
  nn::ModuleHandle reference_conv = nn::model_from_spec(spec);
  reference_conv.load_state_dict(cpu_conv.state_dict());
  reference_conv.to(Device("reference"));
  std::vector<std::vector<float>> grads[2];
  int side = 0;
  for (nn::ModuleHandle* conv : {&cpu_conv, &reference_conv}) {
    const Device device = conv->parameters()[0].device();
    Tensor x = x0.clone().to(device).requires_grad_();
    Tensor y = (*conv)(x);
    if (side == 0) {
      EXPECT_EQ(y.grad_fn_name(), "ConvolutionBackward0");
    }
    (y * y).sum().backward();
    grads[side].push_back(x.grad().to(Device("cpu")).reshape({-1}).to_vector<float>());
    for (const Tensor& p : conv->parameters())
      grads[side].push_back(p.grad().to(Device("cpu")).reshape({-1}).to_vector<float>());
    ++side;
  }
  ASSERT_EQ(grads[0].size(), 3u);  // input, weight, bias
  for (size_t t = 0; t < grads[0].size(); ++t) {
    ASSERT_EQ(grads[0][t].size(), grads[1][t].size());
    for (size_t i = 0; i < grads[0][t].size(); ++i)
      EXPECT_NEAR(grads[0][t][i], grads[1][t][i], 1e-4 * (1 + std::abs(grads[1][t][i])))
          << "tensor " << t << " at " << i;
  }
}

TEST(ConvLayers, Conv1dIsAConvolutionAlongTheLength) {
  auto conv = create_layer(
      "nn.Conv1d",
      std::move(Attrs().set("in_channels", 2).set("out_channels", 3).set("kernel_size", 3).set("padding", 1)));
  EXPECT_EQ(conv.repr(), "Conv1d(2, 3, kernel_size=(3,), stride=(1,), padding=(1,))");
  Tensor w = conv.get_parameter("weight");
  EXPECT_EQ(w.shape(), (Shape{3, 2, 3}));  // PyTorch's [out, in / groups, k]
  Tensor x = randn({4, 2, 10});
  Tensor y = conv(x);
  EXPECT_EQ(y.shape(), (Shape{4, 3, 10}));
  // Element [0][0][0]: the window starts in the padding.
  std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
  float expected = conv.get_parameter("bias").to_vector<float>()[0];
  for (int c = 0; c < 2; ++c)
    for (int k = 1; k < 3; ++k)
      expected += wv[static_cast<size_t>(c * 3 + k)] * xv[static_cast<size_t>(c * 10 + k - 1)];
  EXPECT_NEAR(y.to_vector<float>()[0], expected, 1e-5);
}

TEST(ConvLayers, TheW3NetworkRunsForwardAndBackward) {
  nn::ModuleHandle net = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Conv2d", "in_channels": 1, "out_channels": 16, "kernel_size": 5}, {"type": "nn.ReLU"},
    {"type": "nn.MaxPool2d", "kernel_size": 2},
    {"type": "nn.Conv2d", "in_channels": 16, "out_channels": 32, "kernel_size": 5}, {"type": "nn.ReLU"},
    {"type": "nn.MaxPool2d", "kernel_size": 2}, {"type": "nn.Flatten"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
  Tensor out = net(randn({32, 1, 28, 28}));
  EXPECT_EQ(out.shape(), (Shape{32, 10}));
  nn::create_layer("nn.CrossEntropyLoss").call({out, randint(0, 10, {32})}).backward();
  for (const Tensor& p : net.parameters()) EXPECT_TRUE(p.grad().defined());
}
