// The removable handle every hook registration returns (nnp_hook_handle).
// Removing is idempotent; releasing the last reference does not remove.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>

struct nnp_hook_handle {
  std::atomic<int32_t> refs{1};
  std::mutex mutex;
  std::function<void()> remover;  // empty once removed

  void remove() {
    std::function<void()> run;
    {
      std::lock_guard<std::mutex> lock(mutex);
      run.swap(remover);
    }
    if (run) run();
  }
};

namespace nnp::core {

// A handle whose remove() runs `remover` once.
nnp_hook_handle* make_hook_handle(std::function<void()> remover);
void retain(nnp_hook_handle* handle);
void release(nnp_hook_handle* handle);

}  // namespace nnp::core
