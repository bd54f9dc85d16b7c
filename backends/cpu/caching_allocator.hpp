// A caching host allocator: freed blocks are kept in per-size free lists and
// handed out again, so steady-state op paths do not reach malloc.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace nnp::cpu {

// The free lists' lock: held for a few instructions, by one thread nearly
// always (op paths allocate on the caller's thread), where a mutex's calls
// cost more than the work they guard.
class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();  // its holder may be descheduled
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

class CachingAllocator {
 public:
  // Blocks are 64-byte aligned. Returns nullptr when the system is out of
  // memory even after releasing the cache.
  void* allocate(size_t bytes);
  void deallocate(void* ptr, size_t bytes);
  void release_cache();
  size_t cached_bytes() const;

  // Sizes are rounded to a class so near-equal requests share blocks: 64-byte
  // steps up to 4 KiB, then four classes per power of two.
  static size_t size_class(size_t bytes);

 private:
  // A large request takes the smallest cached block of its class or up to
  // twice its size (best fit): a graph call's values come in many sizes (a
  // U-Net's levels), and blocks kept for one size each held every
  // intermediate of a call once (a 1024x1024 U-Net: a gigabyte more
  // resident memory than its live values). A large block carries its size
  // in the 64 bytes before the pointer handed out.
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;
  static constexpr size_t kHeader = 64;
  static constexpr size_t kSmallLimit = 4096;
  std::vector<void*>& free_list(size_t size_class);  // caller holds mutex_

  mutable SpinLock mutex_;
  std::vector<void*> small_[kSmallLimit / 64 + 1];  // indexed by class / 64: no hashing for small blocks
  std::map<size_t, std::vector<void*>> large_;      // blocks (their headers) by size: lower_bound finds the best fit
  size_t cached_ = 0;
};

}  // namespace nnp::cpu
