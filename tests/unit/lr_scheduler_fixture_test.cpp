// The learning-rate schedulers against PyTorch 1.13 (lr_scheduler_fixtures.py
// wrote the learning rates, and the momentum or beta1 a scheduler cycles, of
// two parameter groups after construction and after each step): each case
// builds the same scheduler by name and must give the same numbers within
// 1e-12 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>

#include "test_support.hpp"

namespace {

using json = nlohmann::json;
using namespace nnp;
namespace S = nnp::optim;

const json& fixtures() {
  static const json all = [] {
    std::ifstream in(NNP_LR_SCHEDULER_FIXTURES);
    return json::parse(in);
  }();
  return all;
}

// Two groups, lr 0.1 and 0.05, as the fixtures' optimizer.
S::Optimizer two_groups(const std::string& kind, std::vector<Tensor>& params, double momentum = -1) {
  params = {zeros({1}).requires_grad_(), zeros({1}).requires_grad_()};
  nn::Attrs first, second;
  first.set("lr", 0.1);
  second.set("lr", 0.05);
  if (momentum >= 0) {
    first.set("momentum", momentum);
    second.set("momentum", momentum);
  }
  S::Optimizer opt(kind, {params[0]}, first);
  opt.add_param_group({params[1]}, second);
  return opt;
}

struct Trace {
  std::vector<std::vector<double>> lr, momentum;
};

void record(const S::Optimizer& opt, const std::string& momentum, Trace& run) {
  run.lr.push_back({opt.get("lr", 0), opt.get("lr", 1)});
  if (!momentum.empty()) run.momentum.push_back({opt.get(momentum, 0), opt.get(momentum, 1)});
}

Trace run_steps(const S::Optimizer& opt, const std::function<void(int)>& step, const std::string& momentum = "") {
  Trace run;
  record(opt, momentum, run);
  for (int i = 0; i < fixtures()["steps"].get<int>(); ++i) {
    step(i);
    record(opt, momentum, run);
  }
  return run;
}

void expect_rows(const std::vector<std::vector<double>>& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    for (size_t g = 0; g < 2; ++g) {
      const double w = want[i][g].get<double>();
      EXPECT_NEAR(got[i][g], w, 1e-12 * std::max(1.0, std::fabs(w))) << what << " after step " << i << ", group " << g;
    }
}

using Maker = std::function<Trace()>;

// A scheduler of `make` on the plain two-group SGD, stepped once per step.
template <typename Make>
Maker plain(Make make) {
  return [make] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params);
    auto scheduler = make(opt);
    return run_steps(opt, [&](int) { scheduler->step(); });
  };
}

std::map<std::string, Maker> makers() {
  using std::make_shared;
  std::map<std::string, Maker> m;
  m["lambda"] = plain([](S::Optimizer& o) {
    return make_shared<S::LambdaLR>(o, [](int64_t e) { return std::pow(0.95, static_cast<double>(e)); });
  });
  m["lambda_per_group"] = plain([](S::Optimizer& o) {
    return make_shared<S::LambdaLR>(
        o, std::vector<S::LambdaLR::Lambda>{[](int64_t e) { return 1.0 / static_cast<double>(e + 1); },
                                            [](int64_t e) { return std::pow(0.9, static_cast<double>(e)); }});
  });
  m["multiplicative"] =
      plain([](S::Optimizer& o) { return make_shared<S::MultiplicativeLR>(o, [](int64_t) { return 0.9; }); });
  m["step"] = plain([](S::Optimizer& o) { return make_shared<S::StepLR>(o, 3, 0.5); });
  m["multi_step"] = plain([](S::Optimizer& o) {
    return make_shared<S::MultiStepLR>(o, std::vector<int64_t>{2, 5, 5, 9}, 0.5);
  });
  m["constant"] = plain([](S::Optimizer& o) { return make_shared<S::ConstantLR>(o, 0.25, 4); });
  m["linear"] = plain([](S::Optimizer& o) { return make_shared<S::LinearLR>(o, 0.2, 0.9, 6); });
  m["exponential"] = plain([](S::Optimizer& o) { return make_shared<S::ExponentialLR>(o, 0.9); });
  m["polynomial"] = plain([](S::Optimizer& o) { return make_shared<S::PolynomialLR>(o, 8, 2.0); });
  m["cosine_annealing"] = plain([](S::Optimizer& o) { return make_shared<S::CosineAnnealingLR>(o, 5, 0.001); });
  m["sequential"] = plain([](S::Optimizer& o) {
    std::vector<std::shared_ptr<S::LRScheduler>> parts{make_shared<S::ConstantLR>(o, 0.5, 2),
                                                       make_shared<S::StepLR>(o, 2, 0.5),
                                                       make_shared<S::CosineAnnealingLR>(o, 4)};
    return make_shared<S::SequentialLR>(o, parts, std::vector<int64_t>{4, 10});
  });
  m["sequential_linear_exponential"] = plain([](S::Optimizer& o) {
    std::vector<std::shared_ptr<S::LRScheduler>> parts{make_shared<S::LinearLR>(o, 0.1, 1.0, 3),
                                                       make_shared<S::ExponentialLR>(o, 0.9)};
    return make_shared<S::SequentialLR>(o, parts, std::vector<int64_t>{3});
  });
  m["chained"] = plain([](S::Optimizer& o) {
    return make_shared<S::ChainedScheduler>(std::vector<std::shared_ptr<S::LRScheduler>>{
        make_shared<S::ConstantLR>(o, 0.5, 4), make_shared<S::ExponentialLR>(o, 0.9)});
  });
  m["cyclic_triangular2"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params, 0.9);
    S::CyclicLR s(opt, S::CyclicLROptions(0.01, 0.1).step_size_up(3).step_size_down(2).mode("triangular2"));
    return run_steps(
        opt, [&](int) { s.step(); }, "momentum");
  };
  m["cyclic_exp_range"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params);
    S::CyclicLR s(opt,
                  S::CyclicLROptions(0.01, 0.1).step_size_up(4).mode("exp_range").gamma(0.95).cycle_momentum(false));
    return run_steps(opt, [&](int) { s.step(); });
  };
  m["one_cycle"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params, 0.9);
    S::OneCycleLR s(opt, S::OneCycleLROptions(0.5).total_steps(fixtures()["steps"].get<int64_t>()));
    return run_steps(
        opt, [&](int) { s.step(); }, "momentum");
  };
  m["one_cycle_three_phase_adam"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("Adam", params);
    S::OneCycleLR s(opt,
                    S::OneCycleLROptions(0.3).epochs(3).steps_per_epoch(9).three_phase(true).anneal_strategy("linear"));
    return run_steps(
        opt, [&](int) { s.step(); }, "beta1");
  };
  m["warm_restarts"] =
      plain([](S::Optimizer& o) { return make_shared<S::CosineAnnealingWarmRestarts>(o, 3, 2, 0.001); });
  m["warm_restarts_fractional"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params);
    S::CosineAnnealingWarmRestarts s(opt, 4);
    return run_steps(opt, [&](int i) { s.step_epoch(1.5 + i * 0.75); });
  };
  m["plateau"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params);
    S::ReduceLROnPlateau s(
        opt, S::ReduceLROnPlateauOptions().factor(0.5).patience(2).threshold(0.1).cooldown(1).min_lr({0.01, 0.02}));
    return run_steps(opt, [&](int i) { s.step(fixtures()["metrics"][static_cast<size_t>(i)].get<double>()); });
  };
  m["plateau_max_abs"] = [] {
    std::vector<Tensor> params;
    S::Optimizer opt = two_groups("SGD", params);
    S::ReduceLROnPlateau s(
        opt, S::ReduceLROnPlateauOptions().mode("max").factor(0.3).patience(1).threshold(0.5).threshold_mode("abs"));
    return run_steps(opt, [&](int i) { s.step(-fixtures()["metrics"][static_cast<size_t>(i)].get<double>()); });
  };
  return m;
}

class LRSchedulerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(LRSchedulerFixture, MatchesPyTorch) {
  const json& want = fixtures()["cases"][GetParam()];
  const auto all = makers();
  auto maker = all.find(GetParam());
  ASSERT_NE(maker, all.end()) << "no C++ scheduler for the fixture case";
  const Trace got = maker->second();
  expect_rows(got.lr, want["lr"], "lr");
  if (!want["momentum"].is_null()) expect_rows(got.momentum, want["momentum"], "momentum");
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& [name, c] : fixtures()["cases"].items()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(PyTorch, LRSchedulerFixture, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(LRScheduler, EveryFixtureHasAMaker) { EXPECT_EQ(makers().size(), fixtures()["cases"].size()); }

TEST(LRScheduler, Errors) {
  std::vector<Tensor> params;
  S::Optimizer sgd = two_groups("SGD", params);
  test::expect_error([&] { S::ConstantLR(sgd, 1.5); }, NNP_INVALID_ARGUMENT, {"between 0 and 1"});
  test::expect_error([&] { S::LinearLR(sgd, 0.0); }, NNP_INVALID_ARGUMENT, {"Starting multiplicative factor"});
  test::expect_error([&] { S::ReduceLROnPlateau(sgd, S::ReduceLROnPlateauOptions().factor(1.0)); },
                     NNP_INVALID_ARGUMENT, {"Factor should be < 1.0"});
  test::expect_error([&] { S::OneCycleLR(sgd, S::OneCycleLROptions(0.1)); }, NNP_INVALID_ARGUMENT,
                     {"total_steps OR (epochs AND steps_per_epoch)"});
  // SGD without momentum still has the option (0): the cycle sets it, as PyTorch's does.
  std::vector<Tensor> adam_params;
  S::Optimizer adagrad("Adagrad", {zeros({1}).requires_grad_()});
  test::expect_error([&] { S::CyclicLR(adagrad, S::CyclicLROptions(0.01, 0.1)); }, NNP_INVALID_ARGUMENT,
                     {"must support momentum"});
  S::OneCycleLR once(sgd, S::OneCycleLROptions(0.1).total_steps(2));
  once.step();
  once.step();
  test::expect_error([&] { once.step(); }, NNP_INVALID_ARGUMENT, {"Tried to step 4 times", "total steps is 2"});
  test::expect_error([&] { S::LambdaLR(sgd, std::vector<S::LambdaLR::Lambda>(3, [](int64_t) { return 1.0; })); },
                     NNP_INVALID_ARGUMENT, {"Expected 2 lr_lambdas, but got 3"});
}

}  // namespace
