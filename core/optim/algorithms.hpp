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
// Updates p in place from gradient g; state holds the per-parameter buffers.
void update(const std::string& kind, const std::map<std::string, double>& options, Tensor& p, Tensor g,
            std::map<std::string, Tensor>& state);

}  // namespace nnp::core::optim
