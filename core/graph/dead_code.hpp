// Graph mode's dead-code elimination: a node none of whose outputs the
// program's outputs need (directly, through later nodes, or through a
// subgraph that reads it from the enclosing scope) is not run. Every node a
// program holds is a function of its inputs (ONNX's ops, layers in
// inference), so dropping one changes no result.
#pragma once

#include <vector>

#include "../onnx/graph_program.hpp"

namespace nnp::core::graph {

// The nodes the outputs need, in their order; `dropped` counts the others.
std::vector<const onnx::GraphNode*> drop_dead_nodes(const std::vector<const onnx::GraphNode*>& nodes,
                                                    const std::vector<int32_t>& outputs, int32_t slots, int* dropped);

}  // namespace nnp::core::graph
