// nnplug.activations against hand-computed values and derivatives.
#include "../activations/activations.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nnp/nnp.hpp>

namespace {

using nnp::Tensor;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST(Activations, SwishValuesAndGradient) {
  for (double beta : {1.0, 2.5}) {
    SCOPED_TRACE(beta);
    auto swish = nnp::nn::create_layer("act.Swish", std::move(nnp::nn::Attrs().set("beta", beta)));
    std::vector<double> xs{-3.0, -0.5, 0.0, 1.0, 4.0};
    Tensor x = nnp::from_vector(xs).requires_grad_();
    Tensor y = swish(x);
    y.sum().backward();
    std::vector<double> values = y.to_vector<double>(), grads = x.grad().to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) {
      double s = sigmoid(beta * xs[i]);
      EXPECT_NEAR(values[i], xs[i] * s, 1e-12);
      EXPECT_NEAR(grads[i], s + beta * xs[i] * s * (1 - s), 1e-12);
    }
  }
  EXPECT_EQ(nnp::nn::create_layer("act.Swish").repr(), "Swish(beta=1.0)");
}

TEST(Activations, MishValuesAndGradient) {
  auto mish = nnp::nn::create_layer("act.Mish");
  std::vector<double> xs{-30.0, -1.0, 0.0, 1.0, 30.0};
  Tensor x = nnp::from_vector(xs).requires_grad_();
  Tensor y = mish(x);
  y.sum().backward();
  std::vector<double> values = y.to_vector<double>(), grads = x.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    double sp = std::log1p(std::exp(xs[i])), t = std::tanh(sp);
    EXPECT_NEAR(values[i], xs[i] * t, 1e-12);
    // d/dx x tanh(softplus x) = tanh(sp) + x (1 - tanh^2(sp)) sigmoid(x)
    EXPECT_NEAR(grads[i], t + xs[i] * (1 - t * t) * sigmoid(xs[i]), 1e-12);
  }
  EXPECT_NEAR(values[3], 0.8650983882673103, 1e-15);
}

TEST(Activations, TypedHoldersBuildThePluginsLayers) {
  act::Swish swish(act::SwishOptions().beta(2.5));
  EXPECT_EQ(swish->options.beta(), 2.5);
  EXPECT_EQ(swish->repr(), "Swish(beta=2.5)");
  Tensor x = nnp::from_vector(std::vector<double>{-1.0, 0.5, 2.0});
  std::vector<double> typed = swish(x).to_vector<double>();
  std::vector<double> by_name =
      nnp::nn::create_layer("act.Swish", std::move(nnp::nn::Attrs().set("beta", 2.5)))(x).to_vector<double>();
  EXPECT_EQ(typed, by_name);
  nnp::nn::Sequential seq{act::Mish(), nnp::nn::Linear(3, 1)};
  EXPECT_EQ(seq[0].type_name(), "Mish");
}

}  // namespace
