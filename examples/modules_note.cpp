// PyTorch's Modules note (the behaviour nnplug reproduces), its examples in
// nnplug's C++: a custom module, composition, dynamic forward(x, act),
// traversal, a training loop, modes, buffers and state dicts, hooks.
#include <cstdio>
#include <iostream>
#include <nnp/nnp.hpp>

namespace nn = nnp::nn;
namespace F = nnp::nn::functional;
using nnp::Tensor;

// A simple custom module: state (two parameters) and computation.
struct MyLinear : nn::Module {
  Tensor weight, bias;
  MyLinear(int64_t in_features, int64_t out_features) : Module("MyLinear") {
    weight = register_parameter("weight", nnp::randn({in_features, out_features}));
    bias = register_parameter("bias", nnp::randn({out_features}));
  }
  Tensor forward(const Tensor& input) override { return input.matmul(weight) + bias; }
};

// Modules made of modules.
struct Net : nn::Module {
  std::shared_ptr<MyLinear> l0, l1;
  Net() : Module("Net") {
    l0 = register_module("l0", nn::make<MyLinear>(4, 3));
    l1 = register_module("l1", nn::make<MyLinear>(3, 1));
  }
  Tensor forward(const Tensor& x) override { return (*l1)(F::relu((*l0)(x))); }
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

// Dynamic computation: a forward that takes the activation's name, with
// submodules in a ModuleList and a ModuleDict.
struct DynamicNet : nn::Module {
  nn::ModuleList linears;
  nn::ModuleDict activations;
  std::shared_ptr<MyLinear> final;
  explicit DynamicNet(int num_layers) : Module("DynamicNet") {
    for (int i = 0; i < num_layers; ++i) linears.push_back(nn::make<MyLinear>(4, 4));
    register_module("linears", linears);
    activations.insert("relu", nn::ReLU());
    activations.insert("lrelu", nn::LeakyReLU());
    register_module("activations", activations);
    final = register_module("final", nn::make<MyLinear>(4, 1));
  }
  Tensor forward(Tensor x, const std::string& act) {
    for (int i = 0; i < linears.size(); ++i) x = linears[i](x);
    x = activations[act](x);
    return (*final)(x);
  }
};

// A buffer: state in the state dict that is not learned.
struct RunningMean : nn::Module {
  double momentum;
  Tensor mean;
  explicit RunningMean(int64_t num_features, double momentum = 0.9) : Module("RunningMean"), momentum(momentum) {
    mean = register_buffer("mean", nnp::zeros({num_features}));
  }
  Tensor forward(const Tensor& x) override {
    mean.copy_(mean * momentum + x * (1.0 - momentum));
    return mean;
  }
};

std::string shape_of(const Tensor& t) {
  std::string text = "[";
  for (int64_t size : t.shape()) text += (text.size() > 1 ? ", " : "") + std::to_string(size);
  return text + "]";
}

int main() {
  nnp::manual_seed(1);
  auto m = nn::make<MyLinear>(4, 3);
  std::cout << "MyLinear on a sample input:\n" << (*m)(nnp::randn({4})) << "\n\n";

  nn::Sequential seq{nn::make<MyLinear>(4, 3), nn::ReLU(), nn::make<MyLinear>(3, 1)};
  std::cout << "Sequential:\n" << seq(nnp::randn({4})) << "\n\n";

  auto net = nn::make<Net>();
  for (auto& [name, child] : net->named_children()) std::cout << "child " << name << ": " << child.repr() << "\n";
  auto big_net = nn::make<BigNet>();
  for (auto& [name, module] : big_net->named_modules())
    std::cout << "module '" << name << "': " << module.repr() << "\n";
  for (auto& [name, p] : big_net->named_parameters()) std::cout << "parameter " << name << " " << shape_of(p) << "\n";

  auto dynamic_net = nn::make<DynamicNet>(3);
  Tensor sample_input = nnp::randn({4});
  Tensor output = (*dynamic_net)(sample_input, "relu");  // forward(x, act), through the hooks
  std::cout << "DynamicNet(sample_input, 'relu'): " << output << "\n";
  for (auto& [name, p] : dynamic_net->named_parameters()) std::cout << "dynamic parameter " << name << "\n";

  // Training: teach the network to output zero.
  nnp::optim::SGD optimizer(net->parameters(), nnp::optim::SGDOptions(1e-4).weight_decay(1e-2).momentum(0.9));
  for (int step = 0; step < 10000; ++step) {
    Tensor loss = (*net)(nnp::randn({4})).abs().sum();
    net->zero_grad();
    loss.backward();
    optimizer.step();
  }
  // Near zero, as in the note (a hidden unit that dies keeps its weight, so
  // this depends on the seed, in PyTorch too).
  std::cout << "\nnet.l1.weight after training (near zero):\n" << net->l1->weight << "\n";
  net->eval();
  std::cout << "training mode after eval(): " << std::boolalpha << net->is_training() << "\n\n";

  // Buffers are saved and loaded with the state dict.
  auto mean = nn::make<RunningMean>(4);
  for (int i = 0; i < 10; ++i) (*mean)(nnp::randn({4}));
  mean->save("mean.safetensors");
  auto loaded = nn::make<RunningMean>(4);
  loaded->load("mean.safetensors");
  std::cout << "state dict mean: " << mean->state_dict()[0].second << "\n";
  std::cout << "loaded equal: " << loaded->mean.eq(mean->mean).to(nnp::kInt64).sum().item<int64_t>() << " of 4\n\n";

  // Hooks: before and after forward, and on the gradients.
  auto hooked = nn::make<MyLinear>(3, 2);
  auto pre = hooked->register_forward_pre_hook([](nn::ModuleHandle&, const std::vector<Tensor>& inputs) {
    std::cout << "forward pre-hook sees an input of " << inputs[0].numel() << " values\n";
    return std::optional<std::vector<Tensor>>{{inputs[0] * 2.0}};  // doubles the input
  });
  auto post = hooked->register_forward_hook([](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor& output) {
    std::cout << "forward hook sees output " << output << "\n";
    return Tensor();  // keep the output
  });
  auto back = hooked->register_full_backward_hook(
      [](nn::ModuleHandle&, const std::vector<Tensor>& grad_input, const std::vector<Tensor>&) {
        std::cout << "backward hook: grad_input " << grad_input[0] << "\n";
        return std::optional<std::vector<Tensor>>{};
      });
  Tensor x = nnp::ones({3}).requires_grad_();
  (*hooked)(x).sum().backward();
  pre.remove();
  post.remove();
  back.remove();
  std::cout << "after remove(): " << (*hooked)(nnp::ones({3})) << "\n";
}
