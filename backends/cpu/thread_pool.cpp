#include "thread_pool.hpp"

#include "thread_count.hpp"

namespace nnp::cpu {

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
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (next_ < count_) {
    int64_t i = next_++;
    const std::function<void(int64_t)>* task = task_;
    lock.unlock();
    (*task)(i);
    lock.lock();
    if (++done_ == count_) finished_.notify_all();
  }
}

void ThreadPool::work() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain();
  }
}

void ThreadPool::run(int64_t count, const std::function<void(int64_t)>& task) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int64_t i = 0; i < count; ++i) task(i);
    return;
  }
  std::lock_guard<std::mutex> one_job(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    done_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_ == count_; });
  task_ = nullptr;
}

}  // namespace nnp::cpu
