// Graph mode's packed Linear layers: an nn.Linear layer node whose backend
// packs its weight (nnp_kernels.gemm_pack, ABI 1.21) becomes one node that
// runs the product from the packed form made once per plan, with the bias
// and, where a Relu alone reads the layer's output, the ReLU in the
// product's epilogue. An ONNX file's Gemm (PyTorch's and nnplug's export of
// a Linear on a matrix) imports as such a layer, so an MLP read from a file
// stops laying its weights out again on every call. Where a layer has
// hooks, pruned or parametrized tensors, a new weight tensor, or the kernel
// does not apply (a gradient wanted, another device), the node runs the
// nodes it replaced as the program did; a weight the backend does not pack
// (fewer than 32 outputs, no AVX-512) is left to the Linear and ReLU fusion.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct LinearPacking {
  FusedProgram program;
  std::vector<const Tensor*> sources;  // the packed weights: a write to one remakes the plan
};

LinearPacking pack_linear_layers(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                 int32_t slots);

}  // namespace nnp::core::graph
