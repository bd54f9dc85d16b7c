// The update rules of torch.optim, one per optimizer kind.
#pragma once

#include <map>
#include <nnp/nnp.hpp>
#include <string>

namespace nnp::core::optim {

// The public C++ tensor (nnp.hpp), not the core's record of the same name.
using Tensor = nnp::Tensor;
using nnp::Dtype;

// PyTorch's defaults for a kind (throws for an unknown kind).
std::map<std::string, double> default_options(const std::string& kind);
// The new value of p after one step with gradient g. state holds the
// per-parameter buffers; the new ones are assigned to its entries (no tensor
// is changed in place), so a step that fails part-way can be discarded.
Tensor updated(const std::string& kind, const std::map<std::string, double>& options, const Tensor& p, Tensor g,
               std::map<std::string, Tensor>& state);

}  // namespace nnp::core::optim
