// W9 (docs/benchmarks.md, Workloads): data parallel. W1's training step with 2
// ranks (1 thread each, DistributedDataParallel over gloo on loopback)
// against one process with 2 threads at the same global batch of 256; and
// the gloo plugin's all-reduce bandwidth against Gloo called directly, on the
// same ranks, in alternation.
//
//   nnp_w9 [ROUNDS]   runs both sides ROUNDS times (default 3), alternating,
//                     and prints the medians and ratios
//   nnp_w9 one        (internal) one process: median µs of W1 at batch 256
//   nnp_w9 rank       (internal) a rank under `nnplug launch --nproc 2`
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nnp/data_parallel.hpp>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "bench_workloads.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWarmup = 10, kSteps = 100;
constexpr int64_t kGlobalBatch = 256;
constexpr size_t kReduceFloats = 4 << 20;  // 16 MiB, W1's gradients are 2.6 MiB
constexpr int kReduceRepeats = 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Median µs of W1's step on net (a model, or its DistributedDataParallel).
double time_steps(nnp::nn::ModuleHandle net, const std::vector<nnp::Tensor>& params, int64_t batch) {
  const nnp::Tensor x = nnp::randn({batch, 784}), y = nnp::randint(0, 10, {batch});
  nnp::optim::Optimizer opt("SGD", params, std::move(nnp::nn::Attrs().set("lr", 0.01).set("momentum", 0.9)));
  nnp::nn::ModuleHandle loss_fn = nnp::nn::create_layer("nn.CrossEntropyLoss");
  std::vector<double> times;
  for (int i = 0; i < kWarmup + kSteps; ++i) {
    const auto start = Clock::now();
    opt.zero_grad();
    nnp::Tensor loss = loss_fn.call({net(x), y});
    loss.backward();
    opt.step();
    if (i >= kWarmup) times.push_back(seconds_since(start) * 1e6);
  }
  return median(times);
}

int run_one() {
  nnp::nn::ModuleHandle net = nnp::bench::w1_model();
  std::printf("one %.1f\n", time_steps(net, net.parameters(), kGlobalBatch));
  return 0;
}

// Gloo's own context over a file store both ranks reach, as a user of Gloo
// would write it: the peer the plugin is measured against.
std::shared_ptr<gloo::Context> direct_gloo(int rank, int size) {
  const std::string folder = "/tmp/nnp_w9_gloo_" + std::string(std::getenv("MASTER_PORT"));
  std::filesystem::create_directories(folder);
  gloo::rendezvous::FileStore store(folder);
  gloo::transport::tcp::attr attr;
  attr.iface = "lo";
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
  context->connectFullMesh(store, device);
  return context;
}

int run_rank() {
  namespace dist = nnp::distributed;
  dist::ProcessGroup& group = dist::init_process_group("gloo");
  const int rank = group.rank(), size = group.size();
  nnp::manual_seed(static_cast<uint64_t>(rank));  // each rank its own data
  nnp::nn::ModuleHandle model = nnp::bench::w1_model();
  auto ddp = nnp::nn::make<nnp::nn::parallel::DistributedDataParallel>(model);
  const double step = time_steps(nnp::nn::ModuleHandle(ddp), model.parameters(), kGlobalBatch / size);

  // All-reduce bandwidth (bytes reduced per second), the plugin and Gloo
  // alternating on the same buffer size.
  std::shared_ptr<gloo::Context> gloo_direct = direct_gloo(rank, size);
  nnp::Tensor ours = nnp::ones({static_cast<int64_t>(kReduceFloats)});
  std::vector<float> theirs(kReduceFloats, 1.0f);
  std::vector<double> ours_s, theirs_s;
  for (int i = 0; i < kReduceRepeats + 1; ++i) {  // the first of each warms up
    group.barrier();
    auto start = Clock::now();
    group.all_reduce(ours);
    if (i > 0) ours_s.push_back(seconds_since(start));
    group.barrier();
    start = Clock::now();
    gloo::AllreduceOptions options(gloo_direct);
    options.setOutput(theirs.data(), theirs.size());
    options.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    options.setTag(static_cast<uint32_t>(i));
    gloo::allreduce(options);
    if (i > 0) theirs_s.push_back(seconds_since(start));
  }
  const double bytes = static_cast<double>(kReduceFloats * sizeof(float));
  if (rank == 0)
    std::printf("ranks %.1f %.3f %.3f\n", step, bytes / median(ours_s) / 1e9, bytes / median(theirs_s) / 1e9);
  dist::destroy_process_group();
  return 0;
}

// Runs command and returns the first line of its output starting with key.
std::string line_of(const std::string& command, const std::string& key) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char buffer[4096];
  std::string found;
  while (std::fgets(buffer, sizeof buffer, pipe)) {
    std::string line = buffer;
    const size_t at = line.find(key + " ");
    if (found.empty() && at != std::string::npos) found = line.substr(at + key.size() + 1);
  }
  const int status = ::pclose(pipe);
  if (status != 0) std::fprintf(stderr, "nnp_w9: '%s' failed (status %d)\n", command.c_str(), status);
  return found;
}

int run_driver(int rounds) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string nnplug = (self.parent_path() / "nnplug").string();
  std::vector<double> one, ranks, ours_gbs, gloo_gbs;
  for (int r = 0; r < rounds; ++r) {
    const std::string a = line_of("NNP_CPU_THREADS=2 '" + self.string() + "' one", "one");
    const std::string b =
        line_of("NNP_CPU_THREADS=1 '" + nnplug + "' launch --nproc 2 -- '" + self.string() + "' rank", "ranks");
    double step = 0, ours = 0, theirs = 0;
    if (a.empty() || b.empty() || std::sscanf(b.c_str(), "%lf %lf %lf", &step, &ours, &theirs) != 3) return 1;
    one.push_back(std::stod(a));
    ranks.push_back(step);
    ours_gbs.push_back(ours);
    gloo_gbs.push_back(theirs);
  }
  std::printf(
      "W9   step: 2 ranks x 1 thread %.0f us   one process x 2 threads %.0f us   ratio %.3f  (target <= 1.15)\n",
      median(ranks), median(one), median(ranks) / median(one));
  std::printf("W9   all-reduce of 16 MiB f32: plugin %.3f GB/s   Gloo direct %.3f GB/s   ratio %.3f  (target >= 0.9)\n",
              median(ours_gbs), median(gloo_gbs), median(ours_gbs) / median(gloo_gbs));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "one") return run_one();
    if (mode == "rank") return run_rank();
    return run_driver(mode.empty() ? 3 : std::max(1, std::atoi(mode.c_str())));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nnp_w9: %s\n", e.what());
    return 1;
  }
}
