// The steady-state op path does not allocate: after warm-up, a loop of
// small ops makes no call to malloc (DESIGN.md §3, "no malloc in steady
// state"). malloc and friends are interposed for the whole process, plugins
// included, and counted while `counting` is set.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <nnp/nnp.hpp>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
void note() {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  note();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  note();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  note();
  *out = __libc_memalign(alignment, n);
  return *out ? 0 : 12;
}
}

TEST(Allocation, SmallOpsDoNotAllocateInSteadyState) {
  nnp::Tensor b = nnp::rand({16});
  nnp::Tensor c = nnp::zeros({16});
  nnp::Tensor m = nnp::rand({8, 8});
  for (int i = 0; i < 100; ++i) {  // warm the caches
    c = c + b;
    c = (c * b).relu().sum({0}, true) + b;
    nnp::Tensor p = m.matmul(m).softmax(1);
  }
  allocations = 0;
  counting = true;
  for (int i = 0; i < 1000; ++i) {
    c = c + b;
    c = (c * b).relu().sum({0}, true) + b;
    nnp::Tensor p = m.matmul(m).softmax(1);
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(c.shape(), (nnp::Shape{16}));
}
