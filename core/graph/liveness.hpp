// When each value of a program dies. A graph run keeps its values in slots;
// held to the end of the call, every intermediate of a large model is alive
// at once (an int8 U-Net at 1024^2 held 7 GB where ONNX Runtime's plan needs
// 2). The release points free each value as soon as its last reader has
// run, in the compiled plan and in the program run as written alike; the
// allocator's cache then hands the same blocks to the values after it.
#pragma once

#include <cstdint>
#include <vector>

#include "../onnx/graph_program.hpp"

namespace nnp::core::graph {

// Per node of `nodes` (run in that order), the slots to empty once it has
// run: values a node of the list wrote whose last read (by a node's inputs
// or its subgraphs) is that node's, or that nothing reads. The program's
// outputs, its inputs and the values no node writes (module tensors,
// folded constants) are never released.
std::vector<std::vector<int32_t>> release_points(const std::vector<const onnx::GraphNode*>& nodes,
                                                 const std::vector<int32_t>& outputs, int32_t slots);

// Runs nodes in order over values, releasing each value at its point.
void run_releasing(const std::vector<const onnx::GraphNode*>& nodes,
                   const std::vector<std::vector<int32_t>>& release_after, std::vector<onnx::GraphValue>& values);

}  // namespace nnp::core::graph
