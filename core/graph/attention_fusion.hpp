// Graph mode's attention: MatMul(Q, Kt), optionally scaled (a Mul of Q or of
// the scores by a one-value constant, or a Div of the scores by one) and
// masked (an Add to the scores), Softmax over the last axis, MatMul with V
// becomes one node that asks the backend for softmax(scale Q K^T + mask) V
// in one pass (nnp_kernels.attention, ABI 1.20), the scores never written
// out. What applies is known only from the tensors: where the kernel does
// not (another softmax axis, a batch the keys broadcast over, a gradient
// wanted, no kernel), the node runs the nodes it replaced as the program
// did.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

FusedProgram fuse_attention(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                            int32_t slots);

}  // namespace nnp::core::graph
