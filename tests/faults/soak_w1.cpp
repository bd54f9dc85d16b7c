// Trains W1 (docs/benchmarks.md, Workloads: the 784-512-512-10 MLP, batch 128,
// SGD with momentum) for STEPS steps and checks that memory stays flat once
// warm: the peak resident set after the first 10% of the steps (at least
// 100) may grow by at most 1 MB by the end. A leak of even one small
// allocation a step shows here within 2,000 steps; scripts/soak.sh runs
// 100,000. Prints the resident set every tenth of the run.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nnp/nnp.hpp>
#include <string>

namespace {

long resident_kb();

// The high-water mark: the kernel's, or the resident set read now when the
// kernel has not updated its mark yet.
long peak_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return std::max(usage.ru_maxrss, resident_kb());
}

long resident_kb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * (::sysconf(_SC_PAGESIZE) / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  const long steps = argc == 2 ? std::atol(argv[1]) : 0;
  if (steps < 100) {
    std::fprintf(stderr, "usage: soak_w1 STEPS (at least 100)\n");
    return 2;
  }
  const long warm = std::max(100L, steps / 10);
  nnp::manual_seed(1);
  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 784, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 512}, {"type": "nn.ReLU"},
    {"type": "nn.Linear", "in_features": 512, "out_features": 10}]})");
  nnp::optim::Optimizer opt("SGD", net.parameters(), std::move(nnp::nn::Attrs().set("lr", 0.01).set("momentum", 0.9)));
  nnp::nn::ModuleHandle loss_fn = nnp::nn::create_layer("nn.CrossEntropyLoss");
  long warm_peak = 0;
  double loss = 0;
  for (long step = 1; step <= steps; ++step) {
    // Fresh inputs every step, as a data loader gives them.
    nnp::Tensor x = nnp::randn({128, 784}), y = nnp::randint(0, 10, {128});
    opt.zero_grad();
    nnp::Tensor l = loss_fn.call({net(x), y});
    l.backward();
    opt.step();
    if (step == warm) warm_peak = peak_kb();
    if (step % (steps / 10) == 0) {
      loss = l.item<double>();
      std::printf("step %ld: resident %ld KB, peak %ld KB, loss %.4f\n", step, resident_kb(), peak_kb(), loss);
    }
  }
  const long growth = peak_kb() - warm_peak;
  std::printf("peak RSS after %ld warm-up steps %ld KB, after %ld steps %ld KB: growth %ld KB (at most 1024)\n", warm,
              warm_peak, steps, peak_kb(), growth);
  return growth <= 1024 && loss == loss ? 0 : 1;
}
