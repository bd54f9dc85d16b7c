#include "dead_code.hpp"

#include <algorithm>

namespace nnp::core::graph {

namespace {

// Every slot a subgraph reads (its nodes' inputs and its outputs), nested subgraphs included.
void mark_subgraph_reads(const onnx::Subgraph& g, std::vector<bool>& needed) {
  for (const onnx::GraphNode& n : g.nodes) {
    for (int32_t s : n.inputs)
      if (s >= 0) needed[static_cast<size_t>(s)] = true;
    for (const onnx::Subgraph& inner : n.graphs) mark_subgraph_reads(inner, needed);
  }
  for (int32_t s : g.outputs)
    if (s >= 0) needed[static_cast<size_t>(s)] = true;
}

}  // namespace

std::vector<const onnx::GraphNode*> drop_dead_nodes(const std::vector<const onnx::GraphNode*>& nodes,
                                                    const std::vector<int32_t>& outputs, int32_t slots, int* dropped) {
  std::vector<bool> needed(static_cast<size_t>(slots), false);
  for (int32_t s : outputs) needed[static_cast<size_t>(s)] = true;
  std::vector<const onnx::GraphNode*> kept;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const onnx::GraphNode& n = **it;
    const bool live = std::any_of(n.outputs.begin(), n.outputs.end(),
                                  [&](int32_t s) { return s >= 0 && needed[static_cast<size_t>(s)]; });
    if (!live) continue;
    kept.push_back(&n);
    for (int32_t s : n.inputs)
      if (s >= 0) needed[static_cast<size_t>(s)] = true;
    for (const onnx::Subgraph& g : n.graphs) mark_subgraph_reads(g, needed);
  }
  *dropped = static_cast<int>(nodes.size() - kept.size());
  std::reverse(kept.begin(), kept.end());
  return kept;
}

}  // namespace nnp::core::graph
