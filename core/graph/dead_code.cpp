#include "dead_code.hpp"

#include <algorithm>

#include "readers.hpp"

namespace nnp::core::graph {

std::vector<const onnx::GraphNode*> drop_dead_nodes(const std::vector<const onnx::GraphNode*>& nodes,
                                                    const std::vector<int32_t>& outputs, int32_t slots, int* dropped) {
  std::vector<int> needed(static_cast<size_t>(slots), 0);  // reads by the outputs and the nodes kept
  for (int32_t s : outputs) ++needed[static_cast<size_t>(s)];
  std::vector<const onnx::GraphNode*> kept;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const onnx::GraphNode& n = **it;
    const bool live = std::any_of(n.outputs.begin(), n.outputs.end(),
                                  [&](int32_t s) { return s >= 0 && needed[static_cast<size_t>(s)] > 0; });
    if (!live) continue;
    kept.push_back(&n);
    count_reads(n, needed);
  }
  *dropped = static_cast<int>(nodes.size() - kept.size());
  std::reverse(kept.begin(), kept.end());
  return kept;
}

}  // namespace nnp::core::graph
