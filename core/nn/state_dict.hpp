// state_dict and load_state_dict with PyTorch's key names and hooks.
#pragma once

#include <memory>

#include "../autograd/hook_handle.hpp"
#include "module.hpp"

namespace nnp::core::nn {

void state_dict(Module& m, const std::string& prefix, bool keep_vars, nnp_list& out);
// All or nothing: every check (strict keys, shapes, dtypes) passes before
// any tensor changes.
void load_state_dict(Module& m, const nnp_list& state, bool strict, bool assign, nnp_list& missing,
                     nnp_list& unexpected);
nnp_hook_handle* register_state_hook(Module& m, nnp_state_hook_kind kind, nnp_state_hook_fn fn,
                                     std::shared_ptr<void> user_data);

}  // namespace nnp::core::nn
