// A registry of named things that plugins, the built-in library and
// applications add to and nothing removes (optimizer algorithms, graph ops):
// thread-safe, each entry at a fixed address until process exit, so the C
// views handed out through the table stay valid.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "error.hpp"

namespace nnp::core {

// A registration's struct must be at least its first released layout.
inline void check_registered_size(const char* entry, size_t given, size_t released, const char* struct_name) {
  if (given < released)
    fail(NNP_ABI_MISMATCH, entry, ": struct_size ", given, " is smaller than the first released layout (", released,
         " bytes); set it to sizeof(", struct_name, ")");
}

// Entry has `std::string name`, `std::string origin` (who registered it, for
// messages) and `void bind_c_view()`, which points its C description into
// itself once it has its final address.
template <typename Entry>
class NamedRegistry {
 public:
  // what: how messages name an entry ("optimizer", "graph op").
  // first: what is registered from the start (the built-in library's).
  NamedRegistry(const char* what, const std::vector<Entry>& first) : what_(what) {
    for (const Entry& e : first) add(e);
  }

  void add(Entry entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& existing : entries_)
      if (existing.name == entry.name)
        fail(NNP_INVALID_ARGUMENT, what_, " '", entry.name, "' is already registered (by ", existing.origin, ")");
    entries_.push_back(std::move(entry));
    entries_.back().bind_c_view();
  }
  const Entry* find(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  int32_t count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int32_t>(entries_.size());
  }
  // NNP_NOT_FOUND beyond the count.
  const Entry& at(int32_t i) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (i < 0 || i >= static_cast<int32_t>(entries_.size()))
      fail(NNP_NOT_FOUND, what_, " index ", i, " is out of range (", entries_.size(), " registered)");
    return entries_[static_cast<size_t>(i)];
  }
  // Every name, in registration order, joined with ", " (for messages).
  std::string names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    for (const Entry& e : entries_) out += (out.empty() ? "" : ", ") + e.name;
    return out;
  }

 private:
  const char* what_;
  mutable std::mutex mutex_;
  std::deque<Entry> entries_;
};

}  // namespace nnp::core
