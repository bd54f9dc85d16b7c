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

// The geometry of an nn.Conv2d layer node (activation: ReLU), false where
// the fused kernel does not apply (padding by rule or by a mode other than
// zeros); and a layer's weight and bias (bias null where it has none),
// false where it has no weight.
bool conv2d_geometry(const onnx::GraphNode& n, nnp_conv2d_params& p);
bool weight_and_bias(nnp_module& layer, const Tensor*& weight, const Tensor*& bias);

// The same for an nn.Linear layer: the backend's GEMM with the bias and the
// ReLU in its epilogue (nnp_kernels.gemm_epilogue, ABI 1.18).
FusedProgram fuse_linear_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                              int32_t slots);

}  // namespace nnp::core::graph
