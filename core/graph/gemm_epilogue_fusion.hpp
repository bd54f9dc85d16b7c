// Graph mode's GEMM epilogue: a MatMul whose output only an Add reads (the
// bias), and optionally a Relu after that, becomes one node that asks the
// backend for the product with the bias and the ReLU applied as it writes
// (nnp_kernels.gemm_epilogue, ABI 1.18): two tensors and two passes over
// them fewer. Which Adds add a bias ([N] against a product [..., N]) is
// known only from the tensors: where the fused kernel does not apply at run
// time (a residual Add, a batched right operand, no kernel), the node runs
// the MatMul, Add and Relu as the program did.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

FusedProgram fuse_gemm_epilogues(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                 int32_t slots);

}  // namespace nnp::core::graph
