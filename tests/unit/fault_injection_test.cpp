// Faults injected where a real run meets them: the device running out of
// memory or reporting a kernel error at every point of a training step and of
// load_state_dict, checkpoints with a single corrupted field, a process killed
// while saving. Each must end in a clear error that changes nothing and
// leaks nothing (counted by the fault backend here; LeakSanitizer in the asan
// suite).
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "../faults/fault_control.hpp"
#include "test_support.hpp"

extern char** environ;

namespace nnp {
namespace {

using nn::Attrs;
using test::FaultControl;
namespace fs = std::filesystem;

FaultControl& faults() {
  static FaultControl* control = [] {
    if (api().load_plugin(NNP_FAULT_BACKEND) != NNP_OK) throw Error(NNP_NOT_FOUND, api().last_error());
    void* library = dlopen(NNP_FAULT_BACKEND, RTLD_NOW | RTLD_NOLOAD);
    if (library == nullptr) throw Error(NNP_NOT_FOUND, std::string("fault backend not loaded: ") + dlerror());
    auto fn = reinterpret_cast<test::FaultControlFn>(dlsym(library, "nnp_fault_control"));
    if (fn == nullptr) throw Error(NNP_NOT_FOUND, "fault backend exports no nnp_fault_control");
    return fn();
  }();
  return *control;
}

Device faulty() {
  faults();
  return Device("faulty");
}

// Every value a module and its optimizer hold, on the host, by name.
using Snapshot = std::vector<std::pair<std::string, std::vector<double>>>;

Snapshot snapshot(const StateDict& state, const std::string& prefix) {
  Snapshot out;
  for (const auto& [name, t] : state)
    out.emplace_back(prefix + name, t.to(Device::cpu(), Dtype::f64).to_vector<double>());
  return out;
}

Snapshot snapshot(const nn::ModuleHandle& model, const optim::Optimizer* opt = nullptr) {
  Snapshot out = snapshot(model.state_dict(), "model.");
  if (opt)
    for (auto& entry : snapshot(opt->state_dict(), "optimizer.")) out.push_back(std::move(entry));
  return out;
}

struct Trainer {
  nn::ModuleHandle model;
  nn::ModuleHandle loss_fn = nn::create_layer("nn.CrossEntropyLoss");
  optim::Optimizer opt;
  Tensor x, y;

  Trainer(const std::string& optimizer, const Attrs& options)
      : model(make_model()), opt(optimizer, model.parameters(), options) {
    manual_seed(5);
    x = randn({6, 5}).to(faulty());
    y = randint(0, 3, {6}).to(faulty());
  }
  static nn::ModuleHandle make_model() {
    manual_seed(3);
    nn::ModuleHandle m = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
        {"type": "nn.Linear", "in_features": 5, "out_features": 7}, {"type": "nn.Tanh"},
        {"type": "nn.Linear", "in_features": 7, "out_features": 3}]})");
    m.to(faulty());
    return m;
  }
  void step() {
    opt.zero_grad();
    Tensor loss = loss_fn.call({model(x), y});
    loss.backward();
    opt.step();
  }
};

// Arms fault number n of one kind for the duration of body.
template <typename Body>
void with_fault(std::atomic<int64_t>& fail_at, int64_t n, Body&& body) {
  faults().reset();
  fail_at = n;
  try {
    body();
  } catch (...) {
    faults().reset();
    throw;
  }
  faults().reset();
}

// Counts the events of one kind a clean run of body makes.
template <typename Body>
int64_t events_of(std::atomic<int64_t>& counter, Body&& body) {
  faults().reset();
  body();
  return counter.load();
}

// Fails event n for every n a training step makes (allocations or kernel
// calls, per `kind`): each must raise `status`, leave parameters and
// optimizer state as they were and free every block it took; the step then
// succeeds and equals a step that never failed.
void fail_every_point_of_a_step(const std::string& optimizer, const Attrs& options, int warm_steps, bool allocations,
                                nnp_status status) {
  Trainer expected(optimizer, options), trial(optimizer, options);
  for (int i = 0; i < warm_steps; ++i) {
    expected.step();
    trial.step();
  }
  FaultControl& f = faults();
  std::atomic<int64_t>& counter = allocations ? f.allocations : f.kernel_calls;
  std::atomic<int64_t>& fail_at = allocations ? f.fail_allocation : f.fail_kernel_call;
  const int64_t events = events_of(counter, [&] { expected.step(); });
  ASSERT_GT(events, 10) << "a training step should allocate and launch kernels on the faulty device";
  trial.opt.zero_grad();
  const int64_t live_before = f.live_blocks.load();
  const Snapshot before = snapshot(trial.model, &trial.opt);
  for (int64_t n = 1; n <= events; ++n) {
    SCOPED_TRACE(optimizer + (allocations ? ": allocation #" : ": kernel call #") + std::to_string(n) + " of " +
                 std::to_string(events));
    test::expect_error([&] { with_fault(fail_at, n, [&] { trial.step(); }); }, status, {"injected"});
    ASSERT_EQ(snapshot(trial.model, &trial.opt), before) << "a failed step changed the module or optimizer";
    trial.opt.zero_grad();
    ASSERT_EQ(f.live_blocks.load(), live_before) << "a failed step leaked device memory";
  }
  trial.step();
  EXPECT_EQ(snapshot(trial.model, &trial.opt), snapshot(expected.model, &expected.opt));
  std::printf("[ faults   ] %s after %d steps: each of %lld %s failed in turn\n", optimizer.c_str(), warm_steps,
              static_cast<long long>(events), allocations ? "allocations" : "kernel calls");
}

TEST(Faults, OutOfMemoryAtEveryAllocationOfATrainingStepChangesNothing) {
  fail_every_point_of_a_step("Adam", std::move(Attrs().set("lr", 0.01)), 0, true, NNP_OUT_OF_MEMORY);
  fail_every_point_of_a_step("Adam", std::move(Attrs().set("lr", 0.01).set("amsgrad", true)), 2, true,
                             NNP_OUT_OF_MEMORY);
  fail_every_point_of_a_step("SGD", std::move(Attrs().set("lr", 0.1).set("momentum", 0.9)), 1, true, NNP_OUT_OF_MEMORY);
}

TEST(Faults, KernelErrorAtEveryKernelCallOfATrainingStepChangesNothing) {
  fail_every_point_of_a_step("AdamW", std::move(Attrs().set("lr", 0.01)), 1, false, NNP_DEVICE_ERROR);
  fail_every_point_of_a_step("RMSprop", std::move(Attrs().set("lr", 0.01).set("centered", true)), 1, false,
                             NNP_DEVICE_ERROR);
  fail_every_point_of_a_step("Adagrad", std::move(Attrs().set("lr", 0.1)), 0, false, NNP_DEVICE_ERROR);
  fail_every_point_of_a_step("Adadelta", std::move(Attrs()), 1, false, NNP_DEVICE_ERROR);
}

TEST(Faults, LoadStateDictFailingAtAnyAllocationOrKernelChangesNothing) {
  nn::ModuleHandle model = Trainer::make_model();
  manual_seed(99);
  StateDict incoming;
  for (const auto& [name, t] : model.state_dict()) incoming.emplace_back(name, randn(t.shape(), t.dtype()));
  FaultControl& f = faults();
  for (bool allocations : {true, false}) {
    std::atomic<int64_t>& counter = allocations ? f.allocations : f.kernel_calls;
    std::atomic<int64_t>& fail_at = allocations ? f.fail_allocation : f.fail_kernel_call;
    nn::ModuleHandle probe = Trainer::make_model();
    const int64_t events = events_of(counter, [&] { probe.load_state_dict(incoming); });
    ASSERT_GT(events, 0);
    const Snapshot before = snapshot(model);
    const int64_t live_before = f.live_blocks.load();
    for (int64_t n = 1; n <= events; ++n) {
      SCOPED_TRACE((allocations ? "allocation #" : "kernel call #") + std::to_string(n));
      test::expect_error([&] { with_fault(fail_at, n, [&] { model.load_state_dict(incoming); }); },
                         allocations ? NNP_OUT_OF_MEMORY : NNP_DEVICE_ERROR, {"injected"});
      ASSERT_EQ(snapshot(model), before);
      ASSERT_EQ(f.live_blocks.load(), live_before);
    }
    std::printf("[ faults   ] load_state_dict: each of %lld %s failed in turn\n", static_cast<long long>(events),
                allocations ? "allocations" : "kernel calls");
  }
  model.load_state_dict(incoming);
  EXPECT_EQ(snapshot(model), snapshot(incoming, "model."));
}

// Running out of device memory while loading a checkpoint names the tensor
// being made, its shape, dtype and size, and the file, whichever tensor it is.
TEST(Faults, OutOfMemoryWhileLoadingACheckpointNamesTheTensorAndItsSize) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("nnp_oom_" + std::to_string(::getpid()) + ".safetensors")).string();
  save_safetensors({{"first", randn({3, 4})}, {"second", zeros({5, 6}, Dtype::f64)}}, path);
  FaultControl& f = faults();
  const int64_t events = events_of(f.allocations, [&] { load_safetensors(path, faulty()); });
  ASSERT_GE(events, 2);
  std::string messages;
  for (int64_t n = 1; n <= events; ++n) {
    SCOPED_TRACE("allocation #" + std::to_string(n));
    try {
      with_fault(f.fail_allocation, n, [&] { load_safetensors(path, faulty()); });
      ADD_FAILURE() << "the load succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), NNP_OUT_OF_MEMORY);
      const std::string message = e.what();
      for (const std::string& part : {"load " + path + ": tensor '", std::string(" bytes): "), std::string("injected")})
        EXPECT_NE(message.find(part), std::string::npos) << message;
      messages += message + "\n";
    }
  }
  EXPECT_NE(messages.find("tensor 'first' ([3,4] f32, 48 bytes)"), std::string::npos) << messages;
  EXPECT_NE(messages.find("tensor 'second' ([5,6] f64, 240 bytes)"), std::string::npos) << messages;
  std::filesystem::remove(path);
}

// Every single-field corruption of a state dict: strict loading refuses it,
// naming the key, and the module keeps every value.
// The cpu backend steps SGD in place (NNP_BACKEND_SGD_IN_PLACE): a
// parameter listed before one whose update fails must still be untouched,
// its momentum buffer too, so the in-place kernels run last.
TEST(Faults, SgdInPlaceWaitsUntilEveryOtherParameterIsComputed) {
  Tensor on_cpu = randn({4, 3}).requires_grad_();
  Tensor elsewhere = randn({5}).to(faulty()).requires_grad_();
  optim::Optimizer opt("SGD", {on_cpu, elsewhere}, std::move(Attrs().set("lr", 0.1).set("momentum", 0.9)));
  auto set_grads = [&] {
    on_cpu.set_grad(randn({4, 3}));
    elsewhere.set_grad(randn({5}).to(faulty()));
  };
  set_grads();
  opt.step();  // the momentum buffers now exist: the next step on cpu is in place
  set_grads();
  const std::vector<float> before = on_cpu.detach().to_vector<float>();
  const Snapshot state_before = snapshot(opt.state_dict(), "optimizer.");
  FaultControl& f = faults();
  test::expect_error([&] { with_fault(f.fail_kernel_call, 1, [&] { opt.step(); }); }, NNP_DEVICE_ERROR, {"injected"});
  EXPECT_EQ(on_cpu.detach().to_vector<float>(), before);
  EXPECT_EQ(snapshot(opt.state_dict(), "optimizer."), state_before);
  void* const memory = on_cpu.data_ptr();
  opt.step();  // without the fault: in place
  EXPECT_EQ(on_cpu.data_ptr(), memory);
  EXPECT_NE(on_cpu.detach().to_vector<float>(), before);
}

TEST(Faults, LoadStateDictWithAnySingleCorruptedEntryChangesNothing) {
  nn::ModuleHandle model = Trainer::make_model();
  manual_seed(7);
  StateDict good;
  for (const auto& [name, t] : model.state_dict()) good.emplace_back(name, randn(t.shape(), t.dtype()));
  const Snapshot before = snapshot(model);
  int tried = 0;
  auto refuse = [&](const StateDict& bad, nnp_status status, const std::string& key) {
    test::expect_error([&] { model.load_state_dict(bad); }, status, {key});
    ASSERT_EQ(snapshot(model), before) << "a refused load changed the module";
    ++tried;
  };
  for (size_t i = 0; i < good.size(); ++i) {
    const auto& [key, value] = good[i];
    SCOPED_TRACE(key);
    auto with = [&](const std::string& name, const Tensor& t) {
      StateDict bad = good;
      bad[i] = {name, t};
      return bad;
    };
    refuse(with(key, value.reshape({-1}).slice(0, 0, value.numel() - 1)), NNP_SHAPE_MISMATCH, key);  // one short
    refuse(with(key, value.unsqueeze(0)), NNP_SHAPE_MISMATCH, key);                                  // extra dim
    refuse(with(key, value.to(Dtype::i64)), NNP_DTYPE_MISMATCH, key);
    refuse(with(key, value.to(Dtype::boolean)), NNP_DTYPE_MISMATCH, key);
    refuse(with(key + "_renamed", value), NNP_NOT_FOUND, key);  // both missing and unexpected
    refuse(with(key.substr(0, key.size() - 1), value), NNP_NOT_FOUND, key);
    StateDict dropped = good;
    dropped.erase(dropped.begin() + static_cast<std::ptrdiff_t>(i));
    refuse(dropped, NNP_NOT_FOUND, key);
  }
  StateDict extra = good;
  extra.emplace_back("2.running_mean", zeros({3}));
  refuse(extra, NNP_NOT_FOUND, "2.running_mean");
  model.load_state_dict(good);  // the uncorrupted one still loads
  EXPECT_EQ(snapshot(model), snapshot(good, "model."));
  std::printf("[ faults   ] %d corrupted state dicts refused\n", tried);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A safetensors file with its header replaced (the payload kept).
std::string with_header(const std::string& file, const nlohmann::json& header) {
  std::string text = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(text.size()) >> (8 * i));
  uint64_t old_size = 0;
  for (int i = 0; i < 8; ++i) old_size |= static_cast<uint64_t>(static_cast<unsigned char>(file[i])) << (8 * i);
  return out + text + file.substr(8 + old_size);
}

// A checkpoint file with any one header field corrupted, or cut short, or
// with its length prefix wrong: Module::load refuses it and changes nothing.
TEST(Faults, CheckpointWithAnySingleCorruptedFieldChangesNothing) {
  const std::string dir = fs::temp_directory_path() / ("nnp_corrupt_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string good_path = dir + "/good.safetensors", bad_path = dir + "/bad.safetensors";
  {
    nn::ModuleHandle source = Trainer::make_model();
    manual_seed(8);
    for (Tensor p : source.parameters()) p.detach().copy_(randn(p.shape()).to(p.device()));
    source.save(good_path);
  }
  const std::string file = read_file(good_path);
  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= static_cast<uint64_t>(static_cast<unsigned char>(file[i])) << (8 * i);
  const nlohmann::json header = nlohmann::json::parse(file.substr(8, header_size));

  nn::ModuleHandle model = Trainer::make_model();
  const Snapshot before = snapshot(model);
  int tried = 0;
  auto refuse = [&](const std::string& bytes, const std::string& what) {
    SCOPED_TRACE(what);
    write_file(bad_path, bytes);
    try {
      model.load(bad_path);
      ADD_FAILURE() << "a checkpoint with " << what << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()), "") << what;
    }
    ASSERT_EQ(snapshot(model), before) << "a refused checkpoint (" << what << ") changed the module";
    ++tried;
  };
  for (const auto& item : header.items()) {
    const std::string key = item.key();  // a plain variable: lambdas below capture it
    const nlohmann::json& entry = item.value();
    if (key == "__metadata__") continue;
    auto corrupt = [&](const std::function<void(nlohmann::json&)>& edit, const std::string& what) {
      nlohmann::json h = header;
      edit(h[key]);
      refuse(with_header(file, h), key + ": " + what);
    };
    for (const char* dtype : {"F64", "F16", "I64", "I32", "BOOL", "U8", "Q4", "", "f32"})
      corrupt([&](nlohmann::json& e) { e["dtype"] = dtype; }, std::string("dtype ") + dtype);
    corrupt([&](nlohmann::json& e) { e["dtype"] = 32; }, "dtype as a number");
    corrupt([&](nlohmann::json& e) { e.erase("dtype"); }, "no dtype");
    for (size_t d = 0; d < entry["shape"].size(); ++d)
      for (int64_t delta : {int64_t{-1}, int64_t{1}})
        corrupt([&](nlohmann::json& e) { e["shape"][d] = e["shape"][d].get<int64_t>() + delta; },
                "shape[" + std::to_string(d) + "] " + std::to_string(delta));
    corrupt([&](nlohmann::json& e) { e["shape"].push_back(1); }, "an extra dimension");
    corrupt([&](nlohmann::json& e) { e["shape"] = "7"; }, "shape as a string");
    corrupt([&](nlohmann::json& e) { e["shape"][0] = -7; }, "negative shape");
    corrupt([&](nlohmann::json& e) { e["shape"][0] = int64_t{1} << 62; }, "huge shape");
    for (int which : {0, 1})
      for (int64_t delta : {int64_t{-4}, int64_t{-1}, int64_t{1}, int64_t{4}, int64_t{1} << 40})
        corrupt([&](nlohmann::json& e) { e["data_offsets"][which] = e["data_offsets"][which].get<int64_t>() + delta; },
                "data_offsets[" + std::to_string(which) + "] " + std::to_string(delta));
    corrupt([&](nlohmann::json& e) { e.erase("data_offsets"); }, "no data_offsets");
    corrupt([&](nlohmann::json& e) { e["data_offsets"] = {0}; }, "one data offset");
    nlohmann::json renamed = header;
    renamed[key + "x"] = renamed[key];
    renamed.erase(key);
    refuse(with_header(file, renamed), key + " renamed");
    nlohmann::json dropped = header;
    dropped.erase(key);
    refuse(with_header(file, dropped), key + " dropped");
  }
  for (int delta : {-9, -1, 1, 8})  // the length prefix
    refuse(with_header(file, header).replace(0, 1, 1, static_cast<char>(file[0] + delta)),
           "header length " + std::to_string(delta));
  for (size_t cut : {size_t{0}, size_t{4}, size_t{8}, size_t{8} + header_size / 2, size_t{8} + header_size,
                     file.size() - 4, file.size() - 1})
    refuse(file.substr(0, cut), "file cut at byte " + std::to_string(cut));
  refuse(file + "trailing", "bytes after the payload");
  refuse(file.substr(0, 8) + std::string(header_size, '{') + file.substr(8 + header_size), "header not JSON");
  model.load(good_path);  // and the intact file still loads
  EXPECT_NE(snapshot(model), before);
  fs::remove_all(dir);
  std::printf("[ faults   ] %d corrupted checkpoints refused\n", tried);
}

// SIGKILLs a process that saves checkpoints in a loop, at random moments:
// the checkpoint on disk is always a whole one (every tensor holds the
// iteration its metadata names), never a torn or missing file.
TEST(Faults, ProcessKilledWhileSavingLeavesTheLastCheckpointWhole) {
  const std::string dir = fs::temp_directory_path() / ("nnp_kill_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string path = dir + "/checkpoint.safetensors";
  save_safetensors({{"layer0.weight", zeros({512, 512})}}, path, {{"iteration", "0"}});
  std::mt19937 random(1234);
  int kills = 0, mid_save = 0;
  long last_seen = 0;
  for (int round = 0; round < 20; ++round) {
    const std::string before = safetensors_metadata(path, "iteration");
    pid_t child = 0;
    const char* argv[] = {NNP_SAVE_LOOP, path.c_str(), nullptr};
    ASSERT_EQ(posix_spawn(&child, NNP_SAVE_LOOP, nullptr, nullptr, const_cast<char**>(argv), environ), 0);
    // Once it has saved at least once (it spends most of its time saving),
    // kill it at a random moment.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (safetensors_metadata(path, "iteration") == before && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 40000));
    const std::string temporary = path + ".tmp-" + std::to_string(child);
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "save_loop ended by itself (status " << status << ")";
    ++kills;
    if (fs::exists(temporary)) {  // killed while writing: the leftover is the unfinished file
      ++mid_save;
      fs::remove(temporary);
    }
    const long iteration = std::stol(safetensors_metadata(path, "iteration"));
    EXPECT_GE(iteration, 1);
    NamedTensors loaded = load_safetensors(path);
    ASSERT_FALSE(loaded.empty());
    for (const auto& [name, t] : loaded) {
      std::vector<float> values = t.to_vector<float>();
      ASSERT_EQ(values.size(), 512u * 512u) << name;
      for (float v : values) ASSERT_EQ(v, static_cast<float>(iteration)) << name << " is torn";
    }
    last_seen = iteration;
  }
  EXPECT_GT(mid_save, 0) << "no kill landed during a save; the test proved nothing";
  fs::remove_all(dir);
  std::printf("[ faults   ] %d kills, %d while a save was being written; last whole checkpoint: iteration %ld\n", kills,
              mid_save, last_seen);
}

}  // namespace
}  // namespace nnp
