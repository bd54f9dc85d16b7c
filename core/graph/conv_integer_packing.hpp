// Graph mode's packed ConvInteger: a ConvInteger node (ONNX's integer
// convolution, as dynamically quantized models carry them after each
// DynamicQuantizeLinear) whose weight and weight zero point are constants
// of the plan, and whose backend packs them (nnp_kernels.
// conv2d_integer_pack, ABI 1.29), becomes a node that runs the convolution
// from the form packed once per plan: exact int32 sums, as the node's own
// composition gives, without laying the weight out again each call. Where
// the kernel does not apply (another device, a geometry it declines at run
// time), the node runs as written.
#pragma once

#include <utility>
#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct ConvIntegerPacking {
  FusedProgram program;
  std::vector<const Tensor*> sources;  // the module tensors packed as they are: a write remakes the plan
};

// module_tensors, folded: the plan's constants by slot.
ConvIntegerPacking pack_conv_integers(const std::vector<const onnx::GraphNode*>& nodes,
                                      const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                      const std::vector<std::pair<int32_t, TensorRef>>& folded);

}  // namespace nnp::core::graph
