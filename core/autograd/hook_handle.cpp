#include "hook_handle.hpp"

namespace nnp::core {

nnp_hook_handle* make_hook_handle(std::function<void()> remover) {
  nnp_hook_handle* handle = new nnp_hook_handle();
  handle->remover = std::move(remover);
  return handle;
}

void retain(nnp_hook_handle* handle) { handle->refs.fetch_add(1, std::memory_order_relaxed); }

void release(nnp_hook_handle* handle) {
  if (handle->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete handle;
}

}  // namespace nnp::core
