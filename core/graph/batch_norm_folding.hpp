// Graph mode's eval-mode folding: an nn.Conv2d layer whose output only a
// BatchNormalization node in inference reads (its scale, bias, mean and
// variance constants of the plan), and the Relu after it where one reads
// only that, become one node that asks the backend for the convolution with
// the normalisation folded into its weight and bias - w * s per output
// channel and (b - mean) * s + beta, s = scale / sqrt(var + epsilon), made
// once per plan - and the ReLU in its epilogue: the normalisation's pass over
// the output and its tensor are gone. PyTorch exports keep BatchNormalization
// nodes where a model was exported in training mode, as do other converters.
// Where the layer has hooks, pruned or parametrized tensors, or the kernel
// does not apply (a gradient wanted, another device), the node runs the
// nodes it replaced as the program did.
#pragma once

#include <utility>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct BatchNormFolding {
  FusedProgram program;
  std::vector<const Tensor*> sources;  // what was folded in: a write to one remakes the plan
};

BatchNormFolding fold_batch_norms(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                  int32_t slots, const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                  const std::vector<std::pair<int32_t, TensorRef>>& folded);

}  // namespace nnp::core::graph
