// Graph mode's packed int8 convolutions: an nn.quantized.Conv2d layer node
// (a static int8 Conv2d, with or without its ReLU) whose backend packs its
// weight (nnp_kernels.quantized_conv2d_pack, ABI 1.22) becomes one node
// that quantizes its input, convolves with the weight packed once per plan,
// rescales, requantizes to the layer's output grid and, where the plain
// nn.MaxPool2d layer that alone reads the result tiles it, pools: the
// layer's im2col, its columns' copies and the separate requantization ops
// are gone. An nn.quantized.Linear node runs the same kernel as a 1 x 1
// convolution of its rows. The Identity that static quantization leaves where a fused ReLU
// was is read through. Where a layer has hooks, its tensors were replaced,
// or the kernel does not apply, the node runs the nodes it replaced.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

struct QuantizedConvPacking {
  FusedProgram program;
  std::vector<const Tensor*> sources;  // the buffers read: a write to one remakes the plan
};

QuantizedConvPacking pack_quantized_convolutions(const std::vector<const onnx::GraphNode*>& nodes,
                                                 const std::vector<int32_t>& outputs, int32_t slots);

}  // namespace nnp::core::graph
