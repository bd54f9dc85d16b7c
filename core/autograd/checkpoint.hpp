// Activation checkpointing (PyTorch's torch.utils.checkpoint, its
// non-reentrant form): a segment's activations are freed once its forward
// has run and made again when backward reaches it.
//
// The forward runs fn with history recorded on detached copies of the
// inputs; then the results are given a CheckpointBackward node of their own
// and the segment's graph is let go. The node's edges lead to the inputs
// that require grad and to whatever else the segment's graph reached
// outside itself (parameters' accumulators, tensors computed before): so
// parameters get gradients even when no input requires grad, and each
// gradient reaches its parameter through the outer backward, as without
// checkpointing. Backward runs fn again on the saved inputs with the random
// generators and autocast state of the forward (same dropout masks, same
// casts), then backward through the new graph, stopping at those edges.
#pragma once

#include <functional>
#include <vector>

#include "../tensor.hpp"

namespace nnp::core::autograd {

using CheckpointFunction = std::function<std::vector<TensorRef>(const std::vector<TensorRef>& inputs)>;

// Without grad mode, fn(inputs) as it is. preserve_rng_state = false leaves
// the generators alone in the recomputation (faster, different masks).
std::vector<TensorRef> checkpoint(CheckpointFunction fn, const std::vector<TensorRef>& inputs, bool preserve_rng_state);

}  // namespace nnp::core::autograd
