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
    FreeList& list = free_list();
    void* memory;
    if (list.head) {
      memory = list.head;
      list.head = list.head->next;
      --list.size;
    } else {
      memory = ::operator new(sizeof(Slot));
    }
    return new (memory) T(std::forward<Args>(args)...);
  }

  static void destroy(T* object) {
    object->~T();
    FreeList& list = free_list();
    if (list.size >= kMaxCached) {
      ::operator delete(static_cast<void*>(object));
      return;
    }
    Node* node = reinterpret_cast<Node*>(object);
    node->next = list.head;
    list.head = node;
    ++list.size;
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
    ~FreeList() {
      while (head) {
        Node* next = head->next;
        ::operator delete(static_cast<void*>(head));
        head = next;
      }
    }
  };
  static FreeList& free_list() {
    thread_local FreeList list;
    return list;
  }
};

}  // namespace nnp::core
