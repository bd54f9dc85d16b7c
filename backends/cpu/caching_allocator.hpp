// A caching host allocator: freed blocks are kept in per-size free lists and
// handed out again, so steady-state op paths do not reach malloc.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace nnp::cpu {

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
  static constexpr size_t kMaxCachedBytes = size_t{2} << 30;
  static constexpr size_t kSmallLimit = 4096;
  std::vector<void*>& free_list(size_t size_class);  // caller holds mutex_

  mutable std::mutex mutex_;
  std::vector<void*> small_[kSmallLimit / 64 + 1];  // indexed by class / 64: no hashing for small blocks
  std::unordered_map<size_t, std::vector<void*>> large_;
  size_t cached_ = 0;
};

}  // namespace nnp::cpu
