// torch.nn.utils.prune: masks computed as PyTorch computes them, stored as
// it stores them (<name>_orig parameter, <name>_mask buffer, a forward
// pre-hook recomputing <name>), combined as its PruningContainer does.
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <vector>

#include "module.hpp"

namespace nnp::core::nn {

void prune(Module& m, const std::string& name, const nnp_prune_spec& spec);
// importance: empty, or one entry per tensor (each may be null).
void prune_global(const std::vector<Module*>& modules, const std::vector<std::string>& names,
                  const nnp_prune_spec& spec, const std::vector<const Tensor*>& importance);
void prune_remove(Module& m, const std::string& name);
bool is_pruned(const Module& m);

// Recomputes m's pruned tensors from their _orig and _mask (after a load).
void refresh_pruned(Module& m);

}  // namespace nnp::core::nn
