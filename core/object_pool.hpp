// A per-thread free list of fixed-size objects, so that creating the tensor
// and storage records of an op result does not call malloc in steady state.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace nnp::core {

template <typename T>
class ObjectPool {
 public:
  template <typename... Args>
  static T* create(Args&&... args) {
    FreeList* list = free_list();
    void* memory;
    if (list && list->head) {
      memory = list->head;
      list->head = list->head->next;
      --list->size;
    } else {
      memory = ::operator new(sizeof(Slot));
    }
    // Without arguments, default-initialised: the members' own initialisers
    // run, and the object is not first zeroed whole as T() would do.
    if constexpr (sizeof...(Args) == 0)
      return new (memory) T;
    else
      return new (memory) T(std::forward<Args>(args)...);
  }

  static void destroy(T* object) {
    object->~T();
    FreeList* list = free_list();
    if (list == nullptr || list->size >= kMaxCached) {
      ::operator delete(static_cast<void*>(object));
      return;
    }
    Node* node = reinterpret_cast<Node*>(object);
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
    alignas(T) unsigned char object[sizeof(T)];
  };
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

}  // namespace nnp::core
