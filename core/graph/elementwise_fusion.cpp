#include "elementwise_fusion.hpp"

#include <algorithm>
#include <cstring>

#include "../ops.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

constexpr size_t kMaxInputs = 16, kMaxSteps = 64;  // the kernel's limits

// The step an ONNX node is, when it is one a chain can hold: one output,
// no attributes, and the inputs its op takes.
bool as_step(const onnx::GraphNode& n, nnp_elementwise_step& step) {
  if (n.kind != onnx::GraphNodeKind::kOp || n.outputs.size() != 1 || n.outputs[0] < 0 ||
      (n.attrs && !n.attrs->values.empty()))
    return false;
  static const struct {
    const char* type;
    int32_t op;
  } kUnary[] = {{"Neg", NNP_UNARY_NEG},    {"Abs", NNP_UNARY_ABS},   {"Exp", NNP_UNARY_EXP},
                {"Log", NNP_UNARY_LOG},    {"Sqrt", NNP_UNARY_SQRT}, {"Sin", NNP_UNARY_SIN},
                {"Cos", NNP_UNARY_COS},    {"Tanh", NNP_UNARY_TANH}, {"Sigmoid", NNP_UNARY_SIGMOID},
                {"Relu", NNP_UNARY_RELU},  {"Sign", NNP_UNARY_SIGN}, {"Erf", NNP_UNARY_ERF},
                {"Round", NNP_UNARY_ROUND}},
    kBinary[] = {{"Add", NNP_BINARY_ADD}, {"Sub", NNP_BINARY_SUB}, {"Mul", NNP_BINARY_MUL}, {"Div", NNP_BINARY_DIV}};
  for (const auto& u : kUnary)
    if (n.op_type == u.type && n.inputs.size() == 1 && n.inputs[0] >= 0) {
      step = {NNP_STEP_UNARY, u.op, n.inputs[0], -1};
      return true;
    }
  for (const auto& b : kBinary)
    if (n.op_type == b.type && n.inputs.size() == 2 && n.inputs[0] >= 0 && n.inputs[1] >= 0) {
      step = {NNP_STEP_BINARY, b.op, n.inputs[0], n.inputs[1]};
      return true;
    }
  return false;
}

// The fused node's work: the kernel where it applies, else the nodes it replaced.
void run_chain(const std::vector<const onnx::GraphNode*>& originals, const std::vector<nnp_elementwise_step>& steps,
               const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
  std::vector<const Tensor*> inputs;
  inputs.reserve(node.inputs.size());
  for (int32_t s : node.inputs) {
    const onnx::GraphValue& v = values[static_cast<size_t>(s)];
    if (v.sequence || !v.tensor) break;
    inputs.push_back(v.tensor.get());
  }
  if (inputs.size() == node.inputs.size())
    if (TensorRef out = elementwise_chain_kernel(inputs, steps)) {
      values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
      return;
    }
  run_originals(node, originals, values);
}

}  // namespace

ElementwiseFusion fuse_elementwise_chains(const std::vector<const onnx::GraphNode*>& nodes,
                                          const std::vector<int32_t>& outputs, int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  ElementwiseFusion result;
  FusedProgram& out = result.program;
  std::vector<bool> claimed(nodes.size(), false);
  std::vector<const onnx::GraphNode*> replacement(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    nnp_elementwise_step step{};
    if (claimed[i] || !as_step(*nodes[i], step)) continue;
    // Grow the chain while the next reader of its value is the only one
    // (all of the value's reads are that node's) and is a step itself.
    std::vector<size_t> chain{i};
    std::vector<nnp_elementwise_step> by_slot{step};  // operands still as slots
    std::vector<int32_t> externals;
    auto add_externals = [&](const nnp_elementwise_step& st, int32_t produced_by_chain) {
      for (int32_t s : {st.a, st.b})
        if (s >= 0 && s != produced_by_chain && std::find(externals.begin(), externals.end(), s) == externals.end())
          externals.push_back(s);
    };
    add_externals(step, -1);
    for (;;) {
      const int32_t value = nodes[chain.back()]->outputs[0];
      size_t j = chain.back() + 1;
      while (j < nodes.size() &&
             std::find(nodes[j]->inputs.begin(), nodes[j]->inputs.end(), value) == nodes[j]->inputs.end())
        ++j;
      nnp_elementwise_step next{};
      if (j == nodes.size() || claimed[j] || !as_step(*nodes[j], next) || chain.size() == kMaxSteps) break;
      const int reads_by_j = static_cast<int>(std::count(nodes[j]->inputs.begin(), nodes[j]->inputs.end(), value));
      if (readers[static_cast<size_t>(value)] != reads_by_j) break;  // read elsewhere too, or a graph output
      std::vector<int32_t> before = externals;
      add_externals(next, value);
      if (externals.size() > kMaxInputs) {
        externals = std::move(before);
        break;
      }
      chain.push_back(j);
      by_slot.push_back(next);
    }
    if (chain.size() < 2) continue;
    // Operands as the kernel numbers them: inputs first, then steps.
    const int32_t n_inputs = static_cast<int32_t>(externals.size());
    auto operand = [&](int32_t slot, size_t step_index) {
      if (slot < 0) return int32_t{-1};
      if (step_index > 0 && slot == nodes[chain[step_index - 1]]->outputs[0])
        return n_inputs + static_cast<int32_t>(step_index - 1);
      return static_cast<int32_t>(std::find(externals.begin(), externals.end(), slot) - externals.begin());
    };
    std::vector<nnp_elementwise_step> steps;
    std::vector<const onnx::GraphNode*> originals;
    std::string name;
    for (size_t k = 0; k < chain.size(); ++k) {
      nnp_elementwise_step st = by_slot[k];
      st.a = operand(st.a, k);
      st.b = st.kind == NNP_STEP_BINARY ? operand(st.b, k) : 0;
      steps.push_back(st);
      originals.push_back(nodes[chain[k]]);
      name += (k ? "+" : "") + nodes[chain[k]]->op_type;
    }
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = name;
    fused->inputs = externals;
    fused->outputs = {nodes[chain.back()]->outputs[0]};
    fused->fused = [originals, steps](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      run_chain(originals, steps, node, values);
    };
    for (size_t c : chain) claimed[c] = true;
    replacement[chain.back()] = fused.get();  // every input is written by then
    out.made.push_back(std::move(fused));
    ++out.fused;
    result.ops += static_cast<int>(chain.size());
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!claimed[i] || replacement[i]) out.nodes.push_back(replacement[i] ? replacement[i] : nodes[i]);
  return result;
}

}  // namespace nnp::core::graph
