// Optimizers: the first steps of each against PyTorch's update rules written
// out by hand, parameter groups, state dicts that resume exactly, gradient
// clipping and the schedulers.
#include <cmath>
#include <map>
#include <nnp/optimizer_algorithm.hpp>
#include <nnp/profiler.hpp>

#include "test_support.hpp"

using namespace nnp;
using nnp::nn::Attrs;
using nnp::test::expect_error;

namespace {

const std::vector<std::vector<double>> kGrads = {{0.5, -1.0}, {0.2, 0.3}, {-0.4, 0.1}};

// Runs an optimizer for kGrads.size() steps from p = {1, -2}; returns p after each.
std::vector<std::vector<double>> run(const std::string& kind, Attrs options) {
  Tensor p = from_vector(std::vector<double>{1.0, -2.0}).requires_grad_();
  optim::Optimizer opt(kind, {p}, options);
  std::vector<std::vector<double>> trace;
  for (const auto& g : kGrads) {
    p.set_grad(from_vector(g));
    opt.step();
    trace.push_back(p.to_vector<double>());
  }
  return trace;
}

void expect_trace(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s)
    for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(got[s][i], want[s][i], 1e-12) << "step " << s + 1 << " element " << i;
}

// The reference rules, per element, in double.
template <typename Rule>
std::vector<std::vector<double>> reference(Rule rule) {
  std::vector<double> p = {1.0, -2.0};
  std::vector<std::vector<double>> trace;
  for (size_t s = 0; s < kGrads.size(); ++s) {
    for (size_t i = 0; i < 2; ++i) rule(p[i], kGrads[s][i], static_cast<int>(s + 1), i);
    trace.push_back(p);
  }
  return trace;
}

}  // namespace

TEST(Optimizers, SgdWithMomentumDampeningNesterovWeightDecay) {
  expect_trace(run("SGD", std::move(Attrs().set("lr", 0.1))),
               reference([](double& p, double g, int, size_t) { p -= 0.1 * g; }));
  std::vector<double> buf(2);
  expect_trace(
      run("SGD",
          std::move(Attrs().set("lr", 0.1).set("momentum", 0.9).set("dampening", 0.1).set("weight_decay", 0.01))),
      reference([&](double& p, double g, int step, size_t i) {
        g += 0.01 * p;
        buf[i] = step == 1 ? g : 0.9 * buf[i] + 0.9 * g;
        p -= 0.1 * buf[i];
      }));
  std::vector<double> nbuf(2);
  expect_trace(run("SGD", std::move(Attrs().set("lr", 0.1).set("momentum", 0.9).set("nesterov", true))),
               reference([&](double& p, double g, int step, size_t i) {
                 nbuf[i] = step == 1 ? g : 0.9 * nbuf[i] + g;
                 p -= 0.1 * (g + 0.9 * nbuf[i]);
               }));
}

TEST(Optimizers, AdamAndAdamW) {
  auto adam_rule = [](double lr, double wd, bool decoupled, bool amsgrad) {
    auto m = std::make_shared<std::vector<double>>(2), v = std::make_shared<std::vector<double>>(2),
         vmax = std::make_shared<std::vector<double>>(2);
    return [=](double& p, double g, int step, size_t i) {
      if (decoupled)
        p *= 1 - lr * wd;
      else
        g += wd * p;
      (*m)[i] = 0.9 * (*m)[i] + 0.1 * g;
      (*v)[i] = 0.999 * (*v)[i] + 0.001 * g * g;
      double second = (*v)[i];
      if (amsgrad) second = (*vmax)[i] = std::max((*vmax)[i], (*v)[i]);
      double bias1 = 1 - std::pow(0.9, step), bias2 = 1 - std::pow(0.999, step);
      p -= lr / bias1 * (*m)[i] / (std::sqrt(second) / std::sqrt(bias2) + 1e-8);
    };
  };
  expect_trace(run("Adam", std::move(Attrs().set("lr", 0.01))), reference(adam_rule(0.01, 0, false, false)));
  expect_trace(run("Adam", std::move(Attrs().set("lr", 0.01).set("weight_decay", 0.1).set("amsgrad", true))),
               reference(adam_rule(0.01, 0.1, false, true)));
  expect_trace(run("AdamW", std::move(Attrs().set("lr", 0.01))), reference(adam_rule(0.01, 0.01, true, false)));
}

TEST(Optimizers, AdagradAdadeltaRmsprop) {
  std::vector<double> sum(2, 0.1);
  expect_trace(
      run("Adagrad", std::move(Attrs().set("lr", 0.1).set("lr_decay", 0.01).set("initial_accumulator_value", 0.1))),
      reference([&](double& p, double g, int step, size_t i) {
        double clr = 0.1 / (1 + (step - 1) * 0.01);
        sum[i] += g * g;
        p -= clr * g / (std::sqrt(sum[i]) + 1e-10);
      }));
  std::vector<double> sq(2), acc(2);
  expect_trace(run("Adadelta", std::move(Attrs().set("lr", 1.0))), reference([&](double& p, double g, int, size_t i) {
                 sq[i] = 0.9 * sq[i] + 0.1 * g * g;
                 double delta = std::sqrt(acc[i] + 1e-6) / std::sqrt(sq[i] + 1e-6) * g;
                 acc[i] = 0.9 * acc[i] + 0.1 * delta * delta;
                 p -= delta;
               }));
  std::vector<double> square(2), avg_g(2), mom(2);
  expect_trace(run("RMSprop", std::move(Attrs().set("lr", 0.01).set("momentum", 0.5).set("centered", true))),
               reference([&](double& p, double g, int, size_t i) {
                 square[i] = 0.99 * square[i] + 0.01 * g * g;
                 avg_g[i] = 0.99 * avg_g[i] + 0.01 * g;
                 double avg = std::sqrt(square[i] - avg_g[i] * avg_g[i]) + 1e-8;
                 mom[i] = 0.5 * mom[i] + g / avg;
                 p -= 0.01 * mom[i];
               }));
}

TEST(Optimizers, ParameterGroupsAndZeroGrad) {
  Tensor a = ones({2}).requires_grad_(), b = ones({2}).requires_grad_();
  optim::Optimizer opt("SGD", {a}, std::move(Attrs().set("lr", 0.1)));
  opt.add_param_group({b}, std::move(Attrs().set("lr", 0.5)));
  EXPECT_EQ(opt.group_count(), 2);
  EXPECT_DOUBLE_EQ(opt.get("lr", 1), 0.5);
  (a.sum() + b.sum()).backward();
  opt.step();
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0.9f, 0.9f}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0.5f, 0.5f}));
  opt.zero_grad(false);
  EXPECT_EQ(a.grad().sum().item<float>(), 0.0f);
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  opt.step();  // parameters without gradients are skipped
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{0.9f, 0.9f}));
  expect_error([&] { opt.add_param_group({a}); }, NNP_INVALID_ARGUMENT, {"more than one parameter group"});
}

TEST(Optimizers, StateDictResumesExactly) {
  auto train = [](optim::Optimizer& opt, Tensor& p, int from, int to) {
    for (int s = from; s < to; ++s) {
      p.set_grad(from_vector(std::vector<double>{std::sin(s), std::cos(s)}));
      opt.step();
    }
  };
  Tensor straight = from_vector(std::vector<double>{1, 2}).requires_grad_();
  optim::Optimizer a("Adam", {straight}, std::move(Attrs().set("lr", 0.05)));
  train(a, straight, 0, 10);

  Tensor first = from_vector(std::vector<double>{1, 2}).requires_grad_();
  optim::Optimizer b("Adam", {first}, std::move(Attrs().set("lr", 0.05)));
  train(b, first, 0, 4);
  StateDict state = b.state_dict();
  std::vector<std::string> keys;
  for (const auto& [k, t] : state) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"state.0.exp_avg", "state.0.exp_avg_sq", "state.0.step",
                                            "param_groups.0.amsgrad", "param_groups.0.beta1", "param_groups.0.beta2",
                                            "param_groups.0.eps", "param_groups.0.lr", "param_groups.0.maximize",
                                            "param_groups.0.weight_decay", "param_groups.0.params"}));
  // A new optimizer (as after a restart) continues from the saved state.
  Tensor resumed = first.detach().clone().requires_grad_();
  optim::Optimizer c("Adam", {resumed}, std::move(Attrs().set("lr", 0.999)));
  c.load_state_dict(state);
  EXPECT_DOUBLE_EQ(c.get("lr"), 0.05);
  train(c, resumed, 4, 10);
  EXPECT_EQ(resumed.to_vector<double>(), straight.to_vector<double>());

  StateDict wrong = state;
  wrong[0].second = zeros({3}, Dtype::f64);
  expect_error([&] { c.load_state_dict(wrong); }, NNP_SHAPE_MISMATCH, {"state.0.exp_avg"});
}

TEST(Optimizers, ClipGradNormAndSchedulers) {
  Tensor a = zeros({2}).requires_grad_(), b = zeros({1}).requires_grad_();
  a.set_grad(from_vector(std::vector<float>{3, 0}));
  b.set_grad(from_vector(std::vector<float>{4}));
  EXPECT_NEAR(optim::clip_grad_norm_({a, b}, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad().to_vector<float>()[0], 3.0f / 5, 1e-5);
  EXPECT_NEAR(b.grad().item<float>(), 4.0f / 5, 1e-5);
  EXPECT_NEAR(optim::clip_grad_norm_({a, b}, 10.0, INFINITY), 0.8, 1e-5);  // already small: unchanged

  optim::Optimizer opt("SGD", {a}, std::move(Attrs().set("lr", 1.0)));
  optim::StepLR step_lr(opt, 2, 0.5);
  std::vector<double> lrs;
  for (int e = 0; e < 5; ++e) {
    step_lr.step();
    lrs.push_back(opt.get("lr"));
  }
  EXPECT_EQ(lrs, (std::vector<double>{1.0, 0.5, 0.5, 0.25, 0.25}));
  optim::Optimizer opt2("SGD", {b}, std::move(Attrs().set("lr", 0.1)));
  optim::CosineAnnealingLR cosine(opt2, 10, 0.0);
  for (int e = 0; e < 5; ++e) cosine.step();
  EXPECT_NEAR(opt2.get("lr"), 0.05, 1e-12);  // halfway
  for (int e = 0; e < 5; ++e) cosine.step();
  EXPECT_NEAR(opt2.get("lr"), 0.0, 1e-12);
}

TEST(Optimizers, Errors) {
  Tensor p = ones({1}).requires_grad_();
  expect_error([&] { optim::Optimizer("Sgd", {p}); }, NNP_NOT_FOUND, {"unknown optimizer 'Sgd'"});
  expect_error([&] { optim::Optimizer("SGD", {p}, std::move(Attrs().set("lrr", 0.1))); }, NNP_INVALID_ARGUMENT,
               {"unknown option 'lrr'", "lr"});
  expect_error([&] { optim::Optimizer("SGD", {p}, std::move(Attrs().set("lr", -1.0))); }, NNP_INVALID_ARGUMENT,
               {"invalid lr value"});
  expect_error([&] { optim::Optimizer("SGD", {p}, std::move(Attrs().set("nesterov", true))); }, NNP_INVALID_ARGUMENT,
               {"nesterov"});
  expect_error([&] { optim::Optimizer("Adam", {p}, std::move(Attrs().set("beta1", 1.0))); }, NNP_INVALID_ARGUMENT,
               {"beta1"});
  expect_error([&] { optim::Optimizer("SGD", {p * 2.0}); }, NNP_INVALID_ARGUMENT, {"non-leaf"});
  expect_error([&] { optim::Optimizer("SGD", {}); }, NNP_INVALID_ARGUMENT, {"empty parameter list"});
}

// Moving the module mid-training moves the optimizer state with it: the run
// continues exactly as if it had stayed (cpu and reference compute alike).
TEST(Optimizers, StateFollowsTheModuleAcrossDevicesAndDtypes) {
  auto train = [](bool move) {
    manual_seed(5);
    auto model = nn::create_layer("nn.Linear", Attrs().set("in_features", 3).set("out_features", 2));
    Tensor x = randn({4, 3}), y = randn({4, 2});
    optim::Optimizer adam("Adam", model.parameters(), std::move(Attrs().set("lr", 0.05)));
    for (int step = 0; step < 6; ++step) {
      if (move && step == 3) model.to(Device("reference"));
      if (move && step == 5) model.to(Dtype::f64);
      Tensor input = x.to(model.get_parameter("weight").device(), model.get_parameter("weight").dtype());
      Tensor target = y.to(input.device(), input.dtype());
      adam.zero_grad();
      Tensor d = model(input) - target;
      (d * d).mean().backward();
      adam.step();
    }
    Tensor w = model.get_parameter("weight");
    for (const auto& [name, t] : adam.state_dict())
      if (name.find("exp_avg") != std::string::npos) {
        EXPECT_EQ(t.device(), w.device()) << name;
        EXPECT_EQ(t.dtype(), w.dtype()) << name;
      }
    return w.to(Device("cpu"), Dtype::f64).to_vector<double>();
  };
  std::vector<double> stayed = train(false), moved = train(true);
  ASSERT_EQ(stayed.size(), moved.size());
  for (size_t i = 0; i < stayed.size(); ++i) EXPECT_NEAR(moved[i], stayed[i], 1e-5) << i;
}

// The typed optimizers are the named ones with their options: the same
// steps, PyTorch's defaults.
TEST(Optimizers, TypedOptimizersMatchTheNamedOnes) {
  auto run = [](auto make) {
    Tensor p = from_vector(std::vector<double>{1.0, -2.0, 3.0}).requires_grad_();
    auto opt = make(std::vector<Tensor>{p});
    for (int i = 0; i < 3; ++i) {
      opt.zero_grad();
      (p * p * p).sum().backward();
      opt.step();
    }
    return p.detach().to_vector<double>();
  };
  using nnp::nn::Attrs;
  using namespace nnp::optim;
  EXPECT_EQ(run([](auto ps) {
              return Adam(ps, AdamOptions(0.1).betas({0.8, 0.9}).amsgrad(true));
            }),
            run([](auto ps) {
              return Optimizer(
                  "Adam", ps,
                  std::move(Attrs().set("lr", 0.1).set("beta1", 0.8).set("beta2", 0.9).set("amsgrad", true)));
            }));
  EXPECT_EQ(run([](auto ps) { return SGD(ps, SGDOptions(0.01).momentum(0.9).nesterov(true)); }), run([](auto ps) {
              return Optimizer("SGD", ps,
                               std::move(Attrs().set("lr", 0.01).set("momentum", 0.9).set("nesterov", true)));
            }));
  EXPECT_EQ(run([](auto ps) { return RMSprop(ps, RMSpropOptions().centered(true).momentum(0.5)); }), run([](auto ps) {
              return Optimizer("RMSprop", ps, std::move(Attrs().set("centered", true).set("momentum", 0.5)));
            }));
  EXPECT_EQ(run([](auto ps) {
              return NAdam(ps, NAdamOptions(0.05).betas({0.8, 0.9}).momentum_decay(0.1));
            }),
            run([](auto ps) {
              return Optimizer(
                  "NAdam", ps,
                  std::move(Attrs().set("lr", 0.05).set("beta1", 0.8).set("beta2", 0.9).set("momentum_decay", 0.1)));
            }));
  EXPECT_EQ(run([](auto ps) {
              return Rprop(ps, RpropOptions(0.05).etas({0.4, 1.3}).step_sizes({0.01, 0.1}));
            }),
            run([](auto ps) {
              return Optimizer("Rprop", ps,
                               std::move(Attrs()
                                             .set("lr", 0.05)
                                             .set("etaminus", 0.4)
                                             .set("etaplus", 1.3)
                                             .set("step_size_min", 0.01)
                                             .set("step_size_max", 0.1)));
            }));
  Tensor p = zeros({2}).requires_grad_();
  EXPECT_DOUBLE_EQ(Adamax({p}).get("lr"), 2e-3);
  EXPECT_DOUBLE_EQ(RAdam({p}, RAdamOptions().weight_decay(0.1)).get("weight_decay"), 0.1);
  EXPECT_DOUBLE_EQ(ASGD({p}, ASGDOptions().t0(5)).get("t0"), 5);
  EXPECT_DOUBLE_EQ(AdamW({p}).get("weight_decay"), 1e-2);
  EXPECT_DOUBLE_EQ(Adagrad({p}).get("lr"), 1e-2);
  EXPECT_DOUBLE_EQ(Adadelta({p}, AdadeltaOptions().rho(0.5)).get("rho"), 0.5);
}

TEST(Optimizers, LBFGSMinimisesAQuadraticAndRefusesBadOptions) {
  // f(x) = sum(a * (x - c)^2): one strong-Wolfe LBFGS step of 20 iterations finds c.
  const Tensor a = from_vector(std::vector<double>{1, 10, 100}), c = from_vector(std::vector<double>{3, -2, 0.5});
  Tensor x = zeros({3}, Dtype::f64).requires_grad_();
  optim::LBFGS lbfgs({x}, optim::LBFGSOptions().line_search_fn("strong_wolfe"));
  const Tensor first = lbfgs.step([&] {
    lbfgs.zero_grad();
    Tensor d = x - c;
    Tensor f = (a * d * d).sum();
    f.backward();
    return f;
  });
  EXPECT_NEAR(first.item<double>(), 9 + 40 + 25, 1e-12);  // the loss at the start
  const std::vector<double> found = x.detach().to_vector<double>();
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(found[i], c.to_vector<double>()[i], 1e-6);
  EXPECT_GT(lbfgs.func_evals(), 1);
  expect_error([&] { optim::LBFGS({x}, optim::LBFGSOptions().line_search_fn("armijo")); }, NNP_INVALID_ARGUMENT,
               {"only 'strong_wolfe'"});
  expect_error([] { optim::LBFGS({}); }, NNP_INVALID_ARGUMENT, {"empty parameter list"});
}

// On cpu SGD takes the backend's one-pass sgd_step kernel (ABI 1.12); the
// reference backend has none and runs the elementwise ops. Both round each
// product and sum alike, so f32 parameters agree bit for bit.
TEST(Optimizers, SgdTakesTheFusedKernelAndMatchesTheElementwiseOpsBitForBit) {
  const Tensor start = randn({64, 100});
  std::vector<Tensor> grads;
  for (int i = 0; i < 3; ++i) grads.push_back(randn({64, 100}));
  auto train = [&](const Device& device, int* fused_steps) {
    Tensor p = start.clone().to(device).requires_grad_();
    optim::Optimizer opt(
        "SGD", {p},
        std::move(Attrs().set("lr", 0.05).set("momentum", 0.9).set("nesterov", true).set("weight_decay", 0.01)));
    profiler::Profiler recording;
    for (const Tensor& g : grads) {
      p.set_grad(g.to(device));
      opt.step();
    }
    *fused_steps = 0;
    for (const profiler::Event& e : recording.stop().events()) *fused_steps += e.name == "sgd_step";
    return p.to(Device("cpu")).to_vector<float>();
  };
  int cpu_fused = 0, reference_fused = 0;
  const std::vector<float> cpu = train(Device("cpu"), &cpu_fused);
  const std::vector<float> reference = train(Device("reference"), &reference_fused);
  EXPECT_EQ(cpu_fused, 3);
  EXPECT_EQ(reference_fused, 0);
  ASSERT_EQ(cpu.size(), reference.size());
  for (size_t i = 0; i < cpu.size(); ++i) ASSERT_EQ(cpu[i], reference[i]) << "element " << i;
}

// The cpu backend steps in place (NNP_BACKEND_SGD_IN_PLACE, ABI 1.13) once
// the momentum buffer exists, and from the first step without momentum:
// the parameter and the buffer keep their memory, and, as after any
// in-place write, a graph that saved the parameter before the step refuses
// to use it.
TEST(Optimizers, SgdOnCpuStepsInPlaceAndInvalidatesGraphsThatSavedTheParameter) {
  for (double momentum : {0.0, 0.9}) {
    SCOPED_TRACE("momentum " + std::to_string(momentum));
    Tensor w = randn({8, 5}).requires_grad_();
    optim::Optimizer opt("SGD", {w}, std::move(Attrs().set("lr", 0.1).set("momentum", momentum)));
    const Tensor x = randn({3, 8});
    auto loss = [&] { return x.matmul(w).sum() + (w * w).sum(); };  // w * w saves w for its backward
    loss().backward();
    opt.step();  // with momentum: creates the buffer (the first gradient), in new memory
    const Tensor first_grad = w.grad().clone();
    void* const memory = w.data_ptr();
    const Tensor before = w.detach().clone();
    opt.zero_grad();
    Tensor saved = loss();  // saves w for its backward
    saved.backward(ones({}), /*retain_graph=*/true);
    opt.step();
    EXPECT_EQ(w.data_ptr(), memory);
    const Tensor d = momentum != 0 ? first_grad * momentum + w.grad() : w.grad();
    const std::vector<float> got = w.detach().to_vector<float>(), want = (before + d * -0.1).to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
    test::expect_error([&] { saved.backward(); }, NNP_INVALID_ARGUMENT, {"modified by an inplace operation"});
  }
}

// The built-in kinds come from the library through the table: each listed
// with its options in PyTorch's names and defaults and its host numbers.
TEST(OptimizerAlgorithms, TheBuiltInKindsAreListedWithTheirOptions) {
  std::map<std::string, nnp_optimizer_algorithm> kinds;
  for (int32_t i = 0; i < api().optimizer_kind_count(); ++i) {
    nnp_optimizer_algorithm info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(api().optimizer_kind_info(i, &info), NNP_OK) << api().last_error();
    kinds[info.kind] = info;
  }
  for (const char* kind : {"SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "RMSprop", "Adamax", "NAdam", "RAdam",
                           "ASGD", "Rprop"})
    EXPECT_EQ(kinds.count(kind), 1u) << kind;
  const nnp_optimizer_algorithm& adamw = kinds.at("AdamW");
  std::map<std::string, double> defaults;
  for (int32_t i = 0; i < adamw.option_count; ++i) defaults[adamw.option_names[i]] = adamw.option_defaults[i];
  EXPECT_EQ(defaults, (std::map<std::string, double>{{"lr", 1e-3},
                                                     {"beta1", 0.9},
                                                     {"beta2", 0.999},
                                                     {"eps", 1e-8},
                                                     {"weight_decay", 1e-2},
                                                     {"amsgrad", 0},
                                                     {"maximize", 0}}));
  EXPECT_STREQ(adamw.host_state[0], "step");
  EXPECT_STREQ(kinds.at("NAdam").host_state[1], "mu_product");
  nnp_optimizer_algorithm info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(api().optimizer_kind_info(api().optimizer_kind_count(), &info), NNP_NOT_FOUND);
  EXPECT_EQ(api().optimizer_kind_info(0, nullptr), NNP_INVALID_ARGUMENT);
}

namespace {

// An application's rule that fails on demand: p - lr * g, counting steps.
bool g_fail_update = false;
bool g_wrong_shape = false;

optim::OptimizerAlgorithm counting_rule(const std::string& kind) {
  optim::OptimizerAlgorithm a;
  a.kind = kind;
  a.doc = "plain gradient descent that counts its steps (tests only)";
  a.options = {{"lr", 0.25}};
  a.host_state = {"count"};
  a.update = [](const optim::OptionValues& o, const Tensor& p, const Tensor& g, optim::OptimizerState& state) {
    if (g_fail_update) throw Error(NNP_OUT_OF_MEMORY, "no memory for the step (on purpose)");
    auto it = state.find("count");
    state["count"] = full({}, it == state.end() ? 1.0 : it->second.item<double>() + 1, Dtype::f64);
    state["velocity"] = g * o["lr"];
    return g_wrong_shape ? p.sum() : p - g * o["lr"];
  };
  return a;
}

}  // namespace

// An application registers its own rule: the core keeps groups, options,
// state and state dicts for it, and a step whose rule fails for any
// parameter (a throw, a result of the wrong shape) changes nothing.
TEST(OptimizerAlgorithms, AnApplicationsRuleStepsAllOrNothing) {
  optim::register_optimizer(nullptr, counting_rule("app.CountingGD"));
  Tensor a = from_vector(std::vector<double>{1.0, 2.0}).requires_grad_();
  Tensor b = from_vector(std::vector<double>{-1.0}).requires_grad_();
  optim::Optimizer opt("app.CountingGD", {a});
  opt.add_param_group({b}, std::move(Attrs().set("lr", 1.0)));
  a.set_grad(from_vector(std::vector<double>{4.0, -8.0}));
  b.set_grad(from_vector(std::vector<double>{0.5}));
  opt.step();
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{0.0, 4.0}));
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{-1.5}));
  EXPECT_EQ(opt.get("lr", 1), 1.0);

  for (bool* flaw : {&g_fail_update, &g_wrong_shape}) {
    *flaw = true;
    expect_error([&] { opt.step(); }, *flaw == g_fail_update ? NNP_OUT_OF_MEMORY : NNP_INTERNAL,
                 {"app.CountingGD"});
    *flaw = false;
    EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{0.0, 4.0}));
    EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{-1.5}));
  }
  // The state dict holds the rule's state by PyTorch's layout, and loading
  // it into a fresh optimizer resumes the count.
  const auto saved = opt.state_dict();
  std::map<std::string, double> scalars;
  for (const auto& [name, t] : saved)
    if (t.numel() == 1) scalars[name] = t.to(Dtype::f64).item<double>();
  EXPECT_EQ(scalars.at("state.0.count"), 1.0);
  EXPECT_EQ(scalars.at("state.1.count"), 1.0);
  EXPECT_EQ(scalars.at("state.1.velocity"), 0.5);
  EXPECT_EQ(scalars.at("param_groups.1.lr"), 1.0);
  optim::Optimizer resumed("app.CountingGD", {a});
  resumed.add_param_group({b});
  resumed.load_state_dict(saved);
  EXPECT_EQ(resumed.get("lr", 1), 1.0);
  resumed.step();
  for (const auto& [name, t] : resumed.state_dict())
    if (name == "state.0.count") EXPECT_EQ(t.item<double>(), 2.0);
}

// Registrations that break the rules are refused, naming the fix.
TEST(OptimizerAlgorithms, BadRegistrationsAreRefused) {
  expect_error([] { optim::register_optimizer(nullptr, counting_rule("CountingGD")); }, NNP_INVALID_ARGUMENT,
               {"'CountingGD' is not a valid optimizer kind", "<vendor>.<Name>"});
  expect_error([] { optim::register_optimizer(nullptr, counting_rule("SGD")); }, NNP_INVALID_ARGUMENT,
               {"not a valid optimizer kind"});
  optim::register_optimizer(nullptr, counting_rule("app.Twice"));
  expect_error([] { optim::register_optimizer(nullptr, counting_rule("app.Twice")); }, NNP_INVALID_ARGUMENT,
               {"'app.Twice' is already registered", "the application"});
  optim::OptimizerAlgorithm doubled = counting_rule("app.Doubled");
  doubled.options = {{"lr", 1}, {"lr", 2}};
  expect_error([&] { optim::register_optimizer(nullptr, doubled); }, NNP_INVALID_ARGUMENT, {"declares option 'lr' twice"});
  nnp_optimizer_algorithm c{};
  c.struct_size = 16;
  c.kind = "app.Small";
  EXPECT_EQ(api().register_optimizer(nullptr, &c), NNP_ABI_MISMATCH);
  c.struct_size = sizeof c;
  EXPECT_EQ(api().register_optimizer(nullptr, &c), NNP_INVALID_ARGUMENT);  // no update function
  EXPECT_NE(std::string(api().last_error()).find("has no update function"), std::string::npos);
  EXPECT_EQ(api().register_optimizer(nullptr, nullptr), NNP_INVALID_ARGUMENT);
}

// sgd_step_fused, the built-in SGD's fast path, is anyone's: the cpu
// backend's kernel gives the composed step's values; the reference backend
// (no kernel) and f16 answer NULL with NNP_OK.
TEST(OptimizerAlgorithms, TheFusedSgdStepIsATableEntry) {
  const Tensor p = randn({5, 7}), g = randn({5, 7}), buffer = randn({5, 7});
  nnp_sgd_params params{};
  params.struct_size = sizeof params;
  params.lr = 0.1;
  params.momentum = 0.9;
  params.dampening = 0.0;
  params.weight_decay = 0.01;
  nnp_tensor* value = nullptr;
  nnp_tensor* new_buffer = nullptr;
  ASSERT_EQ(api().sgd_step_fused(p.get(), g.get(), buffer.get(), &params, &value, &new_buffer), NNP_OK)
      << api().last_error();
  const Tensor v = Tensor::adopt(value), b = Tensor::adopt(new_buffer);
  ASSERT_TRUE(v.defined() && b.defined());
  const Tensor want_buffer = buffer * 0.9 + (g + p * 0.01);
  const std::vector<float> got_b = b.to_vector<float>(), want_b = want_buffer.to_vector<float>();
  const std::vector<float> got_v = v.to_vector<float>(), want_v = (p - want_buffer * 0.1).to_vector<float>();
  for (size_t i = 0; i < got_v.size(); ++i) {
    EXPECT_NEAR(got_b[i], want_b[i], 1e-5) << "buffer element " << i;
    EXPECT_NEAR(got_v[i], want_v[i], 1e-5) << "value element " << i;
  }
  for (const Tensor& other : {p.to(Device("reference")), p.to(Dtype::f16)}) {
    value = reinterpret_cast<nnp_tensor*>(1);
    EXPECT_EQ(api().sgd_step_fused(other.get(), g.to(other.device(), other.dtype()).get(), nullptr, &params, &value,
                                   &new_buffer),
              NNP_OK);
    EXPECT_EQ(value, nullptr);
  }
  params.struct_size = 8;
  EXPECT_EQ(api().sgd_step_fused(p.get(), g.get(), nullptr, &params, &value, &new_buffer), NNP_INVALID_ARGUMENT);
  EXPECT_EQ(api().sgd_step_fused(p.get(), g.get(), nullptr, nullptr, &value, &new_buffer), NNP_INVALID_ARGUMENT);
}
