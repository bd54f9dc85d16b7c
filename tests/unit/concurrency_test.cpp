// Threads: separate modules trained at once, plugin discovery racing with
// first use, hooks added and removed by another thread. Results must equal
// the serial runs. The tsan preset runs these under ThreadSanitizer.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "test_support.hpp"

namespace nnp {
namespace {

using nn::Attrs;

constexpr int kThreads = 4;

// Holds threads until all have arrived, so their first calls overlap.
class StartLine {
 public:
  explicit StartLine(int threads) : waiting_(threads) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (--waiting_ == 0) all_here_.notify_all();
    all_here_.wait(lock, [&] { return waiting_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_here_;
  int waiting_;
};

nn::ModuleHandle make_model(uint64_t seed) {
  manual_seed(seed);
  return nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Linear", "in_features": 16, "out_features": 32}, {"type": "nn.GELU"},
      {"type": "nn.LayerNorm", "normalized_shape": [32]},
      {"type": "nn.Linear", "in_features": 32, "out_features": 4}]})");
}

struct Job {
  nn::ModuleHandle model;
  Tensor x, y;
};

Job make_job(int i, const Device& device) {
  Job job{make_model(100 + static_cast<uint64_t>(i)), Tensor(), Tensor()};
  manual_seed(200 + static_cast<uint64_t>(i));
  job.x = randn({24, 16}).to(device);
  job.y = randint(0, 4, {24}).to(device);
  job.model.to(device);
  return job;
}

// Ten Adam steps; returns the losses and the final parameters.
std::vector<float> train(Job& job) {
  auto loss_fn = nn::create_layer("nn.CrossEntropyLoss");
  optim::Optimizer adam("Adam", job.model.parameters(), std::move(Attrs().set("lr", 0.01)));
  std::vector<float> out;
  for (int step = 0; step < 10; ++step) {
    adam.zero_grad();
    Tensor loss = loss_fn.call({job.model(job.x), job.y});
    loss.backward();
    adam.step();
    out.push_back(loss.item<float>());
  }
  for (const Tensor& p : job.model.parameters())
    for (float v : test::floats(p)) out.push_back(v);
  return out;
}

TEST(Concurrency, SeparateModulesTrainOnManyThreadsAsTheyDoAlone) {
  for (const char* device_name : {"cpu", "reference"}) {
    SCOPED_TRACE(device_name);
    Device device(device_name);
    std::vector<std::vector<float>> serial;
    for (int i = 0; i < kThreads; ++i) {
      Job job = make_job(i, device);
      serial.push_back(train(job));
    }
    std::vector<Job> jobs;
    for (int i = 0; i < kThreads; ++i) jobs.push_back(make_job(i, device));
    std::vector<std::vector<float>> parallel(kThreads);
    std::vector<std::string> errors(kThreads);
    StartLine start(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        try {
          parallel[i] = train(jobs[i]);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < kThreads; ++i) {
      EXPECT_EQ(errors[i], "") << "thread " << i;
      EXPECT_EQ(parallel[i], serial[i]) << "thread " << i << " differs from its serial run";
    }
  }
}

// Each thread has its own grad mode and its own last error.
TEST(Concurrency, GradModeAndLastErrorArePerThread) {
  Tensor w = randn({3});
  w.requires_grad_();
  nnp_device device;
  ASSERT_NE(api().device_parse("cpu:x", &device), NNP_OK);
  const std::string mine = api().last_error();
  std::atomic<bool> no_grad_ready{false}, checked{false};
  std::thread other([&] {
    NoGradGuard guard;
    no_grad_ready = true;
    while (!checked) std::this_thread::yield();
    EXPECT_FALSE((w * 2).requires_grad());
    nnp_device d;
    EXPECT_NE(api().device_parse(":1", &d), NNP_OK);
    EXPECT_NE(std::string(api().last_error()), mine);
  });
  while (!no_grad_ready) std::this_thread::yield();
  EXPECT_TRUE((w * 2).requires_grad()) << "another thread's no_grad reached this one";
  checked = true;
  other.join();
  EXPECT_EQ(std::string(api().last_error()), mine) << "another thread's error reached this one";
}

// The first calls of a process, made by many threads at once: discovery runs
// once, every thread sees every backend, and loading plugins by path from
// several threads while others compute gives one consistent registry.
TEST(Concurrency, PluginDiscoveryRacesWithFirstUse) {
  const std::string good = std::string(NNP_CORPUS_DIR) + "/libgood.so";
  StartLine start(kThreads * 2);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads * 2);
  std::vector<float> sums(kThreads, 0);
  std::vector<int32_t> backend_counts(kThreads, 0);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {  // compute on whatever is there
      start.arrive_and_wait();
      try {
        Device device(i % 2 ? "reference" : "cpu");
        Tensor a = ones({64, 64}, Dtype::f32, device);
        sums[i] = a.matmul(a).sum().item<float>();
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
    threads.emplace_back([&, i] {  // ask about and load plugins
      start.arrive_and_wait();
      nnp_status status = api().load_plugin(good.c_str());
      if (status != NNP_OK) errors[kThreads + i] = api().last_error();
      backend_counts[i] = api().backend_count();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  for (float s : sums) EXPECT_EQ(s, 64.0f * 64 * 64);
  const int32_t backends = api().backend_count();
  for (int32_t seen : backend_counts) EXPECT_GE(seen, 3) << "a thread saw the registry before discovery";
  int good_plugins = 0;
  for (int32_t i = 0; i < api().plugin_count(); ++i) {
    nnp_plugin_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(api().plugin_info(i, &info), NNP_OK);
    if (std::string(info.name) == "test.good") ++good_plugins;
  }
  EXPECT_EQ(good_plugins, 1) << "the same plugin loaded by several threads must be loaded once";
  int testdummy = 0;
  for (int32_t i = 0; i < backends; ++i) {
    nnp_backend_info info{};
    info.struct_size = sizeof info;
    ASSERT_EQ(api().backend_info(i, &info), NNP_OK);
    if (std::string(info.name) == "testdummy") ++testdummy;
  }
  EXPECT_EQ(testdummy, 1);
}

// A second thread adds and removes forward hooks between the first thread's
// calls (handed over in turn): the outputs are those of the same sequence
// run on one thread.
TEST(Concurrency, HooksAddedAndRemovedFromAnotherThreadBetweenCalls) {
  nn::ModuleHandle model = make_model(7);
  Tensor x = randn({5, 16});
  auto scale_by = [](double factor) {
    return [factor](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor& out) { return out * factor; };
  };
  // The sequence: call, add x2, call, add x3, call, remove x2, call, remove x3, call.
  std::vector<std::vector<float>> serial;
  {
    serial.push_back(test::floats(model(x)));
    HookHandle a = model.register_forward_hook(scale_by(2));
    serial.push_back(test::floats(model(x)));
    HookHandle b = model.register_forward_hook(scale_by(3));
    serial.push_back(test::floats(model(x)));
    a.remove();
    serial.push_back(test::floats(model(x)));
    b.remove();
    serial.push_back(test::floats(model(x)));
  }
  std::mutex mutex;
  std::condition_variable turn_changed;
  int turn = 0;  // even: the caller's turn, odd: the hook thread's
  auto wait_for = [&](int parity) {
    std::unique_lock<std::mutex> lock(mutex);
    turn_changed.wait(lock, [&] { return turn % 2 == parity; });
  };
  auto pass = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    ++turn;
    turn_changed.notify_all();
  };
  std::thread hooks([&] {
    wait_for(1);
    HookHandle a = model.register_forward_hook(scale_by(2));
    pass();
    wait_for(1);
    HookHandle b = model.register_forward_hook(scale_by(3));
    pass();
    wait_for(1);
    a.remove();
    pass();
    wait_for(1);
    b.remove();
    pass();
  });
  std::vector<std::vector<float>> threaded;
  for (int call = 0; call < 5; ++call) {
    wait_for(0);
    threaded.push_back(test::floats(model(x)));
    if (call < 4) pass();
  }
  hooks.join();
  EXPECT_EQ(threaded, serial);
}

// Hooks that leave the output alone, added and removed in a tight loop by one
// thread while others call the module: every output equals the hook-free one
// (and nothing crashes or races: the tsan preset runs this).
TEST(Concurrency, HookChurnWhileOtherThreadsCallTheModule) {
  nn::ModuleHandle model = make_model(9);
  Tensor x = randn({5, 16});
  const std::vector<float> expected = test::floats(model(x));
  std::atomic<bool> stop{false};
  std::atomic<int64_t> hook_runs{0};
  std::thread churn([&] {
    while (!stop) {
      HookHandle h = model.register_forward_hook([&](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
        ++hook_runs;
        return Tensor();  // leaves the output as it is
      });
      std::this_thread::yield();
      h.remove();
    }
  });
  std::vector<std::thread> callers;
  std::atomic<int> mismatches{0};
  for (int i = 0; i < kThreads - 1; ++i)
    callers.emplace_back([&] {
      for (int call = 0; call < 200; ++call)
        if (test::floats(model(x)) != expected) ++mismatches;
    });
  for (std::thread& t : callers) t.join();
  stop = true;
  churn.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(test::floats(model(x)), expected);
}

}  // namespace
}  // namespace nnp
