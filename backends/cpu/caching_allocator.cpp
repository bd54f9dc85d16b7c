#include "caching_allocator.hpp"

#include <cstdlib>

namespace nnp::cpu {

size_t CachingAllocator::size_class(size_t bytes) {
  if (bytes <= kSmallLimit) return bytes == 0 ? 64 : (bytes + 63) & ~size_t{63};
  size_t power = 4096;
  while (power * 2 < bytes) power *= 2;
  size_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

std::vector<void*>& CachingAllocator::free_list(size_t size_class) {
  return size_class <= kSmallLimit ? small_[size_class / 64] : large_[size_class];
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t size = size_class(bytes);
  const bool large = size > kSmallLimit;
  {
    std::lock_guard<SpinLock> lock(mutex_);
    if (large) {
      // (an emptied size keeps its entry, so that a free of that size
      // later allocates no map node)
      for (auto fit = large_.lower_bound(size); fit != large_.end() && fit->first <= 2 * size; ++fit)
        if (!fit->second.empty()) {
          char* block = static_cast<char*>(fit->second.back());
          fit->second.pop_back();
          cached_ -= fit->first;
          return block + kHeader;
        }
    } else {
      std::vector<void*>& list = free_list(size);
      if (!list.empty()) {
        void* ptr = list.back();
        list.pop_back();
        cached_ -= size;
        return ptr;
      }
    }
  }
  const size_t total = large ? size + kHeader : size;
  void* ptr = std::aligned_alloc(64, total);
  if (ptr == nullptr) {
    release_cache();
    ptr = std::aligned_alloc(64, total);
  }
  if (ptr == nullptr || !large) return ptr;
  *static_cast<size_t*>(ptr) = size;
  return static_cast<char*>(ptr) + kHeader;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  size_t size = size_class(bytes);
  if (size > kSmallLimit) {
    ptr = static_cast<char*>(ptr) - kHeader;
    size = *static_cast<const size_t*>(ptr);  // the block's own size: a best fit may be larger than asked
  }
  {
    std::lock_guard<SpinLock> lock(mutex_);
    if (cached_ + size <= kMaxCachedBytes) {
      free_list(size).push_back(ptr);
      cached_ += size;
      return;
    }
  }
  std::free(ptr);
}

void CachingAllocator::release_cache() {
  std::lock_guard<SpinLock> lock(mutex_);
  for (std::vector<void*>& blocks : small_) {
    for (void* ptr : blocks) std::free(ptr);
    blocks.clear();
  }
  for (auto& [size, blocks] : large_)
    for (void* ptr : blocks) std::free(ptr);
  large_.clear();
  cached_ = 0;
}

size_t CachingAllocator::cached_bytes() const {
  std::lock_guard<SpinLock> lock(mutex_);
  return cached_;
}

}  // namespace nnp::cpu
