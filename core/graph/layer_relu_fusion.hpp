// What the convolution and Linear epilogue passes share: a layer node whose
// output only a Relu reads becomes one node, run in the Relu's place (every
// input it reads is written by then). It asks the pass's kernel for the
// layer's output with the ReLU applied; where the layer has hooks, pruned
// or parametrized tensors, or the kernel gives nothing (a gradient wanted,
// another device), it runs the layer node and the Relu node as written, so
// autograd records them as it would.
#pragma once

#include <functional>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

// relu(layer(x)) in one kernel, or null where it does not apply.
using LayerReluKernel = std::function<TensorRef(const Tensor& x, nnp_module& layer)>;

// kernel_for(layer node): the kernel for that layer, or an empty function
// where the layer is not one the pass fuses.
FusedProgram fuse_layers_with_relu(const std::vector<const onnx::GraphNode*>& nodes,
                                   const std::vector<int32_t>& outputs, int32_t slots,
                                   const std::function<LayerReluKernel(const onnx::GraphNode&)>& kernel_for);

}  // namespace nnp::core::graph
