#include "caching_allocator.hpp"

#include <cstdlib>

namespace nnp::cpu {

size_t CachingAllocator::size_class(size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) & ~size_t{63};
  size_t power = 4096;
  while (power * 2 < bytes) power *= 2;
  size_t step = power / 4;
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t bytes) {
  const size_t size = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* ptr = it->second.back();
      it->second.pop_back();
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
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + size <= kMaxCachedBytes) {
      free_[size].push_back(ptr);
      cached_ += size;
      return;
    }
  }
  std::free(ptr);
}

void CachingAllocator::release_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, blocks] : free_)
    for (void* ptr : blocks) std::free(ptr);
  free_.clear();
  cached_ = 0;
}

size_t CachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_;
}

}  // namespace nnp::cpu
