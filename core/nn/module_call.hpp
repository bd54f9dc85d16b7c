// Calling a module: forward pre-hooks (global, then the module's), forward,
// forward hooks, and the full backward hooks wired into autograd.
#pragma once

#include <nnp/nnp.h>

#include <functional>
#include <memory>
#include <vector>

#include "../autograd/hook_handle.hpp"
#include "module.hpp"

namespace nnp::core::nn {

TensorRef call(Module& m, const std::vector<TensorRef>& inputs);

nnp_hook_handle* register_hook(Module& m, nnp_module_hook_kind kind, nnp_module_hook_fn fn,
                               std::shared_ptr<void> user_data, bool prepend);
nnp_hook_handle* register_global_hook(nnp_module_hook_kind kind, nnp_module_hook_fn fn,
                                      std::shared_ptr<void> user_data);

// Adds an entry to a hook list and returns the handle that removes it.
template <typename Fn>
nnp_hook_handle* add_hook(const std::shared_ptr<HookList<Fn>>& list, Fn fn, std::shared_ptr<void> user_data,
                          bool prepend);

// A copy of a hook list to run: hooks may be added and removed from other
// threads (and by the hooks themselves) while a module runs its copy.
template <typename Fn>
HookList<Fn> hooks_to_run(const HookList<Fn>& list);

}  // namespace nnp::core::nn
