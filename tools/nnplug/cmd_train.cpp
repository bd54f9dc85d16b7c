// nnplug train: the main job. Trains a model spec (default: a small CNN) on a
// CSV data set (default: the digits), holding out a fifth for test; shows
// progress, and after every epoch writes the checkpoint, the best checkpoint
// so far, metrics.csv and a picture of the curves; prints the test accuracy.
// It never destroys good work: a loss that becomes NaN or infinite stops the
// run with the last checkpoint kept, and a run never replaces another's files
// unless told to (run_folder.hpp). --resume continues a run exactly where its
// checkpoint left it: same split, same model, same curves. --nproc N trains
// data-parallel: N ranks (nnplug launch) each take 1/N of every batch and
// average their gradients (DistributedDataParallel); rank 0 writes the files.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nnp/data_parallel.hpp>
#include <nnp/distributed.hpp>
#include <nnp/nnp.hpp>
#include <optional>

#include "checkpoint.hpp"
#include "commands.hpp"
#include "curve_svg.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "run_folder.hpp"
#include "step_profiler.hpp"
#include "terminal_text.hpp"
#include "training.hpp"

namespace nnplug {
namespace {

// The model's forward with its activations recomputed in backward: each
// top-level module of a container in a checkpoint of its own (the last one
// runs plainly: backward needs its activations at once), or the whole model
// as one.
nnp::Tensor forward_checkpointed(nnp::nn::ModuleHandle& net, const nnp::Tensor& x) {
  const int32_t children = static_cast<int32_t>(net.named_children().size());
  if (children >= 2 && net.type_name() == "nn.Sequential") return nnp::utils::checkpoint_sequential(net, children, x);
  return nnp::utils::checkpoint([net](const nnp::Tensor& input) mutable { return net(input); }, x);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Written whole each epoch, through a temporary file: never half a table.
void write_metrics_csv(const std::string& path, const std::vector<EpochRecord>& history) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << "epoch,train_loss,train_accuracy,test_loss,test_accuracy\n";
    for (const EpochRecord& e : history)
      out << e.epoch << "," << nnp::nn::format_float(e.train_loss) << "," << nnp::nn::format_float(e.train_accuracy)
          << "," << nnp::nn::format_float(e.test_loss) << "," << nnp::nn::format_float(e.test_accuracy) << "\n";
    if (!out) throw nnp::Error(NNP_IO_ERROR, "cannot write " + path);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw nnp::Error(NNP_IO_ERROR, "cannot write " + path);
}

// The shape as --input-shape takes it: "1,8,8".
std::string input_shape_text(const nnp::Shape& shape) {
  std::string text;
  for (int64_t s : shape) text += (text.empty() ? "" : ",") + std::to_string(s);
  return text;
}

// WORLD_SIZE as `nnplug launch` (or torchrun) sets it for a rank; 0 when
// this process was not started as one.
int launched_world_size() {
  const char* text = std::getenv("WORLD_SIZE");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > 65536)
    throw nnp::Error(NNP_INVALID_ARGUMENT, "WORLD_SIZE='" + std::string(text) + "' is not a rank count");
  return static_cast<int>(value);
}

// `nnplug train --nproc N ARGS`: `nnplug launch --nproc N -- nnplug train ARGS`.
int launch_ranks(int nproc, const Args& args) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw nnp::Error(NNP_IO_ERROR, "--nproc: cannot find this program to start its ranks: " + error.message());
  Args launch{"--nproc", std::to_string(nproc), "--", self.string(), "train"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--nproc") {
      ++i;  // and its value
      continue;
    }
    if (args[i].rfind("--nproc=", 0) == 0) continue;
    launch.push_back(args[i]);
  }
  return run_launch(launch);
}

}  // namespace

int run_train(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("options");
  std::string model_path, data_path, device_name = "auto", optimizer = "Adam", resume, out = "nnplug-run", input_shape;
  int64_t epochs = 15, batch_size = 32;
  int nproc = 1;
  double lr = 3e-3;
  double timeout_s = 300;
  Unsigned seed_option;
  std::string profile_path;
  bool header = false, force = false, checkpoint_activations = false;
  std::string amp;
  options.add_options()("model,m", po::value(&model_path), "model spec (JSON); default: a small CNN for the digits")(
      "data", po::value(&data_path),
      "CSV of features then an integer label, comma-separated (.gz allowed); default: the digits")(
      "header", po::bool_switch(&header), "the first row of the data is a header (a row of text only is one anyway)")(
      "input-shape", po::value(&input_shape),
      "per-sample input shape, e.g. 1,8,8 (default: flat, or 1,8,8 for the digits)")(
      "device,d", po::value(&device_name)->default_value("auto"), "device: auto, cpu, cuda:0, ...")(
      "epochs,e", po::value(&epochs)->default_value(15), "train until this epoch (also when resuming)")(
      "batch-size,b", po::value(&batch_size)->default_value(32), "samples per step")(
      "lr", po::value(&lr)->default_value(3e-3), "learning rate")(
      "optimizer", po::value(&optimizer)->default_value("Adam"),
      "SGD, Adam, AdamW, Adagrad, Adadelta, RMSprop, Adamax, NAdam, RAdam, ASGD, Rprop, or a plugin's kind "
      "(\"acme.Lion\")")("seed", po::value(&seed_option)->default_value(Unsigned{0}),
                         "seed of the split, the shuffling and the initialisation (0 to 18446744073709551615)")(
      "resume", po::value(&resume), "checkpoint to continue from (its model, split and curves)")(
      "out,o", po::value(&out)->default_value("nnplug-run"),
      "folder for the run's files; default: nnplug-run, or the next free nnplug-run-N")(
      "force", po::bool_switch(&force), "replace the run already in --out")(
      "profile", po::value(&profile_path),
      "profile 5 steps after 5 warm-up steps: write a Chrome trace here and print the summary")(
      "amp", po::value(&amp), "mixed precision: bf16 or f16 (autocast on the device; f16 with a gradient scaler)")(
      "checkpoint-activations", po::bool_switch(&checkpoint_activations),
      "keep no activations between forward and backward: each top-level module is recomputed in backward "
      "(less memory, more time)")(
      "nproc", po::value(&nproc)->default_value(1),
      "train data-parallel on this many ranks (processes; --batch-size is divided among them); rank 0 writes "
      "the files")("timeout", po::value(&timeout_s)->default_value(300),
                   "seconds a rank waits for the others (the rendezvous, each collective) before it fails naming "
                   "them; distributed runs only");
  po::variables_map vm;
  if (auto stop =
          parse_options("train", "Trains a model spec on a data set and reports the test accuracy.", options, args, vm))
    return *stop;
  uint64_t seed = seed_option.value;
  if (epochs < 1 || batch_size < 1) throw nnp::Error(NNP_INVALID_ARGUMENT, "--epochs and --batch-size must be >= 1");
  if (!std::isfinite(lr) || lr < 0) throw nnp::Error(NNP_INVALID_ARGUMENT, "--lr must be a finite number >= 0");
  if (nproc < 1 || nproc > 1024) throw nnp::Error(NNP_INVALID_ARGUMENT, "--nproc must be 1 to 1024");
  if (!(timeout_s >= 0.001 && timeout_s <= 86400))
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--timeout must be from 0.001 to 86400 seconds");
  const int world = launched_world_size();
  const int ranks = world > 0 ? world : nproc;  // checked before any rank starts
  if (ranks > 1 && !profile_path.empty())
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--profile profiles one process: leave out --nproc");
  if (batch_size % ranks != 0)
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--batch-size " + std::to_string(batch_size) +
                                               " is the whole batch of a step, divided among the " +
                                               std::to_string(ranks) + " ranks: make it a multiple of " +
                                               std::to_string(ranks));
  if (nproc > 1 && world == 0) return launch_ranks(nproc, args);
  // A launched rank trains through the group, even one of a single rank.
  const bool distributed = world > 0;
  StepProfiler profiling(profile_path, 5, 5);  // checks --profile before anything is written

  auto started = std::chrono::steady_clock::now();
  TrainCheckpoint resumed;
  if (!resume.empty()) {
    resumed = load_train_checkpoint(resume);
    if (resumed.model_spec.find("\"nn.quantized") != std::string::npos)
      throw nnp::Error(NNP_INVALID_ARGUMENT, "--resume " + resume +
                                                 ": the checkpoint holds a quantized model (nnplug quantize), which "
                                                 "evaluates but does not train; resume from the float checkpoint");
    if (!vm["seed"].defaulted() && seed != resumed.seed)
      throw nnp::Error(NNP_INVALID_ARGUMENT, "--seed " + std::to_string(seed) + ": the checkpoint's run used seed " +
                                                 std::to_string(resumed.seed) +
                                                 ", which fixes its split; a resumed run keeps it (leave out --seed)");
    seed = resumed.seed;
    if (vm["optimizer"].defaulted()) optimizer = resumed.optimizer_name;
    if (input_shape.empty()) input_shape = resumed.input_shape;
  }
  if (data_path.empty()) data_path = default_data_path();
  Dataset data = load_csv(data_path, header);
  const bool default_model = model_path.empty() && resume.empty();
  nnp::Shape shape = sample_shape(input_shape, data, default_model);
  nnp::Device device(device_name);
  int rank = 0;
  if (distributed) {
    // One device per rank: NCCL for CUDA tensors, Gloo for host ones.
    const bool cuda = device.name().rfind("cuda", 0) == 0;
    if (cuda) {
      const char* local = std::getenv("LOCAL_RANK");
      device = nnp::Device("cuda:" + std::string(local && *local ? local : "0"));
    }
    nnp::distributed::ProcessGroupOptions group;
    group.device = device.name();
    group.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    rank = nnp::distributed::init_process_group(cuda ? "nccl" : "gloo", group).rank();
  }
  const bool lead = rank == 0;  // prints and writes
  Split split = hold_out_fifth(data.rows, seed);
  if (!resume.empty() && (resumed.data_rows != data.rows || resumed.split != split_fingerprint(data, split.test)))
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--resume " + resume + ": the checkpoint's run held out other rows (" +
                                               std::to_string(resumed.data_rows) + " rows of data then, " +
                                               std::to_string(data.rows) + " in " + data_path +
                                               " now); resume with the same --data");

  nnp::manual_seed(seed);
  const std::string spec = resume.empty() || !model_path.empty() ? model_spec_text(model_path) : resumed.model_spec;
  nnp::nn::ModuleHandle model =
      resume.empty() || !model_path.empty() ? build_model(model_path) : nnp::nn::model_from_spec(spec);
  model.to(device);
  nnp::optim::Optimizer opt(optimizer, model.parameters(), std::move(nnp::nn::Attrs().set("lr", lr)));
  nnp::nn::ModuleHandle criterion = nnp::nn::create_layer("nn.CrossEntropyLoss");
  if (!amp.empty() && amp != "bf16" && amp != "f16")
    throw nnp::Error(NNP_INVALID_ARGUMENT, "--amp " + amp + ": give bf16 or f16");
  const std::string amp_device = device.backend() == "rocm" ? "cuda" : device.backend();
  // f16's small range needs the loss scaled (PyTorch's recipe); bf16 has f32's.
  nnp::amp::GradScaler scaler(65536.0, 2.0, 0.5, 2000, amp == "f16");

  // Inputs are scaled into [-1, 1] by the training rows' largest magnitude.
  float scale = 1;
  if (!resume.empty()) {
    scale = resumed.scale;
  } else {
    const float largest = data.x.index_select(0, nnp::from_vector(split.train)).abs().amax().item<float>();
    if (largest > 0) scale = 1 / largest;
  }
  const std::shared_ptr<nnp::data::TensorDataset> samples = samples_of(data, shape, scale, device);
  check_labels_fit(data, data_path, output_classes(model, *samples));
  int64_t first_epoch = 1;
  std::vector<EpochRecord> history;
  if (!resume.empty()) {
    model.load_state_dict(resumed.model);
    opt.load_state_dict(resumed.optimizer);
    if (!vm["lr"].defaulted()) opt.set("lr", lr);  // the state restores the run's rate; an --lr given replaces it
    // Dropout and other draws in training come from the training device's stream.
    nnp::default_generator(device).set_state(resumed.rng_seed, resumed.rng_offset);
    first_epoch = resumed.epoch + 1;
    history = resumed.history;
  }
  if (first_epoch > epochs) {  // nothing to do, and no file claimed that was not written
    Evaluation test = evaluate(model, samples, split.test);
    if (lead)
      std::printf(
          "nothing left to train: %s has trained %lld epochs already and --epochs %lld asks for no more (give "
          "--epochs %lld or more to go on), so nothing was trained or written\ntest accuracy %.2f%% on %zu "
          "held-out rows\n",
          printable(resume).c_str(), static_cast<long long>(first_epoch - 1), static_cast<long long>(epochs),
          static_cast<long long>(first_epoch), test.accuracy * 100, split.test.size());
    return 0;
  }
  if (lead && !resume.empty())
    std::cout << "resuming from " << printable(resume) << " after epoch " << resumed.epoch << "\n";
  // Rank 0 chooses the folder and writes; the others only train.
  const std::filesystem::path folder =
      lead ? std::filesystem::path(choose_run_folder(out, !vm["out"].defaulted(), force, resume))
           : std::filesystem::path();
  const std::string checkpoint = (folder / "checkpoint.safetensors").string(),
                    best_path = (folder / "best.safetensors").string(), curves = (folder / "curves.svg").string(),
                    metrics = (folder / "metrics.csv").string();
  if (lead)
    std::cout << "training on " << device.name() << (distributed ? " x " + std::to_string(world) + " ranks" : "")
              << (amp.empty() ? "" : " in mixed precision (" + amp + ")")
              << (checkpoint_activations ? " with activation checkpointing" : "") << ": " << split.train.size()
              << " rows, testing on " << split.test.size() << " (" << data_path << "); writing to " << folder.string()
              << "\n";
  // From here the replicas are equal (rank 0's weights) and step alike.
  std::shared_ptr<nnp::nn::parallel::DistributedDataParallel> ddp;
  nnp::nn::ModuleHandle net = model;
  if (distributed) {
    ddp = nnp::nn::make<nnp::nn::parallel::DistributedDataParallel>(model);
    net = nnp::nn::ModuleHandle(ddp);
  }

  TrainCheckpoint state;
  state.model_spec = spec;
  state.input_shape = input_shape_text(shape);
  state.optimizer_name = optimizer;
  state.scale = scale;
  state.seed = seed;
  state.data_rows = data.rows;
  state.split = split_fingerprint(data, split.test);
  double best = -1;
  for (const EpochRecord& e : history) best = std::max(best, e.test_accuracy);

  // What a run stopped during `epoch` leaves behind.
  auto kept = [&](int64_t epoch) {
    if (!lead) return std::string("rank 0 keeps the last checkpoint");
    if (epoch > first_epoch)
      return "the checkpoint of epoch " + std::to_string(epoch - 1) + " in " + checkpoint + " is kept";
    return resume.empty() ? std::string("no checkpoint was written")
                          : "the checkpoint resumed from (" + resume + ") is unchanged";
  };
  const bool terminal = lead && ::isatty(STDOUT_FILENO) != 0;
  const double samples_left_at_start =
      static_cast<double>(split.train.size()) * static_cast<double>(epochs - first_epoch + 1);
  double samples_done = 0;
  const auto run_start = std::chrono::steady_clock::now();
  const auto train_rows = std::make_shared<nnp::data::Subset>(samples, split.train);
  for (int64_t epoch = first_epoch; epoch <= epochs; ++epoch) {
    // Each epoch's order comes from its own stream: a resumed run repeats it.
    nnp::Generator shuffle(seed * 1000003 + static_cast<uint64_t>(epoch));
    nnp::data::DataLoaderOptions loading(distributed ? batch_size / world : batch_size);
    if (distributed) {
      // Every rank draws one process's permutation and takes every world-th
      // index of it: together a step's shares are one process's batch.
      auto share = std::make_shared<nnp::data::DistributedSampler>(rank, world, true, seed * 1000003);
      share->set_epoch(epoch);
      loading.sampler(share);
    } else {
      loading.shuffle(true).generator(&shuffle);
    }
    nnp::data::DataLoader loader(train_rows, loading);
    net.train();
    double loss_sum = 0;
    int64_t correct = 0, seen = 0, step = 0;
    const int64_t steps = loader.size();
    auto epoch_start = std::chrono::steady_clock::now();
    for (nnp::data::Example& batch : loader) {
      const nnp::Tensor &x = batch.data, &y = batch.target;
      profiling.begin_step();
      nnp::Tensor logits, loss;
      {
        std::optional<nnp::autocast> mixed;
        if (!amp.empty()) mixed.emplace(amp_device, amp == "f16" ? nnp::Dtype::f16 : nnp::Dtype::bf16);
        logits = checkpoint_activations ? forward_checkpointed(net, x) : net(x);
        loss = criterion.call({logits, y});
      }
      const double loss_value = loss.item<float>();
      ++step;
      if (!std::isfinite(loss_value)) {
        if (terminal) std::printf("\n");
        throw nnp::Error(NNP_INVALID_ARGUMENT,
                         "the loss became " + std::string(std::isnan(loss_value) ? "NaN" : "infinite") + " at epoch " +
                             std::to_string(epoch) + ", step " + std::to_string(step) + " of " + std::to_string(steps) +
                             ": training stopped; " + kept(epoch) + " (try a smaller --lr)");
      }
      opt.zero_grad();
      scaler.scale(loss).backward();
      scaler.step(opt);  // a plain step unless f16 (then skipped where a gradient overflowed)
      scaler.update();
      profiling.end_step();
      const int64_t n = x.size(0);
      loss_sum += loss_value * static_cast<double>(n);
      {
        nnp::NoGradGuard no_grad;
        correct += logits.argmax(1).eq(y).to(nnp::Dtype::i64).sum().item<int64_t>();
      }
      seen += n;
      samples_done += static_cast<double>(n);
      if (terminal) {
        const double rate = samples_done / std::max(seconds_since(run_start), 1e-9);
        std::printf("\r%s",
                    progress_line(terminal_columns(), static_cast<long long>(epoch), static_cast<long long>(epochs),
                                  static_cast<double>(seen) / static_cast<double>(split.train.size()),
                                  loss_sum / static_cast<double>(seen),
                                  static_cast<double>(correct) / static_cast<double>(seen), rate,
                                  (samples_left_at_start - samples_done) / std::max(rate, 1e-9))
                        .c_str());
        std::fflush(stdout);
      }
    }
    if (distributed) {  // the epoch's figures over every rank's share
      nnp::Tensor sums =
          nnp::from_vector(std::vector<double>{loss_sum, static_cast<double>(correct), static_cast<double>(seen)})
              .to(device);  // where the group's backend moves tensors
      nnp::distributed::all_reduce(sums);
      const std::vector<double> total = sums.to(nnp::Device::cpu()).to_vector<double>();
      loss_sum = total[0];
      correct = static_cast<int64_t>(total[1]);
      seen = static_cast<int64_t>(total[2]);
    }
    const double seconds = seconds_since(epoch_start);
    Evaluation test = evaluate(model, samples, split.test);  // equal replicas: every rank finds the same
    if (!std::isfinite(test.loss)) {  // the epoch's last step broke the model: keep the checkpoint before it
      if (terminal) std::printf("\n");
      throw nnp::Error(NNP_INVALID_ARGUMENT, "the test loss became " +
                                                 std::string(std::isnan(test.loss) ? "NaN" : "infinite") +
                                                 " after epoch " + std::to_string(epoch) + ": training stopped; " +
                                                 kept(epoch) + " (try a smaller --lr)");
    }
    history.push_back({epoch, loss_sum / static_cast<double>(seen),
                       static_cast<double>(correct) / static_cast<double>(seen), test.loss, test.accuracy});
    if (terminal) std::printf("\r%s\r", std::string(static_cast<size_t>(terminal_columns() - 1), ' ').c_str());
    if (!lead) continue;
    std::printf("epoch %lld/%lld  loss %.4f  train acc %5.1f%%  test loss %.4f  test acc %5.1f%%  %.0f samples/s\n",
                static_cast<long long>(epoch), static_cast<long long>(epochs), history.back().train_loss,
                history.back().train_accuracy * 100, test.loss, test.accuracy * 100,
                static_cast<double>(seen) / std::max(seconds, 1e-9));
    std::fflush(stdout);
    state.model = model.state_dict();
    state.optimizer = opt.state_dict();
    state.epoch = epoch;
    state.history = history;
    state.rng_seed = nnp::default_generator(device).initial_seed();
    state.rng_offset = nnp::default_generator(device).offset();
    save_train_checkpoint(checkpoint, state);
    if (test.accuracy > best) {
      best = test.accuracy;
      save_train_checkpoint(best_path, state);
    }
    write_metrics_csv(metrics, history);
    write_curves_svg(curves, history);
  }
  profiling.finish();
  if (distributed) nnp::distributed::destroy_process_group();
  if (!lead) return 0;
  // Only files this run wrote, or that are there, are named: a run resumed
  // into a new folder that never beat its earlier epochs wrote no best.
  char best_text[64];
  std::snprintf(best_text, sizeof best_text, " (%.2f%%)", best * 100);
  const std::string best_note = std::filesystem::exists(best_path)
                                    ? "best " + best_path + best_text
                                    : "no epoch of this run beat the best before it (no best.safetensors here)";
  std::printf("test accuracy %.2f%% on %zu held-out rows (%.1f s); checkpoint %s, %s, metrics %s, curves %s\n",
              history.back().test_accuracy * 100, split.test.size(), seconds_since(started), checkpoint.c_str(),
              best_note.c_str(), metrics.c_str(), curves.c_str());
  return 0;
}

}  // namespace nnplug
