// W7's peak memory with each encoder layer checkpointed against without
// (issue 46: <= 0.6 x): 4 training steps of W7 (docs/benchmarks.md, Workloads).
// Two measures of the steps' own memory (activations, gradients, optimizer
// state; not the libraries, the model or the batch):
//   tensors - max_memory_allocated less what tensors held before the first
//             step: the bytes tensors held at once at most, PyTorch's
//             measure (torch.cuda.max_memory_allocated), and the figure the
//             target is about;
//   RSS     - the process's peak resident set less its resident set before
//             the first step, which also counts the blocks the cpu
//             backend's caching allocator keeps for each size class.
// One process per side (`plain` or `checkpointed`): a process's peak RSS
// covers its whole life. scripts/bench.sh prints the ratios.
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nnp/memory.hpp>
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
  nnp::reset_peak_memory_stats();
  const int64_t held_before = nnp::memory_allocated();
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
  const int64_t tensors_kb = (nnp::max_memory_allocated() - held_before) / 1024;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("W7 step memory %s tensors %lld KB RSS %ld KB (peak RSS %ld KB, %ld KB before; loss %.6f)\n",
              checkpointed ? "checkpointed" : "plain", static_cast<long long>(tensors_kb), usage.ru_maxrss - before,
              usage.ru_maxrss, before, loss_value);
  return 0;
}
