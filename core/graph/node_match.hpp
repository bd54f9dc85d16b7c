// What the fusion passes ask of a program's nodes while they match a pattern.
#pragma once

#include <cstddef>
#include <vector>

#include "../onnx/graph_program.hpp"

namespace nnp::core::graph {

// An op node of `type` with `inputs` inputs and one output it writes.
inline bool is_op(const onnx::GraphNode& n, const char* type, size_t inputs) {
  return n.kind == onnx::GraphNodeKind::kOp && n.op_type == type && n.inputs.size() == inputs &&
         n.outputs.size() == 1 && n.outputs[0] >= 0;
}

// The first node after `from` that reads slot, or nodes.size().
inline size_t reader_of(const std::vector<const onnx::GraphNode*>& nodes, size_t from, int32_t slot) {
  for (size_t j = from + 1; j < nodes.size(); ++j)
    for (int32_t s : nodes[j]->inputs)
      if (s == slot) return j;
  return nodes.size();
}

// The last node before `before` that writes slot, or nodes.size().
inline size_t writer_of(const std::vector<const onnx::GraphNode*>& nodes, size_t before, int32_t slot) {
  for (size_t j = before; j-- > 0;)
    for (int32_t s : nodes[j]->outputs)
      if (s == slot) return j;
  return nodes.size();
}

}  // namespace nnp::core::graph
