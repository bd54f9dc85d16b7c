// Graph mode's residual normalization: an Add whose one reader is a
// LayerNormalization over the last axis (a post-norm transformer's
// x = LayerNorm(x + sublayer(x)), twice a layer; ONNX Runtime's
// SkipLayerNormalization) becomes one node that asks the backend for both
// in one pass (nnp_kernels.add_layer_norm, ABI 1.23): the sum is never
// written out and read back. Where the kernel does not apply at run time
// (a broadcast sum, another axis, no kernel), the node runs the Add and the
// LayerNormalization as the program did.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

FusedProgram fuse_add_layer_norms(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                  int32_t slots);

}  // namespace nnp::core::graph
