// Per-thread free lists of fixed-size blocks, so that the records an op
// makes (its result's tensor and storage records; with autograd, its node
// and the result's autograd state) do not call malloc in steady state.
// BlockPool hands out raw blocks of one size; ObjectPool<T> builds objects in
// them; PoolAllocator<T> lets std::allocate_shared put a shared object and
// its control block in one.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace nnp::core {

template <size_t Size, size_t Align>
class BlockPool {
 public:
  static void* allocate() {
    FreeList* list = free_list();
    if (list && list->head) {
      Node* node = list->head;
      list->head = node->next;
      --list->size;
      return node;
    }
    return ::operator new(sizeof(Slot));
  }

  // Keeps the block for this thread's next allocate (up to kMaxCached).
  static void deallocate(void* block) {
    FreeList* list = free_list();
    if (list == nullptr || list->size >= kMaxCached) {
      ::operator delete(block);
      return;
    }
    Node* node = static_cast<Node*>(block);
    node->next = list->head;
    list->head = node;
    ++list->size;
  }

 private:
  static constexpr size_t kMaxCached = 4096;
  struct Node {
    Node* next;
  };
  union Slot {
    Node node;
    alignas(Align) unsigned char object[Size];
  };
  static_assert(Align <= alignof(std::max_align_t), "over-aligned blocks need aligned new");
  struct FreeList {
    Node* head = nullptr;
    size_t size = 0;
  };
  // Owns this thread's list and frees it at thread exit.
  struct Holder {
    FreeList list;
    ~Holder() {
      while (list.head) {
        Node* next = list.head->next;
        ::operator delete(static_cast<void*>(list.head));
        list.head = next;
      }
      current() = nullptr;
      exited() = true;
    }
  };
  // The hot path reads one trivially destructible initial-exec TLS pointer:
  // no __tls_get_addr and no guard variable on every op. The Holder (whose
  // destructor needs a guard) is touched once per thread.
  static FreeList*& current() {
    static thread_local FreeList* list __attribute__((tls_model("initial-exec"))) = nullptr;
    return list;
  }
  static bool& exited() {
    static thread_local bool flag __attribute__((tls_model("initial-exec"))) = false;
    return flag;
  }
  static FreeList* free_list() {
    FreeList* list = current();
    if (list != nullptr || exited()) return list;  // nullptr after thread exit: plain new/delete
    static thread_local Holder holder;
    current() = &holder.list;
    return current();
  }
};

template <typename T>
class ObjectPool {
 public:
  template <typename... Args>
  static T* create(Args&&... args) {
    void* memory = Blocks::allocate();
    // Without arguments, default-initialised: the members' own initialisers
    // run, and the object is not first zeroed whole as T() would do.
    if constexpr (sizeof...(Args) == 0)
      return new (memory) T;
    else
      return new (memory) T(std::forward<Args>(args)...);
  }

  static void destroy(T* object) {
    object->~T();
    Blocks::deallocate(object);
  }

 private:
  using Blocks = BlockPool<sizeof(T), alignof(T)>;
};

// For std::allocate_shared (single objects: the shared object with its
// control block) and short vectors (autograd's gradient lists, one to four
// tensors a node): up to four objects from a BlockPool of their size, more
// from operator new.
template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(size_t n) {
    switch (n) {
      case 1: return static_cast<T*>(Blocks<1>::allocate());
      case 2: return static_cast<T*>(Blocks<2>::allocate());
      case 3: return static_cast<T*>(Blocks<3>::allocate());
      case 4: return static_cast<T*>(Blocks<4>::allocate());
      default: return std::allocator<T>().allocate(n);
    }
  }
  void deallocate(T* p, size_t n) {
    switch (n) {
      case 1: return Blocks<1>::deallocate(p);
      case 2: return Blocks<2>::deallocate(p);
      case 3: return Blocks<3>::deallocate(p);
      case 4: return Blocks<4>::deallocate(p);
      default: return std::allocator<T>().deallocate(p, n);
    }
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const {
    return false;
  }

 private:
  template <size_t N>
  using Blocks = BlockPool<sizeof(T) * N, alignof(T)>;
};

}  // namespace nnp::core
