// W7's peak memory with each encoder layer checkpointed against without
// (issue 46: <= 0.6 x): 4 training steps of W7 (../shared/WORKLOADS.md),
// the process's peak resident set less what it held before the first step
// (the libraries, the model, the batch): the steps' own memory, activations,
// gradients and optimizer state. One process per side (`plain` or
// `checkpointed`): a process's peak covers its whole life. scripts/bench.sh
// prints the ratio.
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nnp/nnp.hpp>

#include "workload_models.hpp"

namespace {

long resident_kb() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * 4;  // pages of 4 KB
}

}  // namespace

int main(int argc, char** argv) {
  const bool checkpointed = argc > 1 && std::strcmp(argv[1], "checkpointed") == 0;
  nnp::manual_seed(0);
  nnp::nn::ModuleHandle net = nnp::bench::w7_model();
  nnp::optim::Optimizer opt("AdamW", net.parameters(), std::move(nnp::nn::Attrs().set("lr", 1e-3)));
  const nnp::Tensor x = nnp::randn({32, 64, 128}), y = nnp::randint(0, 10, {32});
  nnp::nn::ModuleHandle layers = net.get_submodule("encoder").get_submodule("layers");
  nnp::nn::ModuleHandle head = net.get_submodule("head");
  const long before = resident_kb();
  float loss_value = 0;
  for (int step = 0; step < 4; ++step) {
    opt.zero_grad();
    nnp::Tensor h = x;
    for (auto& [name, child] : layers.named_children()) {
      nnp::nn::ModuleHandle layer = child;
      h = checkpointed ? nnp::utils::checkpoint([layer](const nnp::Tensor& t) mutable { return layer(t); }, h)
                       : layer(h);
    }
    nnp::Tensor loss = nnp::nn::functional::cross_entropy(head(h.mean({1})), y);
    loss.backward();
    opt.step();
    loss_value = loss.item<float>();
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("W7 step memory %s %ld KB (peak %ld KB, %ld KB before; loss %.6f)\n",
              checkpointed ? "checkpointed" : "plain", usage.ru_maxrss - before, usage.ru_maxrss, before, loss_value);
  return 0;
}
