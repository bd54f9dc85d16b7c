// An owning reference to a module (nnp_module is reference counted).
#pragma once

#include <utility>

#include "../tensor.hpp"

struct nnp_module;

namespace nnp::core {

void retain(nnp_module* m);
void release(nnp_module* m);

class ModuleRef {
 public:
  ModuleRef() = default;
  static ModuleRef adopt(nnp_module* m) { return ModuleRef(m); }
  static ModuleRef share(const nnp_module* m) {
    if (m) retain(const_cast<nnp_module*>(m));
    return ModuleRef(const_cast<nnp_module*>(m));
  }
  ModuleRef(const ModuleRef& other) : m_(other.m_) {
    if (m_) retain(m_);
  }
  ModuleRef(ModuleRef&& other) noexcept : m_(std::exchange(other.m_, nullptr)) {}
  ModuleRef& operator=(ModuleRef other) noexcept {
    std::swap(m_, other.m_);
    return *this;
  }
  ~ModuleRef() {
    if (m_) release(m_);
  }
  nnp_module* get() const { return m_; }
  nnp_module* operator->() const { return m_; }
  nnp_module& operator*() const { return *m_; }
  nnp_module* take() { return std::exchange(m_, nullptr); }
  explicit operator bool() const { return m_ != nullptr; }

 private:
  explicit ModuleRef(nnp_module* m) : m_(m) {}
  nnp_module* m_ = nullptr;
};

}  // namespace nnp::core
