// nnplug eval: the accuracy of a checkpoint on the held-out fifth of its
// data and on all of it.
#include <iostream>
#include <nnp/nnp.hpp>
#include <numeric>

#include "options.hpp"
#include "training.hpp"

namespace nnplug {

int run_eval(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string checkpoint, model_path, data_path, input_shape, device_name = "auto";
  options.add_options()("checkpoint,c", po::value(&checkpoint)->required(), "checkpoint written by nnplug train")(
      "model,m", po::value(&model_path), "model spec the checkpoint was trained with (default: the digits CNN)")(
      "data", po::value(&data_path), "CSV data (default: the digits)")("input-shape", po::value(&input_shape),
                                                                       "per-sample input shape, as for train")(
      "device,d", po::value(&device_name)->default_value("auto"), "device to evaluate on");
  po::variables_map vm;
  if (auto stop = parse_options("eval", "Reports a checkpoint's accuracy.", options, args, vm)) return *stop;
  if (data_path.empty()) data_path = default_data_path();
  Dataset data = load_csv(data_path);
  nnp::Shape shape = sample_shape(input_shape, data, model_path.empty());
  nnp::Device device(device_name);
  nnp::nn::ModuleHandle model = build_model(model_path);
  nnp::StateDict state;
  for (auto& [k, t] : nnp::load_safetensors(checkpoint))
    if (k.rfind("model.", 0) == 0) state.emplace_back(k.substr(6), t);
  model.load_state_dict(state);
  model.to(device);
  const float scale = std::stof(nnp::safetensors_metadata(checkpoint, "input_scale"));
  const uint64_t seed = std::stoull(nnp::safetensors_metadata(checkpoint, "seed"));
  Split split = hold_out_fifth(data.rows, seed);
  std::vector<int64_t> all(static_cast<size_t>(data.rows));
  std::iota(all.begin(), all.end(), 0);
  std::printf("test accuracy %.2f%% on %zu held-out rows; %.2f%% on all %lld rows\n",
              accuracy(model, data, split.test, shape, scale, device) * 100, split.test.size(),
              accuracy(model, data, all, shape, scale, device) * 100, static_cast<long long>(data.rows));
  return 0;
}

}  // namespace nnplug
