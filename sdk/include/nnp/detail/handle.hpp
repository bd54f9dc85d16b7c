// nnp/detail/handle.hpp - the RAII base of every C++ object that owns a
// handle from the nnp_api table (Tensor, ModuleHandle, lists, attribute
// sets, optimizers, hook registrations). Traits names how the handle goes:
// `static void release(T*)`, and for reference-counted handles
// `static void retain(T*)`, which makes the object copyable.
#pragma once

#include <utility>

namespace nnp::detail {

template <typename T, typename Traits>
class Handle {
 public:
  Handle() = default;
  // Copying shares the handle; only for traits with retain.
  Handle(const Handle& other) : ptr_(other.ptr_) {
    if (ptr_) Traits::retain(ptr_);
  }
  Handle(Handle&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  Handle& operator=(Handle other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }
  ~Handle() { reset(); }

  T* get() const { return ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  // Hands the reference out: the caller now owns it.
  T* release() { return std::exchange(ptr_, nullptr); }

 protected:
  // Takes over one reference.
  explicit Handle(T* adopted) : ptr_(adopted) {}
  // For a table entry that writes a new handle: `check(api().x(..., out()))`.
  T** out() {
    reset();
    return &ptr_;
  }
  void reset() {
    if (ptr_) Traits::release(std::exchange(ptr_, nullptr));
  }

 private:
  T* ptr_ = nullptr;
};

}  // namespace nnp::detail
