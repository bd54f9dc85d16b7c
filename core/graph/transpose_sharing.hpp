// Graph mode's shared transposes. An ONNX export of attention transposes
// one input once per projection (PyTorch's multi_head_attention_forward
// gives query, key and value each a Transpose of the same sequence-first
// tensor), and each fused product (gemm_epilogue_fusion.hpp) copies the
// transposed view into the rows it reads: three copies of one layout. The
// Transposes of one value by one permutation that only fused products read,
// two or more of them, become one that lays the value out once (a
// contiguous copy); the others take its result.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct TransposeSharing {
  FusedProgram program;  // program.fused: the values laid out once
  int products = 0;      // the products that read them
};

TransposeSharing share_transposes(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                  int32_t slots);

}  // namespace nnp::core::graph
