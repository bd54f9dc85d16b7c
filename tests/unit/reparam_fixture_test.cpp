// Pruning and parametrizations against PyTorch 1.13 (reparam_fixtures.py
// wrote the numbers): masks equal PyTorch's exactly, state dicts have its
// keys in its order and its values (so they load both ways), and the forward
// output and the gradient reaching the original agree.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/parametrizations.hpp>
#include <nnp/prune.hpp>

#include "test_support.hpp"

namespace {

using json = nlohmann::json;
using namespace nnp;
namespace prune = nnp::nn::utils::prune;
namespace parametrize = nnp::nn::utils::parametrize;
namespace parametrizations = nnp::nn::utils::parametrizations;

const json& reparam_fixtures() {
  static const json all = [] {
    std::ifstream in(NNP_REPARAM_FIXTURES);
    return json::parse(in);
  }();
  return all;
}

Shape shape_of(const json& j) { return j.get<std::vector<int64_t>>(); }
Tensor tensor_of(const json& values, const Shape& shape) {
  return from_vector(values.get<std::vector<double>>(), shape).to(Dtype::f32);
}

StateDict state_of(const json& entries) {
  StateDict out;
  for (const json& e : entries)
    out.emplace_back(e["key"].get<std::string>(), tensor_of(e["values"], shape_of(e["shape"])));
  return out;
}

void expect_values(const Tensor& got, const std::vector<double>& want, double tolerance, const std::string& what) {
  std::vector<double> values = got.to(Dtype::f64).contiguous().to_vector<double>();
  ASSERT_EQ(values.size(), want.size()) << what;
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(values[i], want[i], tolerance * (1 + std::fabs(want[i]))) << what << " element " << i;
}

// Keys in PyTorch's order, masks exactly, other values within tolerance.
void expect_state(const nn::ModuleHandle& m, const json& want, double tolerance) {
  StateDict got = m.state_dict();
  ASSERT_EQ(got.size(), want.size()) << m.repr();
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string key = want[i]["key"];
    EXPECT_EQ(got[i].first, key);
    EXPECT_EQ(got[i].second.shape(), shape_of(want[i]["shape"])) << key;
    const bool exact = key.size() >= 5 && key.compare(key.size() - 5, 5, "_mask") == 0;
    expect_values(got[i].second, want[i]["values"].get<std::vector<double>>(), exact ? 0.0 : tolerance, key);
  }
}

// JSON has no infinity: the fixtures write it "inf".
double norm_order(const json& n) { return n.is_string() ? std::stod(n.get<std::string>()) : n.get<double>(); }

nn::ModuleHandle make(const std::string& kind) {
  if (kind == "linear") return nn::Linear(6, 5);
  if (kind == "conv") return nn::Conv2d(nn::Conv2dOptions(3, 4, 3));
  return nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 4, 3));
}

// y.pow(2).sum().backward(), as the fixtures.
Tensor run(nn::ModuleHandle& m, const json& c) {
  Shape x_shape = c.contains("x_shape") ? shape_of(c["x_shape"]) : Shape{3, static_cast<int64_t>(c["x"].size() / 3)};
  Tensor y = m(tensor_of(c["x"], x_shape));
  y.pow(2.0).sum().backward();
  return y;
}

TEST(PruneFixtures, MasksStateDictsOutputsAndGradientsMatchPyTorch) {
  for (const json& c : reparam_fixtures()["prune"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    nn::ModuleHandle m = make(c["kind"]);
    m.load_state_dict(state_of(c["before"]));
    const Tensor held = m.get_parameter("weight");  // the layer's own tensor
    Tensor importance;
    if (c.contains("importance")) importance = tensor_of(c["importance"], held.shape());
    for (const json& step : c["steps"]) {
      const std::string method = step["method"];
      const auto amount = step["amount"].is_number_integer() ? prune::Amount(step["amount"].get<int64_t>())
                                                             : prune::Amount(step.value("amount", 0.0));
      if (method == "l1_unstructured")
        prune::l1_unstructured(m, "weight", amount, importance);
      else if (method == "ln_structured")
        prune::ln_structured(m, "weight", amount, norm_order(step["n"]), step["dim"].get<int64_t>(), importance);
      else if (method == "custom_from_mask")
        prune::custom_from_mask(m, "weight", tensor_of(step["mask"], held.shape()));
      else
        prune::identity(m, "weight");
    }
    EXPECT_TRUE(prune::is_pruned(m));
    Tensor y = run(m, c);
    expect_values(y, c["y"], 1e-5, "output");
    expect_state(m, c["after"], 1e-6);
    expect_values(m.get_parameter("weight_orig").grad(), c["grad_orig"], 1e-5, "weight_orig.grad");
    expect_values(m.get_parameter("bias").grad(), c["grad_bias"], 1e-5, "bias.grad");
    // The layer's tensor shows the pruned weight (PyTorch's module.weight).
    expect_values(held,
                  (m.get_parameter("weight_orig") * m.get_buffer("weight_mask")).to(Dtype::f64).to_vector<double>(),
                  0.0, "module.weight");
    prune::remove(m, "weight");
    EXPECT_FALSE(prune::is_pruned(m));
    expect_state(m, c["removed"], 1e-6);
    EXPECT_TRUE(m.get_parameter("weight").get() == held.get()) << "weight is the layer's tensor again";
  }
}

TEST(PruneFixtures, GlobalUnstructuredRanksEveryTensorTogether) {
  const json& c = reparam_fixtures()["global"][0];
  nn::ModuleHandle a = nn::Linear(6, 5), b = nn::Linear(5, 5);
  a.load_state_dict(state_of(c["before"][0]));
  b.load_state_dict(state_of(c["before"][1]));
  prune::l1_unstructured(b, "weight", 0.2);
  prune::global_unstructured({{a, "weight"}, {b, "weight"}, {a, "bias"}}, prune::Method::L1Unstructured, 0.35);
  expect_state(a, c["after"][0], 1e-6);
  expect_state(b, c["after"][1], 1e-6);
}

TEST(ParametrizeFixtures, SpectralNormPowerIterationOutputsAndGradients) {
  for (const json& c : reparam_fixtures()["spectral"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    nn::ModuleHandle m = make(c["kind"]);
    parametrizations::spectral_norm(m);
    EXPECT_EQ(m.type_name().rfind("Parametrized", 0), 0u) << m.type_name();
    m.train(c["mode"] == "train");
    // PyTorch's registered state (its random _u, _v) loads strictly.
    nn::IncompatibleKeys keys = m.load_state_dict(state_of(c["registered"]));
    EXPECT_TRUE(keys.missing_keys.empty() && keys.unexpected_keys.empty());
    expect_state(m, c["registered"], 0.0);
    Tensor y = run(m, c);
    expect_values(y, c["y"], 1e-5, "output");
    expect_state(m, c["after"], 1e-5);
    expect_values(m.get_parameter("parametrizations.weight.original").grad(), c["grad_original"], 1e-4,
                  "original.grad");
  }
}

// A parametrization of the test's own, as a user writes one.
// x.triu() + x.triu(1).t() of a square x.
struct Symmetric : nn::Module {
  Symmetric() : Module("Symmetric") {}
  Tensor forward(const Tensor& x) override {
    const int64_t n = x.size(0);
    std::vector<float> upper(static_cast<size_t>(n * n)), strict(upper.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        upper[static_cast<size_t>(i * n + j)] = j >= i ? 1.0f : 0.0f;
        strict[static_cast<size_t>(i * n + j)] = j > i ? 1.0f : 0.0f;
      }
    return x * from_vector(upper, {n, n}) + (x * from_vector(strict, {n, n})).t();
  }
};
struct Scale : nn::Module {
  Scale() : Module("Scale") {}
  Tensor forward(const Tensor& x) override { return x * 2.0; }
  std::vector<Tensor> right_inverse(const Tensor& y) override { return {y / 2.0}; }
};

TEST(ParametrizeFixtures, ChainedParametrizationsStoreAsPyTorchAndRemoveLeavingTheValue) {
  const json& c = reparam_fixtures()["custom"][0];
  nn::ModuleHandle m = nn::Linear(4, 4);
  m.load_state_dict(state_of(c["before"]));
  const Tensor held = m.get_parameter("weight");
  parametrize::register_parametrization(m, "weight", nn::make<Symmetric>());
  parametrize::register_parametrization(m, "weight", nn::make<Scale>());
  EXPECT_TRUE(parametrize::is_parametrized(m));
  EXPECT_TRUE(parametrize::is_parametrized(m, "weight"));
  EXPECT_FALSE(parametrize::is_parametrized(m, "bias"));
  EXPECT_EQ(parametrize::type_before_parametrizations(m), "Linear");
  expect_state(m, c["registered"], 0.0);
  EXPECT_EQ(m.repr(), c["repr"].get<std::string>());
  Tensor y = run(m, c);
  expect_values(y, c["y"], 1e-5, "output");
  expect_values(m.get_parameter("parametrizations.weight.original").grad(), c["grad_original"], 1e-5, "original.grad");
  expect_values(held, m.get_tensor("weight").to(Dtype::f64).to_vector<double>(), 0.0, "the layer's tensor");
  parametrize::remove_parametrizations(m, "weight", true);
  EXPECT_FALSE(parametrize::is_parametrized(m));
  EXPECT_EQ(m.type_name(), "Linear");
  expect_state(m, c["removed"], 1e-6);
  EXPECT_TRUE(m.get_parameter("weight").get() == held.get());
}

TEST(ParametrizeFixtures, AssignGoesThroughRightInverse) {
  const json& c = reparam_fixtures()["assign"][0];
  nn::ModuleHandle m = nn::Linear(4, 4);
  m.load_state_dict(state_of(c["before"]));
  parametrize::register_parametrization(m, "weight", nn::make<Scale>());
  expect_state(m, c["registered"], 1e-7);
  parametrize::set(m, "weight", eye(4) * 3.0);
  expect_state(m, c["assigned"], 0.0);
  parametrize::remove_parametrizations(m, "weight", false);
  expect_state(m, c["removed"], 0.0);
}

TEST(ParametrizeFixtures, WeightNormIsGTimesVOverItsNorm) {
  const json& c = reparam_fixtures()["weight_norm"][0];
  nn::ModuleHandle m = make("conv");
  m.load_state_dict(state_of(c["before"]));
  parametrizations::weight_norm(m, "weight", 0);
  StateDict state = m.state_dict();
  ASSERT_EQ(state.size(), 3u);
  EXPECT_EQ(state[1].first, "parametrizations.weight.original0");
  EXPECT_EQ(state[2].first, "parametrizations.weight.original1");
  EXPECT_EQ(state[1].second.shape(), shape_of(c["g_shape"]));
  expect_values(state[1].second, c["g"], 1e-6, "g");
  Tensor y = m(tensor_of(c["x"], shape_of(c["x_shape"])));
  expect_values(y, c["y"], 1e-5, "output");
  // A state dict of PyTorch 1.13's hook-based weight_norm (weight_g, weight_v) loads strictly.
  nn::IncompatibleKeys keys = m.load_state_dict(state_of(c["legacy_state"]));
  EXPECT_TRUE(keys.missing_keys.empty() && keys.unexpected_keys.empty());
  expect_values(m(tensor_of(c["x"], shape_of(c["x_shape"]))), c["legacy_y"], 1e-5, "output after the legacy load");
}

TEST(ParametrizeFixtures, OrthogonalMatchesPyTorch) {
  for (const json& c : reparam_fixtures()["orthogonal"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    nn::ModuleHandle m = nn::Linear(c["in"].get<int64_t>(), c["out"].get<int64_t>());
    m.load_state_dict(state_of(c["before"]));
    const std::string map = c["map"];
    parametrizations::orthogonal(m, "weight", map.empty() ? std::nullopt : std::optional<std::string>(map),
                                 c["trivialization"].get<bool>());
    const json& registered = c["registered"];
    // The weight's orthogonalization (base, or the reflectors) as PyTorch's,
    // except a base completed with random columns (a wide or tall matrix).
    if (c["in"] == c["out"] || !c["trivialization"].get<bool>()) expect_state(m, registered, 1e-5);
    // Orthonormal columns (or rows) at registration. (A step that moves the
    // householder map's diagonal off +-1 may zero a column, in PyTorch too.)
    Tensor w = m.get_tensor("weight").to(Dtype::f64);
    if (w.size(0) < w.size(1)) w = w.t();
    expect_values(w.t().matmul(w), eye(w.size(1), w.size(1), Dtype::f64).reshape({-1}).to_vector<double>(), 1e-5,
                  "Q^T Q");
    m.load_state_dict(state_of(c["moved"]));
    Tensor y = run(m, c);
    expect_values(y, c["y"], 1e-4, "output");
    expect_values(m.get_parameter("parametrizations.weight.original").grad(), c["grad_original"], 1e-3,
                  "original.grad");
  }
}

}  // namespace
