// Calling a module: forward pre-hooks (global, then the module's), forward,
// forward hooks, and the full backward hooks wired into autograd. A call with
// tensors and a call with values (numbers, strings, None; ABI 1.3) run the
// same steps.
#pragma once

#include <nnp/nnp.h>

#include <functional>
#include <memory>
#include <vector>

#include "../autograd/hook_handle.hpp"
#include "module.hpp"
#include "named_list.hpp"

namespace nnp::core::nn {

// module(*inputs) with tensors, giving one tensor (module_call).
TensorRef call(Module& m, const std::vector<TensorRef>& inputs);
// module(*args) with any positional values, giving the list of results
// (module_call_values).
nnp_list call_values(Module& m, nnp_list args);

// Whether a call of m runs its forward and nothing else: no hook of any
// kind, its own or global, and no pruned or parametrized tensor. What graph
// mode checks before it runs a layer's work fused with the next op's.
bool calls_plainly(const Module& m);

// Hooks of any kind that see tensors, and forward hooks that see values.
nnp_hook_handle* register_hook(Module& m, nnp_module_hook_kind kind, ModuleHookFn fn, std::shared_ptr<void> user_data,
                               bool prepend);
nnp_hook_handle* register_global_hook(nnp_module_hook_kind kind, ModuleHookFn fn, std::shared_ptr<void> user_data);

// Positional arguments only: an entry with a name (a keyword argument) is
// refused, naming `who`.
void check_positional(const nnp_list& args, const char* who);

// Adds an entry to a hook list and returns the handle that removes it.
template <typename Fn>
nnp_hook_handle* add_hook(const std::shared_ptr<HookList<Fn>>& list, Fn fn, std::shared_ptr<void> user_data,
                          bool prepend);

// A copy of a hook list to run: hooks may be added and removed from other
// threads (and by the hooks themselves) while a module runs its copy.
template <typename Fn>
HookList<Fn> hooks_to_run(const HookList<Fn>& list);

}  // namespace nnp::core::nn
