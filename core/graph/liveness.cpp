#include "liveness.hpp"

namespace nnp::core::graph {

namespace {

// Records node i as a reader of each slot n reads (its inputs, and what
// its subgraphs read of the enclosing scope, at any depth).
void note_reads(const onnx::GraphNode& n, int32_t i, std::vector<int32_t>& last_reader) {
  auto read = [&](int32_t s) {
    if (s >= 0 && static_cast<size_t>(s) < last_reader.size()) last_reader[static_cast<size_t>(s)] = i;
  };
  for (int32_t s : n.inputs) read(s);
  for (const onnx::Subgraph& g : n.graphs) {
    for (const onnx::GraphNode& inner : g.nodes) note_reads(inner, i, last_reader);
    for (int32_t s : g.outputs) read(s);
  }
}

}  // namespace

std::vector<std::vector<int32_t>> release_points(const std::vector<const onnx::GraphNode*>& nodes,
                                                 const std::vector<int32_t>& outputs, int32_t slots) {
  constexpr int32_t kNever = -1, kKept = -2;
  const size_t count = static_cast<size_t>(slots);
  std::vector<int32_t> last_reader(count, kNever), writer(count, kNever);
  for (size_t i = 0; i < nodes.size(); ++i) {
    note_reads(*nodes[i], static_cast<int32_t>(i), last_reader);
    for (int32_t s : nodes[i]->outputs)
      if (s >= 0 && static_cast<size_t>(s) < count) writer[static_cast<size_t>(s)] = static_cast<int32_t>(i);
  }
  for (int32_t s : outputs)
    if (s >= 0 && static_cast<size_t>(s) < count) last_reader[static_cast<size_t>(s)] = kKept;
  std::vector<std::vector<int32_t>> release_after(nodes.size());
  for (size_t s = 0; s < count; ++s) {
    if (writer[s] == kNever || last_reader[s] == kKept) continue;
    // A value read before it is written (a loop-carried slot) stays.
    const int32_t at = last_reader[s] == kNever ? writer[s] : last_reader[s];
    if (at < writer[s]) continue;
    release_after[static_cast<size_t>(at)].push_back(static_cast<int32_t>(s));
  }
  return release_after;
}

void run_releasing(const std::vector<const onnx::GraphNode*>& nodes,
                   const std::vector<std::vector<int32_t>>& release_after, std::vector<onnx::GraphValue>& values) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    onnx::run_node(*nodes[i], values);
    for (int32_t s : release_after[i]) values[static_cast<size_t>(s)] = onnx::GraphValue{};
  }
}

}  // namespace nnp::core::graph
