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
// The key lists load_state_dict reports (PyTorch's _IncompatibleKeys).
struct IncompatibleKeys {
  std::unique_ptr<nnp_list> missing = std::make_unique<nnp_list>();
  std::unique_ptr<nnp_list> unexpected = std::make_unique<nnp_list>();
};
IncompatibleKeys load_state_dict(Module& m, const nnp_list& state, bool strict, bool assign);
// The state dict to a safetensors file tagged {"format": "pt", "nnplug":
// version} (atomic), and back from one (all or nothing).
void save(Module& m, const std::string& path);
IncompatibleKeys load(Module& m, const std::string& path, bool strict);

nnp_hook_handle* register_state_hook(Module& m, nnp_state_hook_kind kind, nnp_state_hook_fn fn,
                                     std::shared_ptr<void> user_data);

}  // namespace nnp::core::nn
