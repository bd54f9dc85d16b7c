// What tensors hold on one device (nnp_memory_stats, ABI 1.28): counted
// where the core allocates and frees tensor storage (tensor.cpp), one
// counter per device of a backend (BackendRecord).
#pragma once

#include <nnp/types.h>

#include <atomic>
#include <cstdint>

namespace nnp::core {

class MemoryCounter {
 public:
  void allocated(int64_t bytes) {
    const int64_t now = bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    live_.fetch_add(1, std::memory_order_relaxed);
    total_.fetch_add(1, std::memory_order_relaxed);
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void freed(int64_t bytes) {
    bytes_.fetch_sub(bytes, std::memory_order_relaxed);
    live_.fetch_sub(1, std::memory_order_relaxed);
  }
  // As torch.cuda.reset_peak_memory_stats: the peak starts again from now.
  void reset_peak() { peak_.store(bytes_.load(std::memory_order_relaxed), std::memory_order_relaxed); }
  nnp_memory_stats stats() const {
    nnp_memory_stats s{};
    s.struct_size = sizeof(s);
    s.allocated_bytes = bytes_.load(std::memory_order_relaxed);
    s.peak_allocated_bytes = peak_.load(std::memory_order_relaxed);
    s.allocations = live_.load(std::memory_order_relaxed);
    s.total_allocations = total_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::atomic<int64_t> bytes_{0}, peak_{0}, live_{0}, total_{0};
};

}  // namespace nnp::core
