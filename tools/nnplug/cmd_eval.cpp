// nnplug eval: the accuracy of a checkpoint on the held-out fifth of its
// data and on all of it. The checkpoint alone is enough: it holds the model
// spec, the input shape and scale, and the seed of the split. The model runs
// compiled (nnp::compile, graph mode) unless --no-compile; --verbose says
// what the compiled module ran, or why it ran the model as written.
#include <algorithm>
#include <iostream>
#include <nnp/nnp.hpp>
#include <numeric>

#include "checkpoint.hpp"
#include "options.hpp"
#include "training.hpp"

namespace nnplug {

int run_eval(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string checkpoint, model_path, weights, data_path, input_shape, device_name = "auto";
  double scale = 0;
  bool header = false, no_compile = false, verbose = false;
  options.add_options()("checkpoint,c", po::value(&checkpoint), "checkpoint written by nnplug train")(
      "model,m", po::value(&model_path),
      "model spec, or ONNX file (.onnx, with its own weights) (default: the checkpoint's)")(
      "weights", po::value(&weights), "safetensors weights for a --model spec given without --checkpoint")(
      "data", po::value(&data_path), "CSV data (default: the digits)")("header", po::bool_switch(&header),
                                                                       "the first row of the data is a header")(
      "input-shape", po::value(&input_shape), "per-sample input shape (default: the checkpoint's)")(
      "scale", po::value(&scale), "what features are multiplied by (default: the checkpoint's, else 1)")(
      "device,d", po::value(&device_name)->default_value("auto"), "device to evaluate on")(
      "no-compile", po::bool_switch(&no_compile), "run the model as written (eager), not captured by nnp::compile")(
      "verbose,v", po::bool_switch(&verbose), "say what the compiled model ran (its plan), or why it ran eagerly");
  po::variables_map vm;
  if (auto stop = parse_options("eval", "Reports a checkpoint's or a model's accuracy.", options, args, vm))
    return *stop;
  const bool onnx = model_path.size() > 5 && model_path.compare(model_path.size() - 5, 5, ".onnx") == 0;
  if (checkpoint.empty() && model_path.empty()) {
    std::fprintf(stderr, "nnplug eval: give --checkpoint, or --model (an .onnx file, or a spec with --weights)\n");
    return 2;
  }
  if (checkpoint.empty() && !onnx && weights.empty()) {
    std::fprintf(stderr, "nnplug eval: a model spec alone has untrained weights; give --weights or --checkpoint\n");
    return 2;
  }
  TrainCheckpoint c;
  if (!checkpoint.empty()) c = load_train_checkpoint(checkpoint);
  if (vm.count("scale")) c.scale = static_cast<float>(scale);
  if (data_path.empty()) data_path = default_data_path();
  Dataset data = load_csv(data_path, header);
  nnp::Shape shape = sample_shape(input_shape.empty() ? c.input_shape : input_shape, data, false);
  nnp::Device device(device_name);
  nnp::nn::ModuleHandle model = model_path.empty() ? nnp::nn::model_from_spec(c.model_spec) : build_model(model_path);
  if (!weights.empty())
    model.load_state_dict(nnp::load_safetensors(weights));
  else if (!onnx)
    model.load_state_dict(c.model);
  model.to(device);
  auto samples = samples_of(data, shape, c.scale, device);
  check_labels_fit(data, data_path, output_classes(model, *samples));
  if (!no_compile) {
    std::vector<int64_t> first(static_cast<size_t>(std::min<int64_t>(data.rows, 256)));
    std::iota(first.begin(), first.end(), 0);
    model.eval();
    model = nnp::compile(model, {samples->get_batch(first).data});
  }
  std::vector<int64_t> all(static_cast<size_t>(data.rows));
  std::iota(all.begin(), all.end(), 0);
  const double on_all = evaluate(model, samples, all).accuracy * 100;
  if (verbose) std::printf("%s", no_compile ? "eager: --no-compile\n" : nnp::compile_explain(model).c_str());
  if (!checkpoint.empty() && data.rows == c.data_rows && data.rows >= 5) {
    Split split = hold_out_fifth(data.rows, c.seed);
    if (split_fingerprint(data, split.test) == c.split) {
      std::printf("test accuracy %.2f%% on %zu held-out rows; %.2f%% on all %lld rows\n",
                  evaluate(model, samples, split.test).accuracy * 100, split.test.size(), on_all,
                  static_cast<long long>(data.rows));
      return 0;
    }
  }
  std::printf("accuracy %.2f%% on all %lld rows%s\n", on_all, static_cast<long long>(data.rows),
              checkpoint.empty() ? "" : " (not the data the checkpoint was trained on: no held-out fifth)");
  return 0;
}

}  // namespace nnplug
