// Graph mode's direct pooling: an nn.MaxPool2d layer node (no indices, no
// ceil_mode) runs the backend's max_pool2d kernel itself, without the
// module call around it (the hook lists read, the arguments boxed, the
// functional's checks): at batch 1 that call costs as much as the pooling.
// Where the layer has hooks, or the sizes are ones the kernel does not take,
// the node calls the layer as the program did, which checks and refuses as
// it always has.
#pragma once

#include <vector>

#include "fused_program.hpp"

namespace nnp::core::graph {

FusedProgram call_pool_kernels_directly(const std::vector<const onnx::GraphNode*>& nodes);

// The windows of a plain nn.MaxPool2d layer: false for ceil_mode, indices,
// or sizes outside PyTorch's (padding at most half the kernel).
bool max_pool_params(const nnp_module& m, nnp_pool2d_params& p);

// Whether n is a plain nn.MaxPool2d layer node reading slot `input` whose
// windows tile it (stride = window, no padding or dilation); window: its
// size. The pooling the packed convolutions fuse in.
bool tiling_pool(const onnx::GraphNode& n, int32_t input, int64_t (&window)[2]);

}  // namespace nnp::core::graph
