// Runs backward from one or more roots through the recorded graph.
#pragma once

#include <vector>

#include "node.hpp"

namespace nnp::core::autograd {

// roots[i] receives grad_roots[i] (an empty TensorRef means ones, allowed for
// single-element roots). Leaves accumulate into .grad.
void backward(const std::vector<TensorRef>& roots, std::vector<TensorRef> grad_roots, bool retain_graph);

}  // namespace nnp::core::autograd
