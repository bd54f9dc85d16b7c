#include "readers.hpp"

namespace nnp::core::graph {

void count_reads(const onnx::GraphNode& n, std::vector<int>& readers) {
  for (int32_t s : n.inputs)
    if (s >= 0) ++readers[static_cast<size_t>(s)];
  for (const onnx::Subgraph& g : n.graphs) {
    for (const onnx::GraphNode& inner : g.nodes) count_reads(inner, readers);
    for (int32_t s : g.outputs) ++readers[static_cast<size_t>(s)];
  }
}

std::vector<int> count_readers(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                               int32_t slots) {
  std::vector<int> readers(static_cast<size_t>(slots), 0);
  for (const onnx::GraphNode* n : nodes) count_reads(*n, readers);
  for (int32_t s : outputs) ++readers[static_cast<size_t>(s)];
  return readers;
}

}  // namespace nnp::core::graph
