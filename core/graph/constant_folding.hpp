// Graph mode's constant folding: the nodes of a program whose inputs are all
// known before any call (the module's tensors, or what earlier folded nodes
// computed from them) are run once, when the plan is made, and their results
// become constants of the plan. An ONNX file exported from PyTorch slices and
// transposes its attention weights this way on every call.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../onnx/graph_program.hpp"

namespace nnp::core::graph {

struct FoldedProgram {
  std::vector<const onnx::GraphNode*> nodes;             // what is left to run, in order
  std::vector<std::pair<int32_t, TensorRef>> constants;  // slot, its value: computed here
  std::vector<int32_t> sources;                          // the module's tensor slots a constant was computed from
  std::vector<std::string> notes;                        // what was folded, and why a constant node was not
};

// Folds nodes over `known` (slot, tensor: the module's tensors). Runs without
// recording autograd history. Random ops, a plugin's or the application's
// ops (nnplug cannot know they are functions of their inputs), control
// flow, layers and results much larger than their inputs stay in the program.
FoldedProgram fold_constants(const std::vector<onnx::GraphNode>& nodes,
                             const std::vector<std::pair<int32_t, TensorRef>>& known, int32_t slots);

}  // namespace nnp::core::graph
