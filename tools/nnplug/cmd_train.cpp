// nnplug train: the main job. Trains a model spec (default: a small CNN) on a
// CSV data set (default: the digits), holding out a fifth for test; shows
// progress, writes a checkpoint and a picture of the curves, and prints the
// test accuracy. --resume continues a run exactly where its checkpoint left it.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nnp/nnp.hpp>
#include <random>

#include "curve_svg.hpp"
#include "options.hpp"
#include "training.hpp"

namespace nnplug {
namespace {

struct Checkpoint {
  nnp::StateDict model, optimizer;
  int64_t epoch = 0;
  uint64_t rng_seed = 0, rng_offset = 0;
  float scale = 1;
};

void save_checkpoint(const std::string& path, nnp::nn::ModuleHandle& model, const nnp::optim::Optimizer& opt,
                     int64_t epoch, float scale, uint64_t seed, const std::string& optimizer) {
  nnp::NamedTensors all;
  for (auto& [k, t] : model.state_dict()) all.emplace_back("model." + k, t);
  for (auto& [k, t] : opt.state_dict()) all.emplace_back("optimizer." + k, t);
  uint64_t rng_seed = 0, rng_offset = 0;
  nnp::api().get_rng_state(&rng_seed, &rng_offset);
  nnp::save_safetensors(all, path,
                        {{"format", "pt"},
                         {"nnplug", "train checkpoint"},
                         {"epoch", std::to_string(epoch)},
                         {"seed", std::to_string(seed)},
                         {"input_scale", nnp::nn::format_float(scale)},
                         {"optimizer", optimizer},
                         {"rng_seed", std::to_string(rng_seed)},
                         {"rng_offset", std::to_string(rng_offset)}});
}

Checkpoint load_checkpoint(const std::string& path) {
  Checkpoint c;
  for (auto& [k, t] : nnp::load_safetensors(path)) {
    if (k.rfind("model.", 0) == 0)
      c.model.emplace_back(k.substr(6), t);
    else if (k.rfind("optimizer.", 0) == 0)
      c.optimizer.emplace_back(k.substr(10), t);
  }
  c.epoch = std::stoll(nnp::safetensors_metadata(path, "epoch"));
  c.scale = std::stof(nnp::safetensors_metadata(path, "input_scale"));
  c.rng_seed = std::stoull(nnp::safetensors_metadata(path, "rng_seed"));
  c.rng_offset = std::stoull(nnp::safetensors_metadata(path, "rng_offset"));
  return c;
}

void progress(bool terminal, int64_t epoch, int64_t epochs, size_t done, size_t total, double loss, double acc,
              double rate) {
  if (!terminal) return;
  const int width = 24;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) bar += '>' + std::string(static_cast<size_t>(width - filled - 1), ' ');
  std::printf("\repoch %lld/%lld [%s] loss %.4f  acc %5.1f%%  %.0f samples/s ", static_cast<long long>(epoch),
              static_cast<long long>(epochs), bar.c_str(), loss, acc * 100, rate);
  std::fflush(stdout);
}

}  // namespace

int run_train(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string model_path, data_path, device_name = "auto", optimizer = "Adam", resume, out = "nnplug-run", input_shape;
  int64_t epochs = 15, batch_size = 32;
  double lr = 1e-3;
  uint64_t seed = 0;
  options.add_options()("model,m", po::value(&model_path), "model spec (JSON); default: a small CNN for the digits")(
      "data", po::value(&data_path), "CSV of features then an integer label (.gz allowed); default: the digits")(
      "input-shape", po::value(&input_shape),
      "per-sample input shape, e.g. 1,8,8 (default: flat, or 1,8,8 for the digits)")(
      "device,d", po::value(&device_name)->default_value("auto"), "device: auto, cpu, cuda:0, ...")(
      "epochs,e", po::value(&epochs)->default_value(15), "training epochs")(
      "batch-size,b", po::value(&batch_size)->default_value(32), "samples per step")(
      "lr", po::value(&lr)->default_value(1e-3), "learning rate")(
      "optimizer", po::value(&optimizer)->default_value("Adam"), "SGD, Adam, AdamW, Adagrad, Adadelta or RMSprop")(
      "seed", po::value(&seed)->default_value(0), "seed of the split, the shuffling and the initialisation")(
      "resume", po::value(&resume), "checkpoint to continue from")(
      "out,o", po::value(&out)->default_value("nnplug-run"), "folder for checkpoint.safetensors and curves.svg");
  po::variables_map vm;
  if (auto stop =
          parse_options("train", "Trains a model spec on a data set and reports the test accuracy.", options, args, vm))
    return *stop;
  if (epochs < 1 || batch_size < 1) throw nnp::Error(NNP_INVALID_ARGUMENT, "--epochs and --batch-size must be >= 1");

  auto started = std::chrono::steady_clock::now();
  if (data_path.empty()) data_path = default_data_path();
  Dataset data = load_csv(data_path);
  nnp::Shape shape = sample_shape(input_shape, data, model_path.empty());
  nnp::Device device(device_name);
  Split split = hold_out_fifth(data.rows, seed);

  nnp::manual_seed(seed);
  nnp::nn::ModuleHandle model = build_model(model_path);
  model.to(device);
  nnp::optim::Optimizer opt(optimizer, model.parameters(), std::move(nnp::nn::Attrs().set("lr", lr)));
  nnp::nn::ModuleHandle criterion = nnp::nn::create_layer("nn.CrossEntropyLoss");

  // Inputs are scaled into [-1, 1] by the training rows' largest magnitude.
  float scale = 1;
  {
    float largest = 0;
    for (int64_t row : split.train)
      for (int64_t f = 0; f < data.features; ++f)
        largest = std::max(largest, std::abs(data.x[static_cast<size_t>(row * data.features + f)]));
    if (largest > 0) scale = 1 / largest;
  }
  int64_t first_epoch = 1;
  if (!resume.empty()) {
    Checkpoint c = load_checkpoint(resume);
    model.load_state_dict(c.model);
    opt.load_state_dict(c.optimizer);
    nnp::api().set_rng_state(c.rng_seed, c.rng_offset);
    scale = c.scale;
    first_epoch = c.epoch + 1;
    std::cout << "resuming from " << resume << " after epoch " << c.epoch << "\n";
  }
  std::filesystem::create_directories(out);
  const std::string checkpoint = (std::filesystem::path(out) / "checkpoint.safetensors").string();
  const std::string curves = (std::filesystem::path(out) / "curves.svg").string();
  std::cout << "training on " << device.name() << ": " << split.train.size() << " rows, testing on "
            << split.test.size() << " (" << data_path << ")\n";

  const bool terminal = ::isatty(STDOUT_FILENO) != 0;
  std::vector<EpochRecord> history;
  double test_acc = 0;
  for (int64_t epoch = first_epoch; epoch <= epochs; ++epoch) {
    std::vector<int64_t> order = split.train;
    std::mt19937_64 shuffle(seed * 1000003 + static_cast<uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), shuffle);
    model.train();
    double loss_sum = 0;
    int64_t correct = 0, seen = 0;
    auto epoch_start = std::chrono::steady_clock::now();
    for (size_t begin = 0; begin < order.size(); begin += static_cast<size_t>(batch_size)) {
      size_t end = std::min(order.size(), begin + static_cast<size_t>(batch_size));
      auto [x, y] = batch(data, order, begin, end, shape, scale, device);
      nnp::Tensor logits = model(x);
      nnp::Tensor loss = criterion.call({logits, y});
      opt.zero_grad();
      loss.backward();
      opt.step();
      const int64_t n = static_cast<int64_t>(end - begin);
      loss_sum += loss.item<float>() * static_cast<double>(n);
      {
        nnp::NoGradGuard no_grad;
        correct += logits.argmax(1).eq(y).to(nnp::Dtype::i64).sum().item<int64_t>();
      }
      seen += n;
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
      progress(terminal, epoch, epochs, end, order.size(), loss_sum / static_cast<double>(seen),
               static_cast<double>(correct) / static_cast<double>(seen),
               static_cast<double>(seen) / std::max(seconds, 1e-9));
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    test_acc = accuracy(model, data, split.test, shape, scale, device);
    history.push_back(
        {loss_sum / static_cast<double>(seen), static_cast<double>(correct) / static_cast<double>(seen), test_acc});
    if (terminal) std::printf("\r");
    std::printf("epoch %lld/%lld  loss %.4f  train acc %5.1f%%  test acc %5.1f%%  %.0f samples/s%s\n",
                static_cast<long long>(epoch), static_cast<long long>(epochs), history.back().train_loss,
                history.back().train_accuracy * 100, test_acc * 100,
                static_cast<double>(seen) / std::max(seconds, 1e-9), terminal ? "            " : "");
    save_checkpoint(checkpoint, model, opt, epoch, scale, seed, optimizer);
  }
  if (!history.empty())
    write_curves_svg(curves, history);
  else
    test_acc = accuracy(model, data, split.test, shape, scale, device);
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("test accuracy %.2f%% on %zu held-out rows (%.1f s); checkpoint %s, curves %s\n", test_acc * 100,
              split.test.size(), total, checkpoint.c_str(), curves.c_str());
  return 0;
}

}  // namespace nnplug
