// A fixed pool of worker threads for the CPU kernels. A training step calls
// the pool dozens of times, a few microseconds apart, so a worker that has
// finished spins for a short while (kSpin) watching for the next job before
// it sleeps on a condition variable: waking a sleeping thread costs more than
// most of the ops it would run. The caller waits for the last task the same
// way. OpenBLAS's own threads stay idle (cpu_gemm.cpp runs it single-threaded
// and splits products over this pool), so the spinning takes no core from it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nnp::cpu {

class ThreadPool {
 public:
  static ThreadPool& instance();
  // Threads that take part in run(), the caller included.
  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls task(i) for i in [0, count) across the pool; returns when all are
  // done. Called from inside a task, it runs the tasks on the calling thread.
  void run(int64_t count, const std::function<void(int64_t)>& task);

  // How long a thread watches for work (or for the last task) before it sleeps.
  static constexpr std::chrono::microseconds kSpin{100};

 private:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  void work();
  void drain();  // runs tasks of the current job until none are left

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::mutex run_mutex_;  // one job at a time
  std::condition_variable wake_, finished_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t count_ = 0, next_ = 0;
  // Written under mutex_; atomic so that spinning threads can read them without it.
  std::atomic<int64_t> done_{0};
  std::atomic<uint64_t> generation_{0};
  int sleeping_workers_ = 0;
  bool caller_sleeping_ = false;
  bool stopping_ = false;
};

}  // namespace nnp::cpu
