// GradScaler (ABI 1.27): PyTorch 1.13's sequence of scales, skipped steps
// and state; its refusals; the unscale kernel against the composed one.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <nnp/grad_scaler.hpp>
#include <nnp/nnp.hpp>

#include "test_support.hpp"

namespace grad_scaler_test {

using namespace nnp;
using json = nlohmann::json;
using nnp::test::expect_error;
using nnp::test::floats;

std::vector<float> floats_of(const json& j) { return j.get<std::vector<float>>(); }

void put(Tensor& grad, int64_t flat_index, float value) {
  std::vector<float> v = floats(grad);
  v[static_cast<size_t>(flat_index)] = value;
  grad.copy_(from_vector(v, grad.shape()));
}

TEST(GradScalerFixtures, ScalesSkippedStepsAndStateEqualPyTorchs) {
  std::ifstream in(NNP_GRAD_SCALER_FIXTURES);
  ASSERT_TRUE(in) << NNP_GRAD_SCALER_FIXTURES;
  const json f = json::parse(in);
  Tensor w = from_vector(floats_of(f["w0"]), {2, 3}).requires_grad_();
  Tensor b = from_vector(floats_of(f["b0"]), {2}).requires_grad_();
  const Tensor x = from_vector(floats_of(f["x"]), {4, 3});
  optim::Optimizer opt("SGD", {w, b}, nn::Attrs().set("lr", f["lr"].get<double>()));
  amp::GradScaler scaler(f["init_scale"].get<double>(), f["growth_factor"].get<double>(),
                         f["backoff_factor"].get<double>(), f["growth_interval"].get<int64_t>());
  const std::vector<int64_t> manual = f["manual_unscale"].get<std::vector<int64_t>>();
  const json& history = f["history"];
  for (int64_t it = 0; it < static_cast<int64_t>(history.size()); ++it) {
    SCOPED_TRACE("iteration " + std::to_string(it));
    opt.zero_grad();
    Tensor y = x.matmul(w.t()) + b;
    Tensor loss = (y * y).mean();
    scaler.scale(loss).backward();
    if (f["inject"].contains(std::to_string(it))) {
      const json& what = f["inject"][std::to_string(it)];
      const std::string text = what[1].get<std::string>();
      const float value = text == "nan"   ? std::numeric_limits<float>::quiet_NaN()
                          : text == "inf" ? std::numeric_limits<float>::infinity()
                                          : -std::numeric_limits<float>::infinity();
      Tensor grad = what[0] == "w" ? w.grad() : b.grad();
      put(grad, 1, value);
    }
    if (std::find(manual.begin(), manual.end(), it) != manual.end()) scaler.unscale_(opt);
    const bool stepped = scaler.step(opt);
    scaler.update();
    const json& want = history[static_cast<size_t>(it)];
    EXPECT_EQ(stepped, want["stepped"].get<bool>());
    EXPECT_EQ(scaler.get_scale(), want["scale"].get<double>());
    EXPECT_EQ(scaler.state_dict().at("_growth_tracker"), want["growth_tracker"].get<double>());
    EXPECT_NEAR(loss.item<double>(), want["loss"].get<double>(), 1e-6);
  }
  test::expect_close(floats(w), floats_of(f["w"]), 1e-6);
  test::expect_close(floats(b), floats_of(f["b"]), 1e-6);
  const std::map<std::string, double> state = scaler.state_dict();
  for (const auto& [key, value] : f["state_dict"].items()) EXPECT_EQ(state.at(key), value.get<double>()) << key;
  EXPECT_EQ(state.size(), f["state_dict"].size());

  // A scaler loaded from that state carries on from it.
  amp::GradScaler restored;
  restored.load_state_dict(state);
  EXPECT_EQ(restored.state_dict(), state);
}

TEST(GradScaler, RefusesCallsOutOfOrder) {
  Tensor w = ones({2}).requires_grad_();
  optim::Optimizer opt("SGD", {w}, nn::Attrs().set("lr", 0.1));
  amp::GradScaler scaler;
  expect_error([&] { scaler.step(opt); }, NNP_INVALID_ARGUMENT, {"Attempted step but _scale is None"});
  expect_error([&] { scaler.update(); }, NNP_INVALID_ARGUMENT, {"Attempted update"});
  scaler.scale(w.sum()).backward();
  expect_error([&] { scaler.update(); }, NNP_INVALID_ARGUMENT, {"No inf checks were recorded prior to update."});
  scaler.unscale_(opt);
  EXPECT_EQ(floats(w.grad()), (std::vector<float>{1, 1}));  // 65536 / 65536
  expect_error([&] { scaler.unscale_(opt); }, NNP_INVALID_ARGUMENT, {"already been called on this optimizer"});
  EXPECT_TRUE(scaler.step(opt));
  expect_error([&] { scaler.step(opt); }, NNP_INVALID_ARGUMENT, {"step() has already been called"});
  expect_error([&] { scaler.unscale_(opt); }, NNP_INVALID_ARGUMENT, {"after step()"});
  scaler.update();
  EXPECT_EQ(scaler.state_dict().at("_growth_tracker"), 1.0);
  scaler.update(8.0);  // a new scale set directly
  EXPECT_EQ(scaler.get_scale(), 8.0);
  expect_error([] { amp::GradScaler bad(1.0, 0.5); }, NNP_INVALID_ARGUMENT, {"growth factor must be > 1.0"});
  expect_error([] { amp::GradScaler bad(1.0, 2.0, 1.5); }, NNP_INVALID_ARGUMENT, {"backoff factor must be < 1.0"});
  expect_error([&] { scaler.load_state_dict({}); }, NNP_INVALID_ARGUMENT, {"state dict is empty"});
}

TEST(GradScaler, RefusesF16Gradients) {
  Tensor w = ones({2}, Dtype::f16).requires_grad_();
  optim::Optimizer opt("SGD", {w}, nn::Attrs().set("lr", 0.1));
  amp::GradScaler scaler;
  scaler.scale(w.to(Dtype::f32).sum()).backward();
  expect_error([&] { scaler.unscale_(opt); }, NNP_DTYPE_MISMATCH, {"Attempting to unscale FP16 gradients"});
}

TEST(GradScaler, DisabledPassesEverythingThrough) {
  Tensor w = ones({2}).requires_grad_();
  optim::Optimizer opt("SGD", {w}, nn::Attrs().set("lr", 0.5));
  amp::GradScaler scaler(65536.0, 2.0, 0.5, 2000, false);
  Tensor loss = w.sum();
  EXPECT_EQ(scaler.scale(loss).get(), loss.get());
  loss.backward();
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
  EXPECT_EQ(floats(w), (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(scaler.get_scale(), 1.0);
  EXPECT_TRUE(scaler.state_dict().empty());
}

// The cpu backend's one-pass kernel and the core's composition (the
// reference backend has no unscale_check) give the same bits and the same
// verdict, for every position of a bad element and a clean gradient.
TEST(GradScaler, TheOnePassUnscaleEqualsTheComposedOne) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (Dtype dtype : {Dtype::f32, Dtype::f64}) {
    for (int64_t bad_at : {-1, 0, 15, 16, 37}) {
      for (float bad : {inf, -inf, nan}) {
        SCOPED_TRACE(std::to_string(bad_at) + " " + std::to_string(bad));
        std::vector<float> v(41);
        for (size_t i = 0; i < v.size(); ++i) v[i] = 0.37f * static_cast<float>(i) - 5.0f;
        if (bad_at >= 0) v[static_cast<size_t>(bad_at)] = bad;
        std::vector<float> results[2];
        float found[2];
        int k = 0;
        for (const char* device : {"cpu", "reference"}) {
          Tensor p = zeros({41}, dtype, Device(device)).requires_grad_();
          optim::Optimizer opt("SGD", {p}, nn::Attrs().set("lr", 0.1));
          (p * from_vector(v, {41}).to(dtype).to(Device(device))).sum().backward();
          Tensor found_inf = zeros({1}, Dtype::f32, Device(device));
          check(api().amp_unscale_grads(opt.get(), 1.0 / 1024, found_inf.get(), 0));
          results[k] = floats(p.grad());
          found[k++] = found_inf.item<float>();
        }
        EXPECT_EQ(found[0], bad_at >= 0 ? 1.0f : 0.0f);
        EXPECT_EQ(found[0], found[1]);
        for (size_t i = 0; i < v.size(); ++i) {
          if (std::isnan(results[1][i])) {
            EXPECT_TRUE(std::isnan(results[0][i])) << i;
          } else {
            EXPECT_EQ(results[0][i], results[1][i]) << i;
          }
        }
        if (bad_at != 0) EXPECT_EQ(results[0][0], -5.0f / 1024);
      }
    }
  }
}

}  // namespace grad_scaler_test
