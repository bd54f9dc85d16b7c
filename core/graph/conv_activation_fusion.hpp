// Graph mode's layer epilogues: an nn.Conv2d layer whose output only a
// Relu reads becomes one node that asks the backend for the convolution
// with the ReLU applied as each output is written
// (nnp_conv2d_params.activation, ABI 1.18): one pass over the output fewer,
// and one tensor fewer. At run time the fused node takes the layer's
// current weight and bias; where the layer has hooks, pruned or
// parametrized tensors, or no kernel applies, it calls the layer and the
// ReLU as the program did.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

FusedProgram fuse_conv_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                            int32_t slots);

// The same for an nn.Linear layer: the backend's GEMM with the bias and the
// ReLU in its epilogue (nnp_kernels.gemm_epilogue, ABI 1.18).
FusedProgram fuse_linear_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                              int32_t slots);

}  // namespace nnp::core::graph
