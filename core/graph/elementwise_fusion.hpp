// Graph mode's elementwise fusion: a chain of elementwise nodes (the
// single-node unary ops, Add, Sub, Mul, Div), each reading the one before
// it and nothing else reading what the chain computes inside, becomes one
// node that asks the backend for the whole chain in one pass over memory
// (nnp_kernels.elementwise_chain, ABI 1.19): one tensor written instead of
// one per op. Whether it applies is known only from the tensors: where the
// kernel does not (another dtype, no kernel, a gradient wanted), the node
// runs the chain's nodes as the program did.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct ElementwiseFusion {
  FusedProgram program;
  int ops = 0;  // nodes the chains hold
};

ElementwiseFusion fuse_elementwise_chains(const std::vector<const onnx::GraphNode*>& nodes,
                                          const std::vector<int32_t>& outputs, int32_t slots);

}  // namespace nnp::core::graph
