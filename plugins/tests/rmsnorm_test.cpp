// norm.RMSNorm: its own kernels and hand-written backward against values
// computed here by plain loops, against the same layer composed of core ops,
// and against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nnp/nnp.hpp>

namespace {

using nnp::Device;
using nnp::Dtype;
using nnp::Tensor;
using nnp::nn::Attrs;

nnp::nn::ModuleHandle rmsnorm(std::vector<int64_t> normalized, std::optional<double> eps = 1e-6) {
  Attrs attrs;
  attrs.set("normalized_shape", normalized);
  if (eps) attrs.set("eps", *eps);
  return nnp::nn::create_layer("norm.RMSNorm", attrs);
}

// y[r][j] = x[r][j] / sqrt(mean_j x[r][j]^2 + eps) * w[j], in plain loops.
std::vector<double> by_hand(const std::vector<double>& x, const std::vector<double>& w, double eps) {
  size_t width = w.size();
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / width; ++r) {
    double squares = 0;
    for (size_t j = 0; j < width; ++j) squares += x[r * width + j] * x[r * width + j];
    double inv = 1.0 / std::sqrt(squares / static_cast<double>(width) + eps);
    for (size_t j = 0; j < width; ++j) y[r * width + j] = x[r * width + j] * inv * w[j];
  }
  return y;
}

void set_weight(nnp::nn::ModuleHandle& layer, const Tensor& value) {
  nnp::NoGradGuard no_grad;  // a parameter is written in place as an optimizer does
  layer.get_parameter("weight").copy_(value);
}

std::vector<double> doubles(const Tensor& t) { return t.to(Dtype::f64).to_vector<double>(); }

void expect_near(const std::vector<double>& a, const std::vector<double>& b, double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tolerance * (1 + std::abs(b[i]))) << "at " << i;
}

struct Case {
  Tensor x, w, r;  // input, weight to set, and a random upstream gradient
};

Case random_case(Dtype dtype, const Device& device) {
  nnp::manual_seed(7);
  return {nnp::randn({3, 2, 5}, Dtype::f64).to(device, dtype), nnp::randn({2, 5}, Dtype::f64).to(device, dtype),
          nnp::randn({3, 2, 5}, Dtype::f64).to(device, dtype)};
}

TEST(RMSNorm, OwnKernelMatchesTheLoopsOnCpuAndReference) {
  for (const char* device : {"cpu", "reference"}) {
    for (Dtype dtype : {Dtype::f64, Dtype::f32}) {
      SCOPED_TRACE(std::string(device) + " " + nnp::dtype_name(dtype));
      Case c = random_case(dtype, Device(device));
      auto layer = rmsnorm({2, 5});
      layer.to(Device(device), dtype);
      set_weight(layer, c.w);
      Tensor y = layer(c.x);
      EXPECT_EQ(y.grad_fn_name(), "RMSNormBackward") << "the plugin's own kernel ran (the weight requires grad)";
      double tolerance = dtype == Dtype::f64 ? 1e-14 : 1e-6;
      expect_near(doubles(y), by_hand(doubles(c.x), doubles(c.w), 1e-6), tolerance);
      EXPECT_EQ(y.device(), Device(device));
      EXPECT_EQ(y.dtype(), dtype);
    }
  }
}

TEST(RMSNorm, HandWrittenBackwardMatchesTheComposedOps) {
  for (const char* device : {"cpu", "reference"}) {
    for (Dtype dtype : {Dtype::f64, Dtype::f32}) {
      SCOPED_TRACE(std::string(device) + " " + nnp::dtype_name(dtype));
      Case c = random_case(dtype, Device(device));
      auto layer = rmsnorm({2, 5});
      layer.to(Device(device), dtype);
      set_weight(layer, c.w);
      Tensor w = layer.get_parameter("weight");
      Tensor x = c.x.detach().requires_grad_();
      Tensor y = layer(x);
      EXPECT_EQ(y.grad_fn_name(), "RMSNormBackward") << "one node of the plugin's own";
      (y * c.r).sum().backward();

      // The same function from core ops, differentiated by the core.
      Tensor x2 = c.x.detach().requires_grad_();
      Tensor w2 = c.w.detach().requires_grad_();
      Tensor y2 = x2 * ((x2 * x2).mean({-1, -2}, true) + 1e-6).rsqrt() * w2;
      (y2 * c.r).sum().backward();

      double tolerance = dtype == Dtype::f64 ? 1e-12 : 2e-5;
      expect_near(doubles(x.grad()), doubles(x2.grad()), tolerance);
      expect_near(doubles(w.grad()), doubles(w2.grad()), tolerance);
    }
  }
}

TEST(RMSNorm, BackwardAgreesWithFiniteDifferences) {
  Case c = random_case(Dtype::f64, Device("cpu"));
  auto layer = rmsnorm({5}, 1e-3);
  layer.to(Dtype::f64);
  set_weight(layer, c.w.slice(0, 0, 1).reshape({5}));
  Tensor w = layer.get_parameter("weight");
  Tensor x = c.x.detach().requires_grad_();
  (layer(x) * c.r).sum().backward();
  std::vector<double> analytic_x = x.grad().to_vector<double>(), analytic_w = w.grad().to_vector<double>();

  auto loss = [&](const std::vector<double>& xs, const std::vector<double>& ws) {
    nnp::NoGradGuard no_grad;
    w.copy_(nnp::from_vector(ws));
    return (layer(nnp::from_vector(xs, {3, 2, 5})) * c.r).sum().item<double>();
  };
  std::vector<double> xs = c.x.to_vector<double>(), ws = w.to_vector<double>();
  const double h = 1e-6;
  int compared = 0;
  for (size_t i = 0; i < xs.size(); i += 3) {
    std::vector<double> up = xs, down = xs;
    up[i] += h;
    down[i] -= h;
    double numeric = (loss(up, ws) - loss(down, ws)) / (2 * h);
    EXPECT_NEAR(analytic_x[i], numeric, 1e-7 * (1 + std::abs(numeric))) << "d/dx[" << i << "]";
    ++compared;
  }
  for (size_t j = 0; j < ws.size(); ++j) {
    std::vector<double> up = ws, down = ws;
    up[j] += h;
    down[j] -= h;
    double numeric = (loss(xs, up) - loss(xs, down)) / (2 * h);
    EXPECT_NEAR(analytic_w[j], numeric, 1e-7 * (1 + std::abs(numeric))) << "d/dw[" << j << "]";
    ++compared;
  }
  EXPECT_EQ(compared, 15);
}

TEST(RMSNorm, DefaultEpsIsTheDtypesEpsilonAsInPyTorch) {
  auto layer = rmsnorm({4}, std::nullopt);
  EXPECT_EQ(layer.repr(), "RMSNorm((4,), eps=None, elementwise_affine=True)");
  // Values small enough that eps shows: mean square 1e-8 beside 1.19e-7.
  Tensor x = nnp::from_vector<float>({1e-4f, -1e-4f, 1e-4f, 1e-4f});
  double eps = std::numeric_limits<float>::epsilon();
  double expected = 1e-4 / std::sqrt(1e-8 + eps);
  std::vector<float> y = layer(x).to_vector<float>();
  EXPECT_NEAR(y[0], expected, 1e-6);
  EXPECT_NEAR(y[1], -expected, 1e-6);
  EXPECT_EQ(rmsnorm({2, 3}, 0.5).repr(), "RMSNorm((2, 3), eps=0.5, elementwise_affine=True)");
}

TEST(RMSNorm, StridedInputsAndNoAffine) {
  auto layer = nnp::nn::create_layer(
      "norm.RMSNorm", std::move(Attrs().set("normalized_shape", int64_t{3}).set("elementwise_affine", false)));
  EXPECT_TRUE(layer.named_parameters().empty());
  Tensor base = nnp::from_vector<double>({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor x = base.transpose(0, 1).detach().requires_grad_();  // [[1, 3, 5], [2, 4, 6]], not contiguous
  Tensor y = layer(x);
  expect_near(y.to_vector<double>(), by_hand({1, 3, 5, 2, 4, 6}, {1, 1, 1}, std::numeric_limits<double>::epsilon()),
              1e-14);
  y.sum().backward();
  // Without a weight the output of a row has norm sqrt(width) whatever its
  // scale, so the gradient of the sum is orthogonal to the row itself.
  std::vector<double> g = x.grad().to_vector<double>();
  EXPECT_NEAR(g[0] * 1 + g[1] * 3 + g[2] * 5, 0.0, 1e-12);
  EXPECT_NEAR(g[3] * 2 + g[4] * 4 + g[5] * 6, 0.0, 1e-12);
}

TEST(RMSNorm, OtherDtypesComposeCoreOps) {
  Case c = random_case(Dtype::f32, Device("cpu"));
  auto layer = rmsnorm({2, 5});
  layer.to(Dtype::f16);
  Tensor x = c.x.to(Dtype::f16).requires_grad_();
  Tensor y = layer(x);
  EXPECT_NE(y.grad_fn_name(), "RMSNormBackward");
  EXPECT_EQ(y.dtype(), Dtype::f16);
  expect_near(doubles(y), by_hand(doubles(c.x.to(Dtype::f16)), std::vector<double>(10, 1.0), 1e-6), 2e-3);
  y.sum().backward();
  EXPECT_EQ(x.grad().shape(), x.shape());
}

TEST(RMSNorm, BadInputIsRefusedNamingTheLayer) {
  try {
    rmsnorm({4})(nnp::zeros({2, 3}));
    FAIL() << "a [2, 3] input cannot be normalized over [4]";
  } catch (const nnp::Error& e) {
    EXPECT_EQ(e.status(), NNP_SHAPE_MISMATCH);
    EXPECT_NE(std::string(e.what()).find("normalized_shape [4] does not match the trailing dimensions of the input "
                                         "[2, 3]"),
              std::string::npos)
        << e.what();
  }
  try {
    nnp::nn::create_layer("norm.RMSNorm", std::move(Attrs().set("normalized_shape", int64_t{4}).set("eps", "tiny")));
    FAIL();
  } catch (const nnp::Error& e) {
    EXPECT_EQ(e.status(), NNP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("norm.RMSNorm: attribute 'eps' must be a float"), std::string::npos)
        << e.what();
  }
  try {
    nnp::nn::create_layer("norm.RMSNorm");
    FAIL();
  } catch (const nnp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("norm.RMSNorm: required attribute 'normalized_shape' (a list of ints)"),
              std::string::npos)
        << e.what();
  }
}

TEST(RMSNorm, TrainsInsideAModelSpec) {
  auto model = nnp::nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Linear", "in_features": 4, "out_features": 8},
      {"type": "norm.RMSNorm", "normalized_shape": [8]},
      {"type": "act.Swish"},
      {"type": "nn.Linear", "in_features": 8, "out_features": 1}]})");
  nnp::manual_seed(3);
  Tensor x = nnp::randn({32, 4});
  Tensor target = (x.slice(1, 0, 1) * 2.0 - x.slice(1, 1, 2)).tanh();
  nnp::optim::Optimizer adam("Adam", model.parameters(), std::move(Attrs().set("lr", 0.01)));
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    adam.zero_grad();
    Tensor diff = model(x) - target;
    Tensor loss = (diff * diff).mean();
    loss.backward();
    adam.step();
    (step == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, first / 10) << first << " -> " << last;
  bool has_norm_weight = false;
  for (const auto& [name, t] : model.state_dict()) has_norm_weight = has_norm_weight || name == "1.weight";
  EXPECT_TRUE(has_norm_weight);
}

}  // namespace

namespace {

TEST(RMSNorm, CudaKernelMatchesTheCpu) {
  std::string why = "the cuda backend is not loaded";
  bool usable = false;
  for (const nnp_backend_info& info : nnp::backends())
    if (std::string(info.name) == "cuda") {
      usable = info.device_count > 0;
      why = std::string("no CUDA device: ") + info.unavailable_reason;
    }
  if (!usable) GTEST_SKIP() << why;
  Device cuda("cuda:0");
  for (Dtype dtype : {Dtype::f64, Dtype::f32}) {
    Case c = random_case(dtype, Device("cpu"));
    auto run = [&](const Device& device) {
      auto layer = rmsnorm({2, 5});
      layer.to(device, dtype);
      set_weight(layer, c.w.to(device));
      Tensor x = c.x.to(device).detach().requires_grad_();
      Tensor y = layer(x);
      EXPECT_EQ(y.grad_fn_name(), "RMSNormBackward") << "the plugin's own kernel on " << device.name();
      (y * c.r.to(device)).sum().backward();
      return std::vector<std::vector<double>>{doubles(y.to(Device("cpu"))), doubles(x.grad().to(Device("cpu"))),
                                              doubles(layer.get_parameter("weight").grad().to(Device("cpu")))};
    };
    auto on_cpu = run(Device("cpu")), on_cuda = run(cuda);
    double tolerance = dtype == Dtype::f64 ? 1e-12 : 1e-5;
    for (size_t i = 0; i < on_cpu.size(); ++i) expect_near(on_cuda[i], on_cpu[i], tolerance);
  }
}

}  // namespace
