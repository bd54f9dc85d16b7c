// nnplug profile: forward and backward of a model spec on random input,
// profiled for a few steps after warm-up; prints PyTorch's key_averages
// table and writes the Chrome trace when asked.
#include <cstdio>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>

#include "options.hpp"
#include "training.hpp"

namespace nnplug {

int run_profile(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string model, input_shape, device = "cpu", trace, sort_by = "self_cpu_time_total";
  int64_t steps = 5, warmup = 2;
  int32_t rows = 20;
  options.add_options()("model,m", po::value(&model)->required(), "model spec (JSON file)")(
      "input-shape,i", po::value(&input_shape)->required(), "input shape with the batch, e.g. 32,1,8,8")(
      "device,d", po::value(&device)->default_value("cpu"), "device to run on")(
      "steps", po::value(&steps)->default_value(5), "profiled steps (forward + backward)")(
      "warmup", po::value(&warmup)->default_value(2), "steps run first, not profiled")(
      "trace,t", po::value(&trace), "write the Chrome trace (Perfetto, chrome://tracing) here")(
      "sort-by", po::value(&sort_by)->default_value("self_cpu_time_total"),
      "self_cpu_time_total, cpu_time_total, device_time_total, self_cpu_memory_usage or count")(
      "row-limit", po::value(&rows)->default_value(20), "rows of the table (0: all)");
  po::variables_map vm;
  if (auto stop = parse_options("profile", "Profiles forward and backward of a model spec.", options, args, vm))
    return *stop;
  if (steps < 1 || warmup < 0) throw nnp::Error(NNP_INVALID_ARGUMENT, "--steps must be >= 1 and --warmup >= 0");

  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec_file(model);
  const nnp::Device where(device);
  net.to(where);
  net.train();
  nnp::manual_seed(0);
  const nnp::Tensor x = nnp::randn(parse_shape(input_shape, "--input-shape"), nnp::Dtype::f32, where);
  auto step = [&] {
    net.zero_grad();
    nnp::Tensor y = net(x);
    y.pow(2.0).mean().backward();
  };
  for (int64_t i = 0; i < warmup; ++i) step();
  nnp::check(nnp::api().synchronize(where.raw()));
  nnp::profiler::Profiler profiler;
  for (int64_t i = 0; i < steps; ++i) {
    nnp::profiler::RecordFunction scope("ProfilerStep#" + std::to_string(warmup + i));
    step();
  }
  nnp::check(nnp::api().synchronize(where.raw()));
  nnp::profiler::Profile profile = profiler.stop();
  std::printf("%s", profile.table(sort_by, rows).c_str());
  if (!trace.empty()) {
    profile.export_chrome_trace(trace);
    std::printf("trace: %s (%lld events)\n", trace.c_str(), static_cast<long long>(profile.size()));
  }
  return 0;
}

}  // namespace nnplug
