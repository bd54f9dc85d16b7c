#include "node_order.hpp"

#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../error.hpp"

namespace nnp::core::onnx {

namespace {

std::string describe(const ::onnx::NodeProto& n) {
  return "'" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name()) + "' (" +
         n.op_type() + ")";
}

// The names a subgraph reads that it does not define itself: values of an
// enclosing graph (its nested subgraphs' reads included).
void outer_reads(const ::onnx::GraphProto& g, std::unordered_set<std::string>& reads, size_t depth, size_t max_depth,
                 const std::string& label) {
  if (depth > max_depth)
    fail(NNP_CORRUPT_DATA, "onnx load ", label, ": subgraphs nest deeper than ", max_depth, " levels");
  std::unordered_set<std::string> defined;
  for (const ::onnx::ValueInfoProto& v : g.input()) defined.insert(v.name());
  for (const ::onnx::TensorProto& t : g.initializer()) defined.insert(t.name());
  for (const ::onnx::NodeProto& n : g.node()) defined.insert(n.output().begin(), n.output().end());
  std::unordered_set<std::string> inner;
  for (const ::onnx::NodeProto& n : g.node()) {
    inner.insert(n.input().begin(), n.input().end());
    for (const ::onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) outer_reads(a.g(), inner, depth + 1, max_depth, label);
      for (const ::onnx::GraphProto& each : a.graphs()) outer_reads(each, inner, depth + 1, max_depth, label);
    }
  }
  for (const ::onnx::ValueInfoProto& v : g.output()) inner.insert(v.name());
  for (const std::string& name : inner)
    if (!name.empty() && !defined.count(name)) reads.insert(name);
}

bool sort_graph(::onnx::GraphProto& g, const std::string& label, size_t depth, size_t max_depth) {
  if (depth > max_depth)
    fail(NNP_CORRUPT_DATA, "onnx load ", label, ": subgraphs nest deeper than ", max_depth, " levels");
  bool changed = false;
  for (::onnx::NodeProto& n : *g.mutable_node())
    for (::onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_g()) changed |= sort_graph(*a.mutable_g(), label, depth + 1, max_depth);
      for (::onnx::GraphProto& each : *a.mutable_graphs()) changed |= sort_graph(each, label, depth + 1, max_depth);
    }
  const int count = g.node_size();
  // The node that writes each value (the first, where a file writes one
  // twice: onnx::checker refuses that by name afterwards).
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i)
    for (const std::string& out : g.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  // Each node's readers, and how many of its producers are still to come.
  std::vector<std::vector<int>> readers(static_cast<size_t>(count));
  std::vector<int> waiting(static_cast<size_t>(count), 0);
  bool in_order = true;
  for (int i = 0; i < count; ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    std::unordered_set<std::string> reads(n.input().begin(), n.input().end());
    for (const ::onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) outer_reads(a.g(), reads, depth + 1, max_depth, label);
      for (const ::onnx::GraphProto& each : a.graphs()) outer_reads(each, reads, depth + 1, max_depth, label);
    }
    std::unordered_set<int> from;
    for (const std::string& name : reads) {
      const auto it = name.empty() ? producer.end() : producer.find(name);
      if (it == producer.end() || it->second == i || !from.insert(it->second).second) continue;
      readers[static_cast<size_t>(it->second)].push_back(i);
      ++waiting[static_cast<size_t>(i)];
      in_order &= it->second < i;
    }
  }
  if (in_order) return changed;
  // Kahn's algorithm, the ready node first in the file's order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i)
    if (waiting[static_cast<size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(count));
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int r : readers[static_cast<size_t>(i)])
      if (--waiting[static_cast<size_t>(r)] == 0) ready.push(r);
  }
  if (static_cast<int>(order.size()) < count) {
    std::string names;
    int named = 0;
    for (int i = 0; i < count && named < 3; ++i)
      if (waiting[static_cast<size_t>(i)] > 0) names += (named++ ? ", " : "") + describe(g.node(i));
    const int left = count - static_cast<int>(order.size());
    fail(NNP_CORRUPT_DATA, "onnx load ", label, ": graph '", g.name(), "' has a cycle: ", left,
         " nodes read outputs that depend on their own (", names, left > 3 ? ", ..." : "",
         "); a graph's nodes must form no cycle");
  }
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> sorted;
  sorted.Reserve(count);
  for (int i : order) sorted.Add()->Swap(g.mutable_node(i));
  g.mutable_node()->Swap(&sorted);
  return true;
}

}  // namespace

bool sort_nodes(::onnx::GraphProto& g, const std::string& label, size_t max_depth) {
  return sort_graph(g, label, 0, max_depth);
}

}  // namespace nnp::core::onnx
