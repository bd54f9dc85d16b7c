// Graph mode's GEMM epilogue: a MatMul whose output only an Add reads (the
// bias), and optionally a Relu after that, becomes one node that asks the
// backend for the product with the bias and the ReLU applied as it writes
// (nnp_kernels.gemm_epilogue, ABI 1.18): two tensors and two passes over
// them fewer. Which Adds add a bias ([N] against a product [..., N]) is
// known only from the tensors: where the fused kernel does not apply at run
// time (a residual Add, a batched right operand, no kernel), the node runs
// the MatMul, Add and Relu as the program did.
// Where the right operand is a constant of the plan (a weight, or its
// folded transpose) and the backend packs (nnp_kernels.gemm_pack, ABI
// 1.21), it is packed once per plan and the product reads the packed form
// (nnp_kernels.gemm_packed) while that constant is the one given.
#pragma once

#include <utility>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct GemmEpilogueFusion {
  FusedProgram program;
  std::vector<const Tensor*> sources;  // the module tensors packed as they are: a write remakes the plan
};

// module_tensors, folded: the plan's constants by slot.
GemmEpilogueFusion fuse_gemm_epilogues(const std::vector<const onnx::GraphNode*>& nodes,
                                       const std::vector<int32_t>& outputs, int32_t slots,
                                       const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                       const std::vector<std::pair<int32_t, TensorRef>>& folded);

}  // namespace nnp::core::graph
