// How many times each value slot of a program is read: by the nodes'
// inputs, by their subgraphs (which read the enclosing scope), and by the
// program's outputs. What the passes ask before they fuse a value away or
// drop a constant.
#pragma once

#include <vector>

#include "../onnx/graph_program.hpp"

namespace nnp::core::graph {

// Adds one to readers[s] for each read of slot s by node n (inputs, and
// its subgraphs' nodes and outputs).
void count_reads(const onnx::GraphNode& n, std::vector<int>& readers);

std::vector<int> count_readers(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                               int32_t slots);

}  // namespace nnp::core::graph
