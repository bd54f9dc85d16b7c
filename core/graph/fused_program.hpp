// What a fusion pass gives: the nodes to run, some of them nodes it made of
// several (kFused, owned here), and how many it made.
#pragma once

#include <memory>
#include <vector>

#include "../onnx/graph_program.hpp"

namespace nnp::core::graph {

struct FusedProgram {
  std::vector<const onnx::GraphNode*> nodes;           // what runs, in order
  std::vector<std::unique_ptr<onnx::GraphNode>> made;  // the fused nodes among them
  int fused = 0;
};

}  // namespace nnp::core::graph
