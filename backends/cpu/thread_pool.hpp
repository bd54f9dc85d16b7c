// A fixed pool of worker threads for the CPU kernels. Idle workers sleep on a
// condition variable instead of spinning, so they never steal a core from
// OpenBLAS's own threads between parallel regions.
#pragma once

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
  // Calls task(i) for i in [0, count) across the pool; returns when all are done.
  void run(int64_t count, const std::function<void(int64_t)>& task);

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
  int64_t count_ = 0, next_ = 0, done_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

}  // namespace nnp::cpu
