// Pruning and parametrizations beyond the PyTorch fixtures: refusals that
// change nothing, a pruned layer used twice in one pass, training after
// pruning, moving a pruned module, cached(), and the C entries.
#include <gtest/gtest.h>

#include <cmath>
#include <nnp/nnp.hpp>
#include <nnp/optim.hpp>
#include <nnp/parametrizations.hpp>
#include <nnp/prune.hpp>

#include "test_support.hpp"

namespace {

using namespace nnp;
using nnp::test::expect_error;
namespace prune = nnp::nn::utils::prune;
namespace parametrize = nnp::nn::utils::parametrize;
namespace parametrizations = nnp::nn::utils::parametrizations;

void expect_close(const Tensor& got, const Tensor& want, double tolerance) {
  const std::vector<float> g = test::floats(got), w = test::floats(want);
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tolerance * (1 + std::fabs(w[i]))) << i;
}

std::vector<std::string> keys(const nn::ModuleHandle& m) {
  std::vector<std::string> out;
  for (const auto& [key, value] : m.state_dict()) out.push_back(key);
  return out;
}

TEST(Prune, RefusedSpecsChangeNothing) {
  nn::Linear fc(4, 3);
  const std::vector<std::string> before = keys(fc);
  expect_error([&] { prune::l1_unstructured(fc, "gamma", 0.5); }, NNP_INVALID_ARGUMENT,
               {"Linear has no parameter 'gamma'"});
  expect_error([&] { prune::l1_unstructured(fc, "weight", 1.5); }, NNP_INVALID_ARGUMENT,
               {"amount=1.5", "float in the range [0, 1] or a non-negative integer"});
  expect_error([&] { prune::l1_unstructured(fc, "weight", -1); }, NNP_INVALID_ARGUMENT, {"amount=-1"});
  expect_error([&] { prune::l1_unstructured(fc, "weight", 13); }, NNP_INVALID_ARGUMENT,
               {"amount=13 should be smaller than the number of parameters to prune=12"});
  expect_error([&] { prune::ln_structured(fc, "bias", 1, 2.0, 0); }, NNP_INVALID_ARGUMENT,
               {"structured pruning can only be applied to multidimensional tensors"});
  expect_error([&] { prune::ln_structured(fc, "weight", 1, 2.0, 2); }, NNP_INVALID_ARGUMENT, {"invalid dim 2"});
  expect_error(
      [&] {
        prune::l1_unstructured(fc, "weight", 0.5, ones({2, 2}));
      },
      NNP_INVALID_ARGUMENT, {"importance_scores should have the same shape"});
  expect_error([&] { prune::custom_from_mask(fc, "weight", ones({5})); }, NNP_INVALID_ARGUMENT,
               {"the mask has 5 elements"});
  expect_error([&] { prune::remove(fc, "weight"); }, NNP_INVALID_ARGUMENT,
               {"has to be pruned before pruning can be removed"});
  expect_error([&] { prune::ln_structured(fc, "weight", 1, "nuc", 0); }, NNP_INVALID_ARGUMENT, {"'nuc'"});
  EXPECT_EQ(keys(fc), before);
  EXPECT_FALSE(prune::is_pruned(fc));
  // A refusal on an already pruned tensor keeps its mask and hook.
  prune::l1_unstructured(fc, "weight", 3);
  const std::vector<float> mask = fc->named_buffers()[0].second.to_vector<float>();
  expect_error([&] { prune::l1_unstructured(fc, "weight", 10); }, NNP_INVALID_ARGUMENT, {"amount=10"});
  EXPECT_EQ(fc->named_buffers()[0].second.to_vector<float>(), mask);
  EXPECT_TRUE(prune::is_pruned(fc));
  expect_error([&] { prune::l1_unstructured(fc, "weight_mask", 0.5); }, NNP_INVALID_ARGUMENT,
               {"no parameter 'weight_mask'", "only parameters can be pruned"});
}

TEST(Prune, ALayerUsedTwiceInOnePassGetsBothGradients) {
  nn::Linear fc(3, 3);
  prune::l1_unstructured(fc, "weight", 4);
  const Tensor x = randn({2, 3});
  Tensor y = fc(fc(x));
  y.sum().backward();
  // The same pass by hand, with weight = orig * mask as a leaf.
  const Tensor orig = fc->get_parameter("weight_orig");
  const Tensor mask = fc->get_buffer("weight_mask");
  Tensor w = (orig * mask).detach().requires_grad_();
  Tensor b = fc->bias.detach();
  auto lin = [&](const Tensor& in) { return in.matmul(w.t()) + b; };
  lin(lin(x)).sum().backward();
  expect_close(orig.grad(), w.grad() * mask, 1e-6);
  EXPECT_EQ((orig.grad() * (1.0 - mask)).abs().sum().item<float>(), 0.0f) << "pruned entries get no gradient";
}

TEST(Prune, TrainingKeepsPrunedEntriesAtZeroAndMovesWithTheModule) {
  nn::Sequential net({nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 2)});
  nn::ModuleHandle first = net[0];
  prune::l1_unstructured(first, "weight", 0.5);
  optim::SGD opt(net.parameters(), optim::SGDOptions(0.1));
  const Tensor x = randn({16, 4}), target = randn({16, 2});
  for (int step = 0; step < 3; ++step) {
    opt.zero_grad();
    nn::functional::mse_loss(net(x), target).backward();
    opt.step();
  }
  net(x);
  const Tensor weight = first.get_tensor("weight"), mask = first.get_buffer("weight_mask");
  EXPECT_EQ((weight * (1.0 - mask)).abs().sum().item<float>(), 0.0f);
  expect_close(weight, first.get_parameter("weight_orig") * mask, 0.0);
  net.to(Dtype::f64);
  Tensor y = net(x.to(Dtype::f64));
  EXPECT_EQ(y.dtype(), Dtype::f64);
  EXPECT_EQ(first.get_tensor("weight").dtype(), Dtype::f64);
}

struct Counting : nn::Module {
  int calls = 0;
  Counting() : Module("Counting") {}
  Tensor forward(const Tensor& x) override {
    ++calls;
    return x * 1.0;
  }
};

TEST(Parametrize, RefusalsChangeNothing) {
  nn::Linear fc(4, 3);
  const Tensor weight = fc->weight;
  struct Grow : nn::Module {
    Grow() : Module("Grow") {}
    Tensor forward(const Tensor& x) override { return cat({x, x}, 0); }
  };
  expect_error([&] { parametrize::register_parametrization(fc, "weight", nn::make<Grow>()); }, NNP_INVALID_ARGUMENT,
               {"may not change the shape", "unparametrized shape: [3,4]", "parametrized shape: [6,4]"});
  expect_error([&] { parametrize::register_parametrization(fc, "gamma", nn::make<Counting>()); }, NNP_INVALID_ARGUMENT,
               {"does not have a parameter, a buffer, or a parametrized element with name 'gamma'"});
  expect_error([&] { parametrize::remove_parametrizations(fc, "weight"); }, NNP_INVALID_ARGUMENT,
               {"does not have a parametrization on weight"});
  EXPECT_EQ(fc->type_name(), "Linear");
  EXPECT_EQ(keys(fc), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(fc->get_parameter("weight").get() == weight.get());
  EXPECT_TRUE(weight.requires_grad() && weight.is_leaf());
  // unsafe lets the shape change.
  parametrize::register_parametrization(fc, "weight", nn::make<Grow>(), true);
  EXPECT_EQ(fc->weight.shape(), (Shape{6, 4}));
  expect_error(
      [&] {
        parametrize::set(fc, "weight", ones({6, 4}));
      },
      NNP_INVALID_ARGUMENT, {"Grow does not implement right_inverse"});
}

TEST(Parametrize, CachedComputesOncePerScope) {
  nn::Linear fc(4, 3);
  auto counting = nn::make<Counting>();
  parametrize::register_parametrization(fc, "weight", counting);
  const int at_registration = counting->calls;
  fc->get_tensor("weight");
  fc->get_tensor("weight");
  EXPECT_EQ(counting->calls, at_registration + 2);
  {
    parametrize::cached scope;
    fc->get_tensor("weight");
    fc(randn({2, 4}));
    fc(randn({2, 4}));
    EXPECT_EQ(counting->calls, at_registration + 3);
  }
  fc(randn({2, 4}));
  EXPECT_EQ(counting->calls, at_registration + 4);
}

TEST(Parametrize, SpectralNormLeavesUnitSpectralNorm) {
  manual_seed(3);
  nn::Linear fc(8, 6);
  parametrizations::spectral_norm(fc, "weight", 1);
  for (int i = 0; i < 30; ++i) fc(randn({1, 8}));  // power iterations in training mode
  fc->eval();
  const Tensor w = fc->get_tensor("weight").to(Dtype::f64);
  // The largest singular value of w by power iteration on w^T w.
  Tensor v = ones({8, 1}, Dtype::f64);
  for (int i = 0; i < 500; ++i) {
    v = w.t().matmul(w.matmul(v));
    v = v / v.pow(2.0).sum().sqrt();
  }
  const double sigma = w.matmul(v).pow(2.0).sum().sqrt().item<double>();
  EXPECT_NEAR(sigma, 1.0, 1e-4);
  expect_error([&] { parametrizations::spectral_norm(fc, "bias", 0); }, NNP_INVALID_ARGUMENT,
               {"n_power_iterations to be positive"});
}

// MultiheadAttention reads out_proj's weight without calling out_proj, as
// PyTorch's does: a parametrized one is computed at each call all the same,
// so training steps keep working.
TEST(Parametrize, ParentReadingAChildsParametrizedWeightGetsItFresh) {
  nn::MultiheadAttention mha(8, 2);
  const Tensor x = randn({3, 2, 8});
  const Tensor before = std::get<0>(mha(x, x, x));
  nn::ModuleHandle out_proj = mha->get_submodule("out_proj");
  parametrizations::weight_norm(out_proj, "weight", 0);
  expect_close(std::get<0>(mha(x, x, x)), before, 1e-5);  // g * v / ||v|| is the weight it was
  optim::SGD opt(mha->parameters(), optim::SGDOptions(0.5));
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    std::get<0>(mha(x, x, x)).pow(2.0).sum().backward();
    opt.step();
  }
  const Tensor g = out_proj.get_parameter("parametrizations.weight.original0");
  ASSERT_TRUE(g.grad().defined());
  EXPECT_GT(g.grad().abs().sum().item<float>(), 0.0f);
  const Tensor after = std::get<0>(mha(x, x, x));
  EXPECT_GT((after - before).abs().sum().item<float>(), 1e-3f) << "the steps changed the output";
}

TEST(ReparamCApi, PruneAndParametrizeThroughTheTable) {
  const nnp_api& c = api();
  nn::Linear fc(4, 2);
  nnp_prune_spec spec{};
  spec.struct_size = sizeof(spec);
  spec.method = NNP_PRUNE_L1_UNSTRUCTURED;
  spec.amount_is_count = 1;
  spec.amount = 3;
  ASSERT_EQ(c.prune(fc->handle(), "weight", &spec), NNP_OK) << c.last_error();
  EXPECT_EQ(c.prune_is_pruned(fc->handle()), 1);
  EXPECT_EQ(fc->get_buffer("weight_mask").sum().item<float>(), 5.0f);
  spec.struct_size = 8;
  EXPECT_EQ(c.prune(fc->handle(), "weight", &spec), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(c.last_error()).find("struct_size 8 is too small"), std::string::npos);
  EXPECT_EQ(c.prune(fc->handle(), "weight", nullptr), NNP_INVALID_ARGUMENT);
  nnp_tensor* out = nullptr;
  ASSERT_EQ(c.module_get_tensor(fc->handle(), "weight", &out), NNP_OK);
  EXPECT_TRUE(out == fc->weight.get()) << "a pruned tensor is the layer's own";
  c.tensor_release(out);
  EXPECT_EQ(c.module_get_tensor(fc->handle(), "nothing", &out), NNP_NOT_FOUND);
  EXPECT_EQ(out, nullptr);
  ASSERT_EQ(c.prune_remove(fc->handle(), "weight"), NNP_OK);
  EXPECT_EQ(c.is_parametrized(fc->handle(), nullptr), 0);
  EXPECT_EQ(c.register_parametrization(fc->handle(), "weight", nullptr, 0), NNP_INVALID_ARGUMENT);
}

}  // namespace
