// What a fusion pass gives: the nodes to run, some of them nodes it made of
// several (kFused, owned here), and how many it made.
#pragma once

#include <memory>
#include <vector>

#include "../onnx/graph_program.hpp"
#include "liveness.hpp"

namespace nnp::core::graph {

struct FusedProgram {
  std::vector<const onnx::GraphNode*> nodes;           // what runs, in order
  std::vector<std::unique_ptr<onnx::GraphNode>> made;  // the fused nodes among them
  int fused = 0;
};

// A pass that replaces chains of nodes by fused nodes: each fused node runs
// where the last node of its chain ran (every input is written by then),
// the others of the chain are dropped, and a node claimed by one chain is
// in no other.
class ChainFusion {
 public:
  explicit ChainFusion(const std::vector<const onnx::GraphNode*>& nodes)
      : nodes_(nodes),
        claimed_(nodes.size(), false),
        absorbed_(nodes.size(), false),
        replacement_(nodes.size(), nullptr) {}
  bool claimed(size_t i) const { return claimed_[i]; }
  void replace(const std::vector<size_t>& chain, std::unique_ptr<onnx::GraphNode> fused) {
    for (size_t c : chain) claimed_[c] = true;
    for (size_t c = 0; c + 1 < chain.size(); ++c) absorbed_[chain[c]] = true;
    replacement_[chain.back()] = fused.get();
    out_.made.push_back(std::move(fused));
    ++out_.fused;
  }
  FusedProgram finish() {
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!absorbed_[i]) out_.nodes.push_back(replacement_[i] ? replacement_[i] : nodes_[i]);
    return std::move(out_);
  }

 private:
  const std::vector<const onnx::GraphNode*>& nodes_;
  std::vector<bool> claimed_, absorbed_;
  std::vector<const onnx::GraphNode*> replacement_;
  FusedProgram out_;
};

// A fused node's input i as a tensor, or null (absent, omitted, a sequence).
inline const Tensor* input_tensor(const onnx::GraphNode& node, const std::vector<onnx::GraphValue>& values, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] < 0) return nullptr;
  const onnx::GraphValue& v = values[static_cast<size_t>(node.inputs[i])];
  return v.sequence ? nullptr : v.tensor.get();
}

// The nodes a fused node replaced, run and recorded as written (where its
// kernel cannot run), each value between them released after its last
// reader among them.
inline void run_originals(const onnx::GraphNode& node, const std::vector<const onnx::GraphNode*>& originals,
                          std::vector<onnx::GraphValue>& values) {
  run_releasing(originals, release_points(originals, node.outputs, static_cast<int32_t>(values.size())), values);
}

// A fused node's result: out as its output where its kernel gave one (out
// not null), else the nodes it replaced.
inline void output_or_originals(const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values, TensorRef out,
                                const std::vector<const onnx::GraphNode*>& originals) {
  if (out) {
    values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
    return;
  }
  run_originals(node, originals, values);
}

}  // namespace nnp::core::graph
