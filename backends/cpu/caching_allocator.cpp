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
  {
    std::lock_guard<SpinLock> lock(mutex_);
    std::vector<void*>& list = free_list(size);
    if (!list.empty()) {
      void* ptr = list.back();
      list.pop_back();
      cached_ -= size;
      return ptr;
    }
  }
  void* ptr = std::aligned_alloc(64, size);
  if (ptr == nullptr) {
    release_cache();
    ptr = std::aligned_alloc(64, size);
  }
  return ptr;
}

void CachingAllocator::deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  const size_t size = size_class(bytes);
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
