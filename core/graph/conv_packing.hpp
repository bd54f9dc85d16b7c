// Graph mode's packed convolutions: an nn.Conv2d layer node whose backend
// packs its weight (nnp_kernels.conv2d_pack, ABI 1.21) becomes one node
// that runs the convolution from the packed form made once per plan, with
// the Relu that alone reads its output and the plain nn.MaxPool2d layer
// (windows = strides, no padding) that alone reads that, both fused in:
// the weight is not laid out again each call, and neither the convolution's
// output nor the activation's is written out and read back. Where a layer
// has hooks, pruned or parametrized tensors, a new weight tensor, or the
// kernel does not apply (a gradient wanted, another device), the node runs
// the nodes it replaced as the program did.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct ConvPacking {
  FusedProgram program;
  std::vector<const Tensor*> sources;  // the packed weights: a write to one remakes the plan
};

ConvPacking pack_convolutions(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                              int32_t slots);

}  // namespace nnp::core::graph
