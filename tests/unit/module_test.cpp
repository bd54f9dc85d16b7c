// nn.Module behaviour, following the examples of PyTorch's modules note
// (MyLinear, Sequential, Net, BigNet, DynamicNet, RunningMean, hooks, the
// training loop), with the names, order and values PyTorch gives.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

namespace {

struct MyLinear : nn::Module {
  Tensor weight, bias;
  int64_t in, out;
  MyLinear(int64_t in_features, int64_t out_features) : Module("MyLinear"), in(in_features), out(out_features) {
    weight = register_parameter("weight", randn({in_features, out_features}));
    bias = register_parameter("bias", randn({out_features}));
  }
  Tensor forward(const Tensor& input) override { return input.matmul(weight) + bias; }
  std::string extra_repr() const override {
    return "in_features=" + std::to_string(in) + ", out_features=" + std::to_string(out);
  }
};

struct ReLU : nn::Module {
  ReLU() : Module("ReLU") {}
  Tensor forward(const Tensor& x) override { return x.relu(); }
};

struct LeakyReLU : nn::Module {
  LeakyReLU() : Module("LeakyReLU") {}
  Tensor forward(const Tensor& x) override { return where(x.gt(x.scalar_like(0)), x, x * 0.01); }
};

struct Net : nn::Module {
  std::shared_ptr<MyLinear> l0, l1;
  Net() : Module("Net") {
    l0 = register_module("l0", nn::make<MyLinear>(4, 3));
    l1 = register_module("l1", nn::make<MyLinear>(3, 1));
  }
  Tensor forward(const Tensor& x) override { return (*l1)((*l0)(x).relu()); }
};

struct BigNet : nn::Module {
  std::shared_ptr<MyLinear> l1;
  std::shared_ptr<Net> net;
  BigNet() : Module("BigNet") {
    l1 = register_module("l1", nn::make<MyLinear>(5, 4));
    net = register_module("net", nn::make<Net>());
  }
  Tensor forward(const Tensor& x) override { return (*net)((*l1)(x)); }
};

struct DynamicNet : nn::Module {
  nn::ModuleList linears;
  nn::ModuleDict activations;
  std::shared_ptr<MyLinear> final;
  explicit DynamicNet(int layers) : Module("DynamicNet") {
    for (int i = 0; i < layers; ++i) linears.push_back(nn::make<MyLinear>(4, 4));
    register_module("linears", linears);
    activations.insert("relu", nn::make<ReLU>());
    activations.insert("lrelu", nn::make<LeakyReLU>());
    register_module("activations", activations);
    final = register_module("final", nn::make<MyLinear>(4, 1));
  }
  // The note's forward(x, act): the activation chosen by name.
  Tensor forward(const Tensor& input, const std::string& act) {
    Tensor x = input;
    for (int i = 0; i < linears.size(); ++i) x = linears[i](x);
    x = activations[act](x);
    return (*final)(x);
  }
};

struct RunningMean : nn::Module {
  Tensor mean;
  double momentum;
  RunningMean(int64_t features, double m, bool persistent = true) : Module("RunningMean"), momentum(m) {
    mean = register_buffer("mean", zeros({features}), persistent);
  }
  Tensor forward(const Tensor& x) override {
    NoGradGuard no_grad;
    mean.copy_(mean * (1 - momentum) + x * momentum);
    return mean.clone();
  }
};

template <typename Pairs>
std::vector<std::string> first_names(const Pairs& pairs) {
  std::vector<std::string> out;
  for (const auto& p : pairs) out.push_back(p.first);
  return out;
}

}  // namespace

TEST(Module, MyLinearParametersAndForward) {
  auto m = nn::make<MyLinear>(4, 3);
  NamedTensors params = m->named_parameters();
  EXPECT_EQ(test::names_of(params), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(params[0].second.shape(), (Shape{4, 3}));
  EXPECT_TRUE(params[0].second.requires_grad());
  EXPECT_EQ(params[0].second.get(), m->weight.get());  // the same tensor, not a copy
  Tensor x = randn({4});
  Tensor y = (*m)(x);
  std::vector<float> expected = (x.matmul(m->weight) + m->bias).to_vector<float>();
  EXPECT_EQ(y.to_vector<float>(), expected);
  EXPECT_EQ(y.grad_fn_name(), "AddBackward");
  EXPECT_EQ(m->repr(), "MyLinear(in_features=4, out_features=3)");
}

TEST(Module, SequentialChainsItsModules) {
  nn::Sequential net{nn::make<MyLinear>(4, 3), nn::make<ReLU>(), nn::make<MyLinear>(3, 1)};
  Tensor y = net(randn({4}));
  EXPECT_EQ(y.shape(), (Shape{1}));
  EXPECT_EQ(first_names(net.named_children()), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(test::names_of(net.named_parameters()), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(net.repr(),
            "Sequential(\n  (0): MyLinear(in_features=4, out_features=3)\n  (1): ReLU()\n"
            "  (2): MyLinear(in_features=3, out_features=1)\n)");
  // Sequential's forward is the composition of its children's.
  Tensor x = randn({2, 4});
  Tensor manual = net[2](net[1](net[0](x)));
  EXPECT_EQ(net(x).to_vector<float>(), manual.to_vector<float>());
}

TEST(Module, NetChildrenAndPrint) {
  auto net = nn::make<Net>();
  EXPECT_EQ(first_names(net->named_children()), (std::vector<std::string>{"l0", "l1"}));
  EXPECT_EQ(
      net->repr(),
      "Net(\n  (l0): MyLinear(in_features=4, out_features=3)\n  (l1): MyLinear(in_features=3, out_features=1)\n)");
  EXPECT_EQ((*net)(randn({4})).shape(), (Shape{1}));
}

// A plugin's extra_repr and the names a model file gives are strangers'
// text: printing a module keeps its lines and escapes every other byte
// outside printable ASCII, so no control byte reaches a terminal.
struct Noisy : nn::Module {
  Noisy() : Module("Noisy") {}
  Tensor forward(const Tensor& x) override { return x; }
  std::string extra_repr() const override { return "bell\x07=1\n\x1b[2Jcleared"; }
};

struct HoldsNoisy : nn::Module {
  HoldsNoisy() : Module("Net") { register_module("child\x1b]0;title\x07", nn::make<Noisy>()); }
  Tensor forward(const Tensor& x) override { return x; }
};

TEST(Module, PrintingEscapesWhatPluginsAndFilesSaid) {
  HoldsNoisy net;
  EXPECT_EQ(net.repr(), "Net(\n  (child\\x1b]0;title\\x07): Noisy(\n    bell\\x07=1\n    \\x1b[2Jcleared\n  )\n)");
}

TEST(Module, BigNetNamedModulesArePreOrder) {
  auto big = nn::make<BigNet>();
  auto named = big->named_modules();
  EXPECT_EQ(first_names(named), (std::vector<std::string>{"", "l1", "net", "net.l0", "net.l1"}));
  EXPECT_EQ(named[0].second.type_name(), "BigNet");
  EXPECT_EQ(named[3].second.type_name(), "MyLinear");
  std::ostringstream printed;
  printed << *big;
  EXPECT_EQ(printed.str(),
            "BigNet(\n  (l1): MyLinear(in_features=5, out_features=4)\n  (net): Net(\n"
            "    (l0): MyLinear(in_features=4, out_features=3)\n    (l1): MyLinear(in_features=3, out_features=1)\n"
            "  )\n)");
  EXPECT_EQ(test::names_of(big->named_parameters()), (std::vector<std::string>{"l1.weight", "l1.bias", "net.l0.weight",
                                                                      "net.l0.bias", "net.l1.weight", "net.l1.bias"}));
  EXPECT_EQ((*big)(randn({5})).shape(), (Shape{1}));
}

TEST(Module, DynamicNetWithModuleListAndModuleDict) {
  auto net = nn::make<DynamicNet>(3);
  EXPECT_EQ(test::names_of(net->named_parameters()),
            (std::vector<std::string>{"linears.0.weight", "linears.0.bias", "linears.1.weight", "linears.1.bias",
                                      "linears.2.weight", "linears.2.bias", "final.weight", "final.bias"}));
  EXPECT_EQ(first_names(net->named_modules()),
            (std::vector<std::string>{"", "linears", "linears.0", "linears.1", "linears.2", "activations",
                                      "activations.relu", "activations.lrelu", "final"}));
  EXPECT_EQ(Tensor((*net)(randn({5, 4}), "relu")).shape(), (Shape{5, 1}));
  Tensor x = randn({4});
  Tensor leaky = (*net)(x, "lrelu");
  EXPECT_EQ(leaky.shape(), (Shape{1}));
  EXPECT_EQ(leaky.to_vector<float>(), net->forward(x, "lrelu").to_vector<float>());  // the direct call agrees
  expect_error([&] { (*net)(x, "tanh"); }, NNP_NOT_FOUND, {"ModuleDict has no submodule `tanh`"});
  expect_error([&] { net->linears(randn({4})); }, NNP_UNIMPLEMENTED, {"ModuleList", "container without forward"});
  // Changing precision of all parameters.
  net->to(Dtype::f64);
  for (const Tensor& p : net->parameters()) EXPECT_EQ(p.dtype(), Dtype::f64);
  Tensor y = (*net)(randn({4}, Dtype::f64), "relu");
  EXPECT_EQ(y.dtype(), Dtype::f64);
  EXPECT_EQ(y.grad_fn_name(), "AddBackward");
  net->to(Device("reference"));
  EXPECT_EQ(net->linears[0].get_parameter("weight").device().name(), "reference:0");
  EXPECT_EQ(Tensor((*net)(randn({4}, Dtype::f64, Device("reference")), "relu")).device().name(), "reference:0");
}

TEST(Module, RunningMeanBuffersAndStateDict) {
  auto m = nn::make<RunningMean>(4, 0.1);
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4});
  (*m)(x);
  EXPECT_EQ(m->mean.to_vector<float>(), (std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}));
  EXPECT_EQ(test::names_of(m->named_buffers()), (std::vector<std::string>{"mean"}));
  EXPECT_TRUE(m->named_parameters().empty());
  StateDict state = m->state_dict();
  ASSERT_EQ(test::names_of(state), (std::vector<std::string>{"mean"}));
  EXPECT_FALSE(state[0].second.requires_grad());
  auto loaded = nn::make<RunningMean>(4, 0.1);
  nn::IncompatibleKeys keys = loaded->load_state_dict(state);
  EXPECT_TRUE(keys.missing_keys.empty() && keys.unexpected_keys.empty());
  EXPECT_EQ(loaded->mean.to_vector<float>(), m->mean.to_vector<float>());
  // Through a file, as the note does with torch.save / torch.load.
  std::string path = ::testing::TempDir() + "running_mean.safetensors";
  m->save(path);
  auto from_file = nn::make<RunningMean>(4, 0.1);
  from_file->load(path);
  EXPECT_EQ(from_file->mean.to_vector<float>(), m->mean.to_vector<float>());
  std::remove(path.c_str());
  // A non-persistent buffer is a buffer but stays out of the state dict.
  auto transient = nn::make<RunningMean>(4, 0.1, false);
  EXPECT_EQ(test::names_of(transient->named_buffers()), (std::vector<std::string>{"mean"}));
  EXPECT_TRUE(transient->state_dict().empty());
}

TEST(Module, TrainingDrivesTheOutputToZero) {
  manual_seed(0);
  auto net = nn::make<Net>();
  auto mean_abs_output = [&] {
    NoGradGuard no_grad;
    return (*net)(randn({200, 4})).abs().mean().item<float>();
  };
  float before = mean_abs_output();
  // SGD(lr=1e-4, weight_decay=1e-2, momentum=0.9), written out by hand.
  std::vector<Tensor> params = net->parameters();
  std::vector<Tensor> velocity;
  for (const Tensor& p : params) velocity.push_back(zeros(p.shape()));
  const double lr = 1e-4, weight_decay = 1e-2, momentum = 0.9;
  for (int step = 0; step < 10000; ++step) {
    Tensor loss = (*net)(randn({4})).abs().sum();
    net->zero_grad();
    loss.backward();
    NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor g = params[i].grad() + params[i] * weight_decay;
      velocity[i] = velocity[i] * momentum + g;
      params[i].copy_(params[i] - velocity[i] * lr);
    }
  }
  float after = mean_abs_output();
  EXPECT_LT(after, 0.1f * before) << "before " << before << ", after " << after;
  EXPECT_LT(after, 0.05f);
}

TEST(Module, ForwardHooksSeeAndReplaceInputsAndOutputs) {
  auto m = nn::make<MyLinear>(2, 2);
  std::vector<std::string> order;
  HookHandle pre = m->register_forward_pre_hook([&](nn::ModuleHandle& module, const std::vector<Tensor>& inputs) {
    order.push_back("pre:" + module.type_name());
    return std::optional<std::vector<Tensor>>(std::vector<Tensor>{inputs[0] * 2.0});
  });
  HookHandle first = m->register_forward_pre_hook(
      [&](nn::ModuleHandle&, const std::vector<Tensor>&) {
        order.push_back("prepended");
        return std::optional<std::vector<Tensor>>();
      },
      true);
  HookHandle post =
      m->register_forward_hook([&](nn::ModuleHandle&, const std::vector<Tensor>& inputs, const Tensor& out) {
        order.push_back("forward");
        EXPECT_EQ(inputs[0].to_vector<float>(), (std::vector<float>{2, 4}));  // the replaced input
        return out + 100.0;
      });
  Tensor x = from_vector(std::vector<float>{1, 2});
  Tensor y = (*m)(x);
  EXPECT_EQ(order, (std::vector<std::string>{"prepended", "pre:MyLinear", "forward"}));
  Tensor expected = (x * 2.0).matmul(m->weight) + m->bias + 100.0;
  EXPECT_EQ(y.to_vector<float>(), expected.to_vector<float>());
  pre.remove();
  post.remove();
  post.remove();  // idempotent
  EXPECT_EQ((*m)(x).to_vector<float>(), (x.matmul(m->weight) + m->bias).to_vector<float>());
  // Calling forward directly skips the hooks, as in PyTorch.
  order.clear();
  m->forward(x);
  EXPECT_TRUE(order.empty());
}

// A global hook of `kind` that appends each module's type name to `seen`.
HookHandle record_types_globally(nnp_module_hook_kind kind, std::vector<std::string>& seen) {
  auto trampoline = [](nnp_module* m, const nnp_tensor* const*, int32_t, const nnp_tensor* const*, int32_t,
                       nnp_tensor**, void* user_data) -> nnp_status {
    static_cast<std::vector<std::string>*>(user_data)->push_back(api().module_type_name(m));
    return NNP_OK;
  };
  nnp_hook_handle* raw = nullptr;
  check(api().register_global_module_hook(kind, trampoline, &seen, nullptr, &raw));
  return HookHandle(raw);
}

TEST(Module, GlobalForwardHooksRunForEveryModuleFirst) {
  auto net = nn::make<Net>();
  std::vector<std::string> seen;
  HookHandle global = record_types_globally(NNP_HOOK_FORWARD, seen);
  (*net)(randn({4}));
  EXPECT_EQ(seen, (std::vector<std::string>{"MyLinear", "MyLinear", "Net"}));
  global.remove();
  (*net)(randn({4}));
  EXPECT_EQ(seen.size(), 3u);
}

TEST(Module, FullBackwardHooksGetModuleGradInputAndGradOutput) {
  auto m = nn::make<MyLinear>(3, 2);
  Tensor x = randn({3}).requires_grad_();
  std::vector<Tensor> seen_in, seen_out;
  std::vector<std::string> order;
  HookHandle pre = m->register_full_backward_pre_hook([&](nn::ModuleHandle&, const std::vector<Tensor>& grad_out) {
    order.push_back("pre");
    return std::optional<std::vector<Tensor>>(std::vector<Tensor>{grad_out[0] * 2.0});  // doubles dL/dy
  });
  HookHandle hook = m->register_full_backward_hook(
      [&](nn::ModuleHandle& module, const std::vector<Tensor>& grad_in, const std::vector<Tensor>& grad_out) {
        order.push_back("hook:" + module.type_name());
        seen_in = grad_in;
        seen_out = grad_out;
        return std::optional<std::vector<Tensor>>();
      });
  Tensor y = (*m)(x);
  (y * from_vector(std::vector<float>{1, 10})).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"pre", "hook:MyLinear"}));
  ASSERT_EQ(seen_out.size(), 1u);
  EXPECT_EQ(seen_out[0].to_vector<float>(), (std::vector<float>{2, 20}));  // after the pre-hook
  ASSERT_EQ(seen_in.size(), 1u);
  Tensor expected = m->weight.detach().matmul(from_vector(std::vector<float>{2, 20}));
  std::vector<float> got = seen_in[0].to_vector<float>(), want = expected.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(x.grad().to_vector<float>()[i], want[i], 1e-5);
  // The bias sees the doubled output gradient too.
  EXPECT_EQ(m->bias.grad().to_vector<float>(), (std::vector<float>{2, 20}));

  // A backward hook may replace grad_input; with an input that needs no
  // grad, it gets none (PyTorch's None).
  hook.remove();
  pre.remove();
  HookHandle zeroing = m->register_full_backward_hook(
      [&](nn::ModuleHandle&, const std::vector<Tensor>& grad_in, const std::vector<Tensor>&) {
        seen_in = grad_in;
        if (!grad_in[0].defined()) return std::optional<std::vector<Tensor>>();
        return std::optional<std::vector<Tensor>>(std::vector<Tensor>{grad_in[0] * 0.0});
      });
  x.set_grad(Tensor());
  (*m)(x).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 0, 0}));
  (*m)(randn({3})).sum().backward();
  ASSERT_EQ(seen_in.size(), 1u);
  EXPECT_FALSE(seen_in[0].defined());
}

TEST(Module, GlobalBackwardHooksRunForEveryModule) {
  auto net = nn::make<Net>();
  std::vector<std::string> seen;
  HookHandle global = record_types_globally(NNP_HOOK_BACKWARD, seen);
  (*net)(randn({4})).sum().backward();
  EXPECT_EQ(seen, (std::vector<std::string>{"Net", "MyLinear", "MyLinear"}));  // outermost module first
  global.remove();
  (*net)(randn({4})).sum().backward();
  EXPECT_EQ(seen.size(), 3u);
}

TEST(Module, RegistrationRulesAndLookupErrors) {
  struct Probe : nn::Module {
    Probe() : Module("Probe") {}
    void add_param(const std::string& name, Tensor t) { register_parameter(name, t); }
    void add_buffer(const std::string& name, Tensor t) { register_buffer(name, t); }
    void add_module(const std::string& name, nn::ModuleHandle m) { register_module(name, m); }
  };
  auto p = nn::make<Probe>();
  expect_error([&] { p->add_param("", ones({1})); }, NNP_INVALID_ARGUMENT, {"can't be an empty string"});
  expect_error([&] { p->add_param("a.b", ones({1})); }, NNP_INVALID_ARGUMENT, {"can't contain \".\"", "a.b"});
  p->add_param("w", ones({2}));
  expect_error([&] { p->add_buffer("w", ones({1})); }, NNP_INVALID_ARGUMENT, {"attribute 'w' already exists"});
  expect_error([&] { p->add_param("i", ones({1}, Dtype::i64)); }, NNP_DTYPE_MISMATCH, {"floating-point"});
  expect_error([&] { p->add_param("computed", ones({1}).requires_grad_() * 2.0); }, NNP_INVALID_ARGUMENT,
               {"not a leaf"});
  p->add_param("empty_slot", Tensor());  // a name may hold nothing
  p->add_buffer("no_buffer", Tensor());
  EXPECT_EQ(test::names_of(p->named_parameters()), (std::vector<std::string>{"w"}));
  EXPECT_FALSE(p->get_parameter("empty_slot").defined());
  p->add_param("w", zeros({3}));  // re-registering the same kind replaces
  EXPECT_EQ(p->get_parameter("w").shape(), (Shape{3}));

  nn::Sequential outer, inner;
  outer.push_back(inner);
  expect_error([&] { inner.push_back(outer); }, NNP_INVALID_ARGUMENT, {"cycle"});
  expect_error([&] { outer.push_back(outer); }, NNP_INVALID_ARGUMENT, {"cycle"});

  auto big = nn::make<BigNet>();
  EXPECT_EQ(big->get_submodule("net.l0").type_name(), "MyLinear");
  EXPECT_EQ(big->get_parameter("net.l1.bias").shape(), (Shape{1}));
  expect_error([&] { big->get_submodule("net.l2"); }, NNP_NOT_FOUND, {"Net has no submodule `l2`"});
  expect_error([&] { big->get_parameter("net.l0.weigth"); }, NNP_NOT_FOUND, {"MyLinear has no attribute `weigth`"});
  expect_error([&] { big->get_buffer("net.l0.weight"); }, NNP_NOT_FOUND, {"is not a buffer"});
}

TEST(Module, SharedModulesAndTensorsAreListedOnce) {
  struct Tied : nn::Module {
    std::shared_ptr<MyLinear> shared;
    Tied() : Module("Tied") {
      shared = nn::make<MyLinear>(2, 2);
      register_module("a", shared);
      register_module("b", shared);
      register_parameter("alias", shared->weight);
    }
    Tensor forward(const Tensor& x) override { return x; }
  };
  auto tied = nn::make<Tied>();
  EXPECT_EQ(first_names(tied->named_modules()), (std::vector<std::string>{"", "a"}));
  EXPECT_EQ(first_names(tied->named_modules("", false)), (std::vector<std::string>{"", "a", "b"}));
  EXPECT_EQ(test::names_of(tied->named_parameters()), (std::vector<std::string>{"alias", "a.bias"}));
  EXPECT_EQ(first_names(tied->named_children()), (std::vector<std::string>{"a"}));
  EXPECT_EQ(test::names_of(tied->state_dict()), (std::vector<std::string>{"alias", "a.weight", "a.bias", "b.weight", "b.bias"}));
}

TEST(Module, ModesGradsApplyAndConversion) {
  auto big = nn::make<BigNet>();
  EXPECT_TRUE(big->is_training());
  big->eval();
  for (auto& m : big->modules()) EXPECT_FALSE(m.is_training());
  big->train();
  EXPECT_TRUE(big->net->l0->is_training());

  std::vector<std::string> visited;
  big->apply([&](nn::ModuleHandle& m) { visited.push_back(m.type_name()); });
  EXPECT_EQ(visited, (std::vector<std::string>{"MyLinear", "MyLinear", "MyLinear", "Net", "BigNet"}));

  (*big)(randn({5})).sum().backward();
  EXPECT_TRUE(big->l1->weight.grad().defined());
  big->zero_grad(false);
  EXPECT_EQ(big->l1->weight.grad().abs().sum().item<float>(), 0.0f);
  big->zero_grad();
  EXPECT_FALSE(big->l1->weight.grad().defined());
  big->requires_grad_(false);
  for (const Tensor& p : big->parameters()) EXPECT_FALSE(p.requires_grad());
  big->requires_grad_(true);

  // to() converts in place: handles held elsewhere see the new dtype.
  Tensor held = big->l1->weight;
  big->to_double();
  EXPECT_EQ(held.dtype(), Dtype::f64);
  EXPECT_TRUE(held.requires_grad());
  big->to(Device("reference"), Dtype::f32);
  EXPECT_EQ(held.device().name(), "reference:0");
  EXPECT_EQ(held.dtype(), Dtype::f32);
  big->to_empty(Device("cpu"));
  EXPECT_EQ(held.device().name(), "cpu:0");
  EXPECT_EQ(held.shape(), (Shape{5, 4}));
  expect_error([&] { big->to(Dtype::i64); }, NNP_DTYPE_MISMATCH, {"floating-point"});
  EXPECT_EQ(held.dtype(), Dtype::f32);  // nothing changed
}

TEST(Module, IntegerBuffersKeepTheirDtype) {
  struct Counter : nn::Module {
    Counter() : Module("Counter") {
      register_buffer("count", zeros({}, Dtype::i64));
      register_parameter("w", ones({2}));
    }
  };
  auto c = nn::make<Counter>();
  c->to(Dtype::f16);
  EXPECT_EQ(c->get_buffer("count").dtype(), Dtype::i64);
  EXPECT_EQ(c->get_parameter("w").dtype(), Dtype::f16);
}

TEST(Module, LoadStateDictIsStrictAndAllOrNothing) {
  auto source = nn::make<Net>();
  auto target = nn::make<Net>();
  StateDict state = source->state_dict();
  EXPECT_EQ(test::names_of(state), (std::vector<std::string>{"l0.weight", "l0.bias", "l1.weight", "l1.bias"}));
  std::vector<float> before = target->l0->weight.to_vector<float>();

  StateDict missing_one(state.begin(), state.end() - 1);
  missing_one.emplace_back("l2.weight", ones({1}));
  expect_error([&] { target->load_state_dict(missing_one); }, NNP_NOT_FOUND,
               {"missing key(s): \"l1.bias\"", "unexpected key(s): \"l2.weight\"", "Nothing was loaded"});
  EXPECT_EQ(target->l0->weight.to_vector<float>(), before);

  StateDict wrong_shape = state;
  wrong_shape[3].second = ones({7});
  expect_error([&] { target->load_state_dict(wrong_shape); }, NNP_SHAPE_MISMATCH,
               {"size mismatch for l1.bias", "[7]", "[1]"});
  EXPECT_EQ(target->l0->weight.to_vector<float>(), before);
  StateDict wrong_dtype = state;
  wrong_dtype[3].second = ones({1}, Dtype::i64);
  expect_error([&] { target->load_state_dict(wrong_dtype, false); }, NNP_DTYPE_MISMATCH, {"l1.bias", "i64"});
  EXPECT_EQ(target->l0->weight.to_vector<float>(), before);

  nn::IncompatibleKeys keys = target->load_state_dict(missing_one, false);
  EXPECT_EQ(keys.missing_keys, (std::vector<std::string>{"l1.bias"}));
  EXPECT_EQ(keys.unexpected_keys, (std::vector<std::string>{"l2.weight"}));
  EXPECT_EQ(target->l0->weight.to_vector<float>(), source->l0->weight.to_vector<float>());

  // The loaded values are copies; assign=true takes the tensors themselves.
  target->load_state_dict(state);
  EXPECT_NE(target->l0->weight.get(), state[0].second.get());
  auto assigned = nn::make<Net>();
  assigned->load_state_dict(source->state_dict(), true, true);
  EXPECT_EQ(assigned->get_parameter("l0.weight").to_vector<float>(), source->l0->weight.to_vector<float>());
  EXPECT_TRUE(assigned->get_parameter("l0.weight").requires_grad());
  // A state dict from another device loads onto this one.
  target->load_state_dict(nn::make<Net>()->state_dict());
  auto on_reference = nn::make<Net>();
  on_reference->to(Device("reference"));
  target->load_state_dict(on_reference->state_dict());
  EXPECT_EQ(target->l0->weight.device().name(), "cpu:0");
  EXPECT_EQ(target->l0->weight.to_vector<float>(), on_reference->l0->weight.to(Device("cpu")).to_vector<float>());
}

TEST(Module, ExtraStateTravelsWithTheStateDict) {
  struct Stepper : nn::Module {
    int64_t steps = 0;
    Stepper() : Module("Stepper") {}
    Tensor get_extra_state() const override { return from_vector(std::vector<int64_t>{steps}); }
    void set_extra_state(const Tensor& state) override { steps = state.to_vector<int64_t>()[0]; }
  };
  auto a = nn::make<Stepper>();
  a->steps = 41;
  StateDict state = a->state_dict();
  EXPECT_EQ(test::names_of(state), (std::vector<std::string>{"_extra_state"}));
  auto b = nn::make<Stepper>();
  b->load_state_dict(state);
  EXPECT_EQ(b->steps, 41);
  expect_error([&] { b->load_state_dict({}); }, NNP_NOT_FOUND, {"missing key(s): \"_extra_state\""});
}

TEST(Module, StateDictHooks) {
  auto m = nn::make<MyLinear>(2, 2);
  auto add_marker = [](nnp_module*, nnp_list* state, nnp_list*, const char* prefix, void*) -> nnp_status {
    nnp_tensor* marker = nullptr;
    int64_t shape[1] = {1};
    nnp_status s = api().full(shape, 1, 7.0, NNP_F32, nnp_device{0, 0}, &marker);
    if (s == NNP_OK) s = api().list_append_tensor(state, (std::string(prefix) + "marker").c_str(), marker);
    api().tensor_release(marker);
    return s;
  };
  nnp_hook_handle* raw = nullptr;
  check(api().register_state_hook(m->handle(), NNP_STATE_DICT_POST, add_marker, nullptr, nullptr, &raw));
  HookHandle post(raw);
  EXPECT_EQ(test::names_of(m->state_dict()), (std::vector<std::string>{"weight", "bias", "marker"}));
  auto drop_marker = [](nnp_module*, nnp_list* state, nnp_list*, const char* prefix, void*) -> nnp_status {
    int32_t at = api().list_find(state, (std::string(prefix) + "marker").c_str());
    return at >= 0 ? api().list_remove(state, at) : NNP_OK;
  };
  check(api().register_state_hook(m->handle(), NNP_LOAD_STATE_DICT_PRE, drop_marker, nullptr, nullptr, &raw));
  HookHandle pre(raw);
  m->load_state_dict(m->state_dict());  // strict: the pre-hook removed the unexpected key
  int post_calls = 0;
  auto count = [](nnp_module*, nnp_list*, nnp_list*, const char*, void* calls) -> nnp_status {
    ++*static_cast<int*>(calls);
    return NNP_OK;
  };
  check(api().register_state_hook(m->handle(), NNP_LOAD_STATE_DICT_POST, count, &post_calls, nullptr, &raw));
  HookHandle load_post(raw);
  m->load_state_dict(m->state_dict());
  EXPECT_EQ(post_calls, 1);
  post.remove();
  EXPECT_EQ(test::names_of(m->state_dict()), (std::vector<std::string>{"weight", "bias"}));
}

TEST(Module, ParameterContainers) {
  nn::ParameterList list;
  list.append(ones({2, 3}));
  list.append(zeros({4}));
  EXPECT_EQ(test::names_of(list.named_parameters()), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(list.repr(),
            "ParameterList(\n  (0): Parameter containing: [f32 of size 2x3]\n  (1): Parameter containing: [f32 of size "
            "4]\n)");
  nn::ParameterDict dict;
  dict.insert("scale", ones({1}));
  EXPECT_TRUE(dict["scale"].requires_grad());
  EXPECT_EQ(test::names_of(dict.state_dict()), (std::vector<std::string>{"scale"}));
}

TEST(Module, AModuleOutlivingItsCppObjectFailsCleanly) {
  nn::Sequential seq;
  {
    MyLinear on_stack(2, 2);  // not created with nn::make
    seq.push_back(nn::ModuleHandle::borrow(on_stack.handle()));
    EXPECT_EQ(seq(ones({2})).shape(), (Shape{2}));
  }
  expect_error([&] { seq(ones({2})); }, NNP_INVALID_ARGUMENT, {"MyLinear", "was destroyed"});
}
