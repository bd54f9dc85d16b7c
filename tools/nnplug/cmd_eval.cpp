// nnplug eval: the accuracy of a checkpoint on the held-out fifth of its
// data and on all of it. The checkpoint alone is enough: it holds the model
// spec, the input shape and scale, and the seed of the split.
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
  std::string checkpoint, model_path, data_path, input_shape, device_name = "auto";
  bool header = false;
  options.add_options()("checkpoint,c", po::value(&checkpoint)->required(), "checkpoint written by nnplug train")(
      "model,m", po::value(&model_path), "model spec (default: the one stored in the checkpoint)")(
      "data", po::value(&data_path), "CSV data (default: the digits)")("header", po::bool_switch(&header),
                                                                       "the first row of the data is a header")(
      "input-shape", po::value(&input_shape), "per-sample input shape (default: the checkpoint's)")(
      "device,d", po::value(&device_name)->default_value("auto"), "device to evaluate on");
  po::variables_map vm;
  if (auto stop = parse_options("eval", "Reports a checkpoint's accuracy.", options, args, vm)) return *stop;
  TrainCheckpoint c = load_train_checkpoint(checkpoint);
  if (data_path.empty()) data_path = default_data_path();
  Dataset data = load_csv(data_path, header);
  nnp::Shape shape = sample_shape(input_shape.empty() ? c.input_shape : input_shape, data, false);
  nnp::Device device(device_name);
  nnp::nn::ModuleHandle model = model_path.empty() ? nnp::nn::model_from_spec(c.model_spec) : build_model(model_path);
  model.load_state_dict(c.model);
  model.to(device);
  auto samples = samples_of(data, shape, c.scale, device);
  check_labels_fit(data, data_path, output_classes(model, *samples));
  std::vector<int64_t> all(static_cast<size_t>(data.rows));
  std::iota(all.begin(), all.end(), 0);
  const double on_all = evaluate(model, samples, all).accuracy * 100;
  if (data.rows == c.data_rows && data.rows >= 5) {
    Split split = hold_out_fifth(data.rows, c.seed);
    if (split_fingerprint(data, split.test) == c.split) {
      std::printf("test accuracy %.2f%% on %zu held-out rows; %.2f%% on all %lld rows\n",
                  evaluate(model, samples, split.test).accuracy * 100, split.test.size(), on_all,
                  static_cast<long long>(data.rows));
      return 0;
    }
  }
  std::printf("accuracy %.2f%% on all %lld rows (not the data the checkpoint was trained on: no held-out fifth)\n",
              on_all, static_cast<long long>(data.rows));
  return 0;
}

}  // namespace nnplug
