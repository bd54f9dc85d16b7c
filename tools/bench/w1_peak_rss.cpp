// W1's peak RSS (docs/benchmarks.md, Workloads): 10 warm-up and 100 training steps
// of the MLP, then the process's peak resident set. Built twice from this one
// file, as nnp_w1_rss and (when libtorch is found) torch_w1_rss, because
// memory can only be compared between separate processes: a binary that
// links both pays for both libraries. scripts/bench.sh prints the ratio.
#include <sys/resource.h>

#include <cstdio>

#ifdef NNP_RSS_LIBTORCH
#include <torch/torch.h>
#else
#include <nnp/nnp.hpp>
#endif

namespace {

#ifdef NNP_RSS_LIBTORCH
const char* const kName = "libtorch";
void train(int steps) {
  torch::nn::Sequential net(torch::nn::Linear(784, 512), torch::nn::ReLU(), torch::nn::Linear(512, 512),
                            torch::nn::ReLU(), torch::nn::Linear(512, 10));
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  torch::Tensor x = torch::randn({128, 784}), y = torch::randint(0, 10, {128});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    opt.step();
  }
}
#else
const char* const kName = "nnplug";
void train(int steps) {
  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 784, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
  nnp::optim::Optimizer opt("SGD", net.parameters(), std::move(nnp::nn::Attrs().set("lr", 0.01).set("momentum", 0.9)));
  nnp::nn::ModuleHandle loss_fn = nnp::nn::create_layer("nn.CrossEntropyLoss");
  nnp::Tensor x = nnp::randn({128, 784}), y = nnp::randint(0, 10, {128});
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    loss_fn.call({net(x), y}).backward();
    opt.step();
  }
}
#endif

}  // namespace

int main() {
  train(110);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("W1 peak RSS %s %ld KB\n", kName, usage.ru_maxrss);
  return 0;
}
