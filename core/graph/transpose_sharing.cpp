#include "transpose_sharing.hpp"

#include <map>
#include <utility>

#include "../autograd/functions.hpp"
#include "../nn/attrs.hpp"
#include "node_match.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// A product graph mode fused (MatMul with its bias and activation): it
// reads its first input as rows, copying a transposed view first.
bool reads_rows(const onnx::GraphNode& n) {
  return n.kind == onnx::GraphNodeKind::kFused && n.op_type.rfind("MatMul+", 0) == 0;
}

// The permutation a Transpose node gives (empty: the default, reversed).
std::vector<int64_t> permutation(const onnx::GraphNode& n) {
  if (!n.attrs) return {};
  auto it = n.attrs->values.find("perm");
  return it == n.attrs->values.end() ? std::vector<int64_t>{} : it->second.ints;
}

}  // namespace

TransposeSharing share_transposes(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                  int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  std::vector<int> row_reads(static_cast<size_t>(slots), 0);  // by products that copy the view
  for (const onnx::GraphNode* n : nodes)
    if (reads_rows(*n) && !n->inputs.empty() && n->inputs[0] >= 0) ++row_reads[static_cast<size_t>(n->inputs[0])];
  // The Transposes of each (value, permutation), in program order.
  std::map<std::pair<int32_t, std::vector<int64_t>>, std::vector<size_t>> groups;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (is_op(*nodes[i], "Transpose", 1) && nodes[i]->inputs[0] >= 0 && nodes[i]->graphs.empty())
      groups[{nodes[i]->inputs[0], permutation(*nodes[i])}].push_back(i);
  ChainFusion fusion(nodes);
  int shared = 0, products_reading = 0;
  for (const auto& [key, members] : groups) {
    int products = 0;
    bool only_products = true;
    for (size_t i : members) {
      const auto out = static_cast<size_t>(nodes[i]->outputs[0]);
      products += row_reads[out];
      only_products = only_products && row_reads[out] == readers[out];
    }
    if (products < 2 || !only_products) continue;
    ++shared;
    products_reading += products;
    const onnx::GraphNode* first = nodes[members.front()];
    auto laid_out = std::make_unique<onnx::GraphNode>();
    laid_out->kind = onnx::GraphNodeKind::kFused;
    laid_out->op_type = "Transpose (laid out once)";
    laid_out->inputs = first->inputs;
    laid_out->outputs = first->outputs;
    laid_out->fused = [first](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      onnx::run_node(*first, values);
      onnx::GraphValue& out = values[static_cast<size_t>(node.outputs[0])];
      // The public op: a capture traces it (an Identity), where the
      // internal one's copy would be an unknown tensor, written as a constant.
      if (out.tensor && !out.sequence) out.tensor = autograd::contiguous(*out.tensor);
    };
    fusion.replace({members.front()}, std::move(laid_out));
    for (size_t m = 1; m < members.size(); ++m) {
      auto same = std::make_unique<onnx::GraphNode>();
      same->kind = onnx::GraphNodeKind::kFused;
      same->op_type = "Transpose (shared)";
      same->inputs = first->outputs;
      same->outputs = nodes[members[m]]->outputs;
      same->fused = [](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
        values[static_cast<size_t>(node.outputs[0])] = values[static_cast<size_t>(node.inputs[0])];
      };
      fusion.replace({members[m]}, std::move(same));
    }
  }
  TransposeSharing result{fusion.finish(), products_reading};
  result.program.fused = shared;
  return result;
}

}  // namespace nnp::core::graph
