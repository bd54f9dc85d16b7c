// Runs backward from one or more roots through the recorded graph.
#pragma once

#include <functional>
#include <vector>

#include "node.hpp"

namespace nnp::core::autograd {

// roots[i] receives grad_roots[i] (an empty TensorRef means ones, allowed for
// single-element roots). Leaves accumulate into .grad.
void backward(const std::vector<TensorRef>& roots, std::vector<TensorRef> grad_roots, bool retain_graph);

// backward from roots that stops at the given nodes: they are not run, nor
// the nodes past them; the gradients that reached each (one per output of
// the node, empty where none did) are returned in the order of stops.
// Activation checkpointing's recomputed segment ends this way.
std::vector<Grads> backward_until(const std::vector<TensorRef>& roots, std::vector<TensorRef> grad_roots,
                                  const std::vector<Node*>& stops);

// Runs callback after every node of the backward running on this thread
// (PyTorch's queue_callback); throws when no backward runs.
using FinalCallback = std::function<void()>;
void queue_callback(FinalCallback callback);

}  // namespace nnp::core::autograd
