// Graph mode's DynamicQuantizeLinear: each such node runs as one kernel
// (nnp_kernels.dynamic_quantize_linear, ABI 1.29) that computes the
// input's range on its device. The composition reads the range on the host,
// which a captured plan must check at every call (a new input's range
// differs, and the plan was captured again each time); the kernel reads
// nothing there, and passes over the input twice instead of six times.
// Where the kernel does not apply, the node runs as written.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

FusedProgram quantize_dynamically_on_device(const std::vector<const onnx::GraphNode*>& nodes);

}  // namespace nnp::core::graph
