// What the convolution and Linear epilogue passes share: a layer node whose
// output only a Relu reads becomes one node, run in the Relu's place (every
// input it reads is written by then), doing what `fuse` gives for that layer.
#pragma once

#include <functional>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

using FusedRun = std::function<void(const onnx::GraphNode&, std::vector<onnx::GraphValue>&)>;

// fuse(layer node): the fused node's work, or an empty function where the
// layer is not one the pass fuses.
FusedProgram fuse_layers_with_relu(const std::vector<const onnx::GraphNode*>& nodes,
                                   const std::vector<int32_t>& outputs, int32_t slots,
                                   const std::function<FusedRun(const onnx::GraphNode&)>& fuse);

}  // namespace nnp::core::graph
