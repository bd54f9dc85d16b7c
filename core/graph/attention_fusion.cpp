#include "attention_fusion.hpp"

#include <cmath>
#include <string>

#include "../autograd/functions.hpp"
#include "../device.hpp"
#include "../ops.hpp"
#include "../tensor.hpp"
#include "node_match.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// How the fused node finds its operands among its inputs, and the scale.
struct Layout {
  int32_t mask = -1;                 // input index of the mask, or -1
  std::vector<int32_t> multipliers;  // input indices of one-value constants the scores are multiplied by
  std::vector<int32_t> divisors;     // ... and divided by
  int64_t softmax_axis = -1;
};

// A one-value f32 tensor on the cpu, or NaN.
double one_value(const Tensor* t) {
  static const nnp_device cpu = parse_device("cpu");
  if (!t || t->device.backend != cpu.backend || t->numel != 1 || t->dtype != NNP_F32) return NAN;
  return static_cast<const float*>(t->data())[0];
}

void run_fused(const std::vector<const onnx::GraphNode*>& originals, const Layout& layout, const onnx::GraphNode& node,
               std::vector<onnx::GraphValue>& values) {
  auto tensor = [&](int32_t i) { return i < 0 ? nullptr : input_tensor(node, values, static_cast<size_t>(i)); };
  const Tensor *q = tensor(0), *kt = tensor(1), *v = tensor(2);
  double scale = 1;
  for (int32_t i : layout.multipliers) scale *= one_value(tensor(i));
  for (int32_t i : layout.divisors) scale /= one_value(tensor(i));
  const int32_t rank = q ? q->shape.ndim : 0;
  const bool last_axis = layout.softmax_axis == -1 || layout.softmax_axis == rank - 1;
  if (q && kt && v && rank >= 2 && kt->shape.ndim == rank && last_axis && std::isfinite(scale)) {
    // The keys as [..., S, E]: a view of Kt with its last two axes swapped,
    // by the public op, so that a capture (which traces this plan) writes
    // it: an untraced view would be written as a constant, the keys of the
    // example input.
    const TensorRef k = autograd::transpose(*kt, rank - 2, rank - 1);
    if (TensorRef out = attention_kernel(*q, *k, *v, tensor(layout.mask), scale)) {
      values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
      return;
    }
  }
  run_originals(node, originals, values);
}

}  // namespace

FusedProgram fuse_attention(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                            int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  auto read_once = [&](int32_t slot) { return readers[static_cast<size_t>(slot)] == 1; };
  ChainFusion fusion(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& scores = *nodes[i];
    if (fusion.claimed(i) || !is_op(scores, "MatMul", 2) || scores.inputs[0] < 0 || scores.inputs[1] < 0 ||
        !read_once(scores.outputs[0]))
      continue;
    std::vector<size_t> chain{i};
    int32_t q = scores.inputs[0], result = scores.outputs[0];
    std::vector<int32_t> inputs = {q, scores.inputs[1], -1};  // q, Kt, v (known at the end)
    Layout layout;
    // Q scaled by a Mul that only this product reads.
    if (size_t w = writer_of(nodes, i, q); w < nodes.size() && !fusion.claimed(w) && is_op(*nodes[w], "Mul", 2) &&
                                           read_once(q) && nodes[w]->inputs[0] >= 0 && nodes[w]->inputs[1] >= 0) {
      chain.insert(chain.begin(), w);
      inputs[0] = nodes[w]->inputs[0];
      layout.multipliers.push_back(static_cast<int32_t>(inputs.size()));
      inputs.push_back(nodes[w]->inputs[1]);
    }
    size_t at = i;
    auto next = [&](const char* type, size_t arity) -> const onnx::GraphNode* {
      const size_t j = reader_of(nodes, at, result);
      if (j >= nodes.size() || fusion.claimed(j) || !is_op(*nodes[j], type, arity)) return nullptr;
      if (arity == 2 && nodes[j]->inputs[0] != result) return nullptr;  // the scores on the left
      return nodes[j];
    };
    auto take = [&](const onnx::GraphNode* n) {
      at = reader_of(nodes, at, result);
      chain.push_back(at);
      result = n->outputs[0];
    };
    // The scores scaled, then masked.
    if (const onnx::GraphNode* n = next("Mul", 2); n && n->inputs[1] >= 0 && read_once(n->outputs[0])) {
      layout.multipliers.push_back(static_cast<int32_t>(inputs.size()));
      inputs.push_back(n->inputs[1]);
      take(n);
    } else if (const onnx::GraphNode* d = next("Div", 2); d && d->inputs[1] >= 0 && read_once(d->outputs[0])) {
      layout.divisors.push_back(static_cast<int32_t>(inputs.size()));
      inputs.push_back(d->inputs[1]);
      take(d);
    }
    if (const onnx::GraphNode* n = next("Add", 2); n && n->inputs[1] >= 0 && read_once(n->outputs[0])) {
      layout.mask = static_cast<int32_t>(inputs.size());
      inputs.push_back(n->inputs[1]);
      take(n);
    }
    const onnx::GraphNode* softmax = next("Softmax", 1);
    if (!softmax || !read_once(softmax->outputs[0])) continue;
    if (softmax->attrs) {
      auto axis = softmax->attrs->values.find("axis");
      if (axis != softmax->attrs->values.end()) layout.softmax_axis = axis->second.i;
    }
    take(softmax);
    const size_t w = reader_of(nodes, at, result);
    if (w >= nodes.size() || fusion.claimed(w) || !is_op(*nodes[w], "MatMul", 2) || nodes[w]->inputs[0] != result ||
        nodes[w]->inputs[1] < 0)
      continue;
    chain.push_back(w);
    inputs[2] = nodes[w]->inputs[1];
    std::vector<const onnx::GraphNode*> originals;
    for (size_t c : chain) originals.push_back(nodes[c]);
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = "Attention";
    fused->inputs = inputs;
    fused->outputs = {nodes[w]->outputs[0]};
    fused->fused = [originals, layout](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      run_fused(originals, layout, node, values);
    };
    fusion.replace(chain, std::move(fused));
  }
  return fusion.finish();
}

}  // namespace nnp::core::graph
