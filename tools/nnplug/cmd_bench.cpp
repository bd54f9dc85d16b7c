// nnplug bench: a model's inference latency (p50, p90, p99), throughput and
// peak memory, run compiled (nnp::compile) and as written, on random inputs
// of the shapes given - what ONNX Runtime's perf test and TensorRT's trtexec
// report. The model is an ONNX file, a spec with --weights, or a checkpoint.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "call_memory.hpp"
#include "checkpoint.hpp"
#include "options.hpp"
#include "terminal_text.hpp"
#include "training.hpp"

namespace nnplug {
namespace {

struct Latency {
  double p50, p90, p99, mean;  // microseconds
};

// Times `iterations` calls after `warmup`, each call ending when the device
// has finished (a copy of the output to the host).
Latency time_calls(nnp::nn::ModuleHandle& model, const std::vector<nnp::Tensor>& inputs, int64_t warmup,
                   int64_t iterations) {
  nnp::NoGradGuard no_grad;
  auto call = [&] {
    nnp::Tensor y = model.call(inputs);
    (void)y.to(nnp::Device("cpu"));
  };
  for (int64_t i = 0; i < warmup; ++i) call();
  std::vector<double> us;
  us.reserve(static_cast<size_t>(iterations));
  for (int64_t i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) { return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)]; };
  double total = 0;
  for (double v : us) total += v;
  return {at(0.5), at(0.9), at(0.99), total / static_cast<double>(us.size())};
}

void print_line(const char* label, const Latency& l, int64_t batch) {
  std::printf("%-9s p50 %10.1f us  p90 %10.1f us  p99 %10.1f us  mean %10.1f us  %12.0f samples/s\n", label, l.p50,
              l.p90, l.p99, l.mean, static_cast<double>(batch) * 1e6 / l.mean);
}

double peak_rss_mb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // KB on Linux
}

}  // namespace

int run_bench(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string model_path, weights, checkpoint, device_name = "auto";
  std::vector<std::string> shapes;
  int64_t iterations = 100, warmup = 10, threads = 0;
  bool no_compile = false, compiled_only = false, verbose = false;
  options.add_options()("model,m", po::value(&model_path), "ONNX file (.onnx), or model spec (with --weights)")(
      "checkpoint,c", po::value(&checkpoint), "checkpoint written by nnplug train (its model and weights)")(
      "weights", po::value(&weights), "safetensors weights for a --model spec")(
      "shape,s", po::value(&shapes)->composing(),
      "an input's shape, e.g. 64,1,28,28 or input=64,1,28,28; once per input, in order (the name is for "
      "reading only); a checkpoint's default: a batch of 64 samples of its input shape")(
      "device,d", po::value(&device_name)->default_value("auto"), "device to run on")(
      "threads,t", po::value(&threads), "cpu threads (NNP_CPU_THREADS; default: the machine's)")(
      "iterations,n", po::value(&iterations)->default_value(100), "timed calls of each mode")(
      "warmup", po::value(&warmup)->default_value(10), "untimed calls first")(
      "no-compile", po::bool_switch(&no_compile), "time the model as written only")(
      "compiled-only", po::bool_switch(&compiled_only),
      "time the compiled model only (the peak memory is then the compiled calls')")(
      "verbose,v", po::bool_switch(&verbose), "print what the compiled model ran (nnp::compile_explain)");
  po::positional_options_description positional;
  positional.add("model", 1);
  po::variables_map vm;
  if (auto stop =
          parse_options("bench", "Times a model's inference, compiled and as written.", options, args, vm, &positional))
    return *stop;
  if (threads > 0) ::setenv("NNP_CPU_THREADS", std::to_string(threads).c_str(), 1);  // before the pool starts
  if (model_path.empty() && checkpoint.empty()) {
    std::fprintf(stderr, "nnplug bench: give a model (an .onnx file, or a spec with --weights) or --checkpoint\n");
    return 2;
  }
  // A checkpoint knows its samples' shape: a batch of 64 of them by default.
  if (shapes.empty() && !checkpoint.empty()) shapes.push_back("64," + load_train_checkpoint(checkpoint).input_shape);
  if (shapes.empty()) {
    std::fprintf(stderr, "nnplug bench: give each input's shape with --shape, e.g. --shape 64,1,28,28\n");
    return 2;
  }
  if (iterations < 1 || warmup < 0) {
    std::fprintf(stderr, "nnplug bench: --iterations must be at least 1 and --warmup at least 0\n");
    return 2;
  }
  nnp::nn::ModuleHandle model = open_model(model_path, weights, checkpoint);
  const nnp::Device device(device_name);
  model.to(device);
  model.eval();
  std::vector<nnp::Tensor> inputs;
  for (const std::string& given : shapes) {
    const size_t eq = given.find('=');
    inputs.push_back(nnp::randn(parse_shape(eq == std::string::npos ? given : given.substr(eq + 1), "--shape"),
                                nnp::Dtype::f32, device));
  }
  const int64_t batch = inputs[0].ndim() > 0 ? inputs[0].size(0) : 1;
  std::string described;
  for (const nnp::Tensor& t : inputs) described += (described.empty() ? "" : ", ") + nnp::detail::shape_text(t.shape());
  nnp_device_info info{};
  info.struct_size = sizeof(info);
  nnp::check(nnp::api().device_info(device.raw(), &info));
  // The description says the thread count and what computes the products.
  std::printf("device %s: %s\n", device.name().c_str(),
              printable(info.description ? info.description : "", 400).c_str());
  std::printf("inputs %s f32, %lld timed calls after %lld warm-up\n", described.c_str(),
              static_cast<long long>(iterations), static_cast<long long>(warmup));
  if (no_compile && compiled_only) {
    std::fprintf(stderr, "nnplug bench: --no-compile and --compiled-only leave nothing to time; give one\n");
    return 2;
  }
  Latency eager{};
  if (!compiled_only) {
    eager = time_calls(model, inputs, warmup, iterations);
    print_line("eager", eager, batch);
  }
  if (!no_compile) {
    nnp::nn::ModuleHandle compiled = nnp::compile(model, inputs);
    const Latency fast = time_calls(compiled, inputs, warmup, iterations);
    print_line("compiled", fast, batch);
    if (!compiled_only) std::printf("compiled / eager (p50): %.3f\n", fast.p50 / eager.p50);
    print_call_memory(device, "compiled call", [&] {
      nnp::NoGradGuard no_grad;
      compiled.call(inputs);
    });
    if (verbose) std::printf("%s", nnp::compile_explain(compiled).c_str());
  }
  std::printf("peak memory %.1f MB (the process's resident set)\n", peak_rss_mb());
  return 0;
}

}  // namespace nnplug
