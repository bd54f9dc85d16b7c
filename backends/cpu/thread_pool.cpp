#include "thread_pool.hpp"

#include "thread_count.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace nnp::cpu {
namespace {

thread_local bool inside_task = false;  // a task that calls run() runs inline

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Spins until done() or kSpin has passed; true when done() held.
template <typename Done>
bool spin_until(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + ThreadPool::kSpin;
  for (int i = 1;; ++i) {
    if (done()) return true;
    relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() > give_up) return false;
  }
}

}  // namespace

ThreadPool& ThreadPool::instance() {
  // never destroyed: kernels may run during exit
  static ThreadPool* pool = new ThreadPool(thread_count().threads);
  return *pool;
}

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::drain() {
  inside_task = true;
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_ < count_) {
    int64_t i = next_++;
    const std::function<void(int64_t)>* task = task_;
    lock.unlock();
    (*task)(i);
    lock.lock();
    if (done_.fetch_add(1, std::memory_order_release) + 1 == count_ && caller_sleeping_) finished_.notify_all();
  }
  inside_task = false;
}

void ThreadPool::work() {
  uint64_t seen = 0;
  while (true) {
    if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; })) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_workers_;
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_relaxed) != seen; });
      --sleeping_workers_;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      seen = generation_.load(std::memory_order_relaxed);
    }
    drain();
  }
}

void ThreadPool::run(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1 || inside_task) {
    for (int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::lock_guard<std::mutex> one_job(run_mutex_);
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    done_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    wake = sleeping_workers_ > 0;
  }
  if (wake) wake_.notify_all();
  drain();
  if (!spin_until([&] { return done_.load(std::memory_order_acquire) == count; })) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_ = true;
    finished_.wait(lock, [&] { return done_.load(std::memory_order_relaxed) == count_; });
    caller_sleeping_ = false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  task_ = nullptr;
}

}  // namespace nnp::cpu
