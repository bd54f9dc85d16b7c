// W8 (docs/benchmarks.md, Workloads): inference latency on one ONNX file. W3's CNN
// and W7's model are exported by nnplug; each file is then run by nnplug
// (nnp::onnx::load, eval, no grad) and by ONNX Runtime (npm
// onnxruntime-node, CPU, through node) with the same thread count, at two
// batch sizes each. The two sides alternate for several rounds so that a
// noisy stretch of the machine touches both; the figure is the median of
// the rounds' medians, and the ratio nnplug / ONNX Runtime. CASE, when
// given, runs only the cases whose name contains it ("W7", "batch 64").
//   nnp_w8 ORT_CLIENT_DIR [ROUNDS [CASE]]
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <nnp/nnp.hpp>
#include <nnp/onnx.hpp>
#include <string>
#include <vector>

#include "bench_workloads.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  std::string model;
  std::vector<int64_t> shape;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// How many calls fill about half a second, from one timed call.
int calls_for(double one_call_us) { return std::clamp(static_cast<int>(5e5 / std::max(one_call_us, 1.0)), 10, 1000); }

double nnplug_median_us(nnp::nn::ModuleHandle& net, const nnp::Tensor& x, int calls) {
  nnp::NoGradGuard no_grad;
  for (int i = 0; i < 5; ++i) net(x);
  std::vector<double> times;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    nnp::Tensor y = net(x);
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return median(times);
}

double ort_median_us(const std::string& client, const std::string& model, const std::string& inputs, int threads,
                     int calls) {
  const std::string out = inputs + ".out";
  const std::string command = "BENCH=" + std::to_string(calls) + " node " + client + "/run_model.js " + model + " " +
                              std::to_string(threads) + " " + inputs + " > " + out;
  if (std::system(command.c_str()) != 0) throw std::runtime_error("ONNX Runtime failed: " + command);
  std::ifstream in(out);
  return nlohmann::json::parse(in)["median_us"].get<double>();
}

int cpus_this_process_may_use() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nnp_w8 ORT_CLIENT_DIR [ROUNDS [CASE]]\n");
    return 2;
  }
  const std::string client = argv[1];
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string only = argc > 3 ? argv[3] : "";
  if (!fs::exists(fs::path(client) / "node_modules" / "onnxruntime-node")) {
    std::printf("W8   skipped: onnxruntime-node is not installed in %s (scripts/setup.sh installs it)\n",
                client.c_str());
    return 0;
  }
  // One thread count for both sides: NNP_CPU_THREADS when set, else every
  // CPU this process may use (which is also what nnplug's cpu backend takes).
  const char* env = std::getenv("NNP_CPU_THREADS");
  const int threads = env != nullptr ? std::atoi(env) : cpus_this_process_may_use();

  const fs::path dir = fs::temp_directory_path() / ("nnp_w8_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nnp::manual_seed(0);
  const std::string w3 = (dir / "w3_cnn.onnx").string(), w7 = (dir / "w7_encoder.onnx").string();
  nnp::onnx::export_model(nnp::bench::w3_model(), {nnp::randn({2, 1, 28, 28})}, w3);
  nnp::onnx::export_model(nnp::bench::w7_model(), {nnp::randn({2, 64, 128})}, w7);

  const std::vector<Case> cases = {{"W3 CNN, batch 1", w3, {1, 1, 28, 28}},
                                   {"W3 CNN, batch 64", w3, {64, 1, 28, 28}},
                                   {"W7 encoder, batch 1", w7, {1, 64, 128}},
                                   {"W7 encoder, batch 32", w7, {32, 64, 128}}};
  std::printf("W8   ONNX inference, %d thread%s each side, %d rounds (median us per call)\n", threads,
              threads == 1 ? "" : "s", rounds);
  for (const Case& c : cases) {
    if (std::string(c.name).find(only) == std::string::npos) continue;
    nnp::nn::ModuleHandle net = nnp::onnx::load(c.model);
    net.eval();
    const nnp::Tensor x = nnp::randn(c.shape);
    const std::string inputs = (dir / "inputs.json").string();
    nlohmann::json given;
    given["input"]["dims"] = c.shape;
    given["input"]["data"] = x.to_vector<float>();
    std::ofstream(inputs) << given.dump();

    const int calls = calls_for(nnplug_median_us(net, x, 3));
    std::vector<double> ours, peer;
    for (int r = 0; r < rounds; ++r) {
      ours.push_back(nnplug_median_us(net, x, calls));
      peer.push_back(ort_median_us(client, c.model, inputs, threads, calls));
    }
    const double a = median(ours), b = median(peer);
    std::printf("W8   %-22s nnplug %10.1f us   onnxruntime %10.1f us   ratio %.3f  (target <= 0.8)\n", c.name, a, b,
                a / b);
    std::fflush(stdout);
  }
  fs::remove_all(dir);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "nnp_w8: %s\n", e.what());
  return 1;
}
