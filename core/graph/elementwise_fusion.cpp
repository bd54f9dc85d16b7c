#include "elementwise_fusion.hpp"

#include <algorithm>
#include <cstring>

#include "../ops.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

constexpr size_t kMaxInputs = 16, kMaxSteps = 64;  // the kernel's limits
// An operand of a node's second step: the node's first step's result.
constexpr int32_t kOwnFirstStep = -2;

// The step an ONNX node is, when it is one single step: one output, no
// attributes, and the inputs its op takes.
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
    kBinary[] = {{"Add", NNP_BINARY_ADD}, {"Sub", NNP_BINARY_SUB},     {"Mul", NNP_BINARY_MUL},
                 {"Div", NNP_BINARY_DIV}, {"Max", NNP_BINARY_MAXIMUM}, {"Min", NNP_BINARY_MINIMUM}};
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

// The steps an ONNX node is, when it is one a chain can hold: one output,
// no attributes, and the inputs its op takes. Most nodes are one step;
// Clip with its bounds as inputs (opset 11 on, ReLU6 after MobileNet's
// convolutions) is a Max and a Min.
bool as_steps(const onnx::GraphNode& n, std::vector<nnp_elementwise_step>& steps) {
  steps.clear();
  if (n.kind != onnx::GraphNodeKind::kOp || n.outputs.size() != 1 || n.outputs[0] < 0 ||
      (n.attrs && !n.attrs->values.empty()))
    return false;
  if (n.op_type == "Clip" && !n.inputs.empty() && n.inputs.size() <= 3 && n.inputs[0] >= 0) {
    const int32_t low = n.inputs.size() > 1 ? n.inputs[1] : -1, high = n.inputs.size() > 2 ? n.inputs[2] : -1;
    if (low >= 0) steps.push_back({NNP_STEP_BINARY, NNP_BINARY_MAXIMUM, n.inputs[0], low});
    if (high >= 0) steps.push_back({NNP_STEP_BINARY, NNP_BINARY_MINIMUM, low >= 0 ? kOwnFirstStep : n.inputs[0], high});
    return !steps.empty();
  }
  nnp_elementwise_step step{};
  if (!as_step(n, step)) return false;
  steps.push_back(step);
  return true;
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
    std::vector<nnp_elementwise_step> first;
    if (claimed[i] || !as_steps(*nodes[i], first)) continue;
    // Grow the chain while the next reader of its value is the only one
    // (all of the value's reads are that node's) and is a step itself.
    std::vector<size_t> chain{i};
    std::vector<std::vector<nnp_elementwise_step>> by_slot{first};  // each node's steps, operands still as slots
    size_t step_count = first.size();
    std::vector<int32_t> externals;
    auto add_externals = [&](const std::vector<nnp_elementwise_step>& node_steps, int32_t produced_by_chain) {
      for (const nnp_elementwise_step& st : node_steps)
        for (int32_t s : {st.a, st.kind == NNP_STEP_BINARY ? st.b : -1})
          if (s >= 0 && s != produced_by_chain && std::find(externals.begin(), externals.end(), s) == externals.end())
            externals.push_back(s);
    };
    add_externals(first, -1);
    for (;;) {
      const int32_t value = nodes[chain.back()]->outputs[0];
      size_t j = chain.back() + 1;
      while (j < nodes.size() &&
             std::find(nodes[j]->inputs.begin(), nodes[j]->inputs.end(), value) == nodes[j]->inputs.end())
        ++j;
      std::vector<nnp_elementwise_step> next;
      if (j == nodes.size() || claimed[j] || !as_steps(*nodes[j], next) || step_count + next.size() > kMaxSteps) break;
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
      step_count += next.size();
    }
    if (step_count < 2) continue;
    // Operands as the kernel numbers them: inputs first, then steps (the
    // previous node's value is its last step's result).
    const int32_t n_inputs = static_cast<int32_t>(externals.size());
    std::vector<nnp_elementwise_step> steps;
    std::vector<const onnx::GraphNode*> originals;
    std::string name;
    int32_t previous_last = -1;  // the step that gave the previous node's value
    for (size_t k = 0; k < chain.size(); ++k) {
      const int32_t previous_value = k > 0 ? nodes[chain[k - 1]]->outputs[0] : -1;
      auto operand = [&](int32_t slot) {
        if (slot == kOwnFirstStep) return n_inputs + static_cast<int32_t>(steps.size()) - 1;
        if (slot < 0) return int32_t{-1};
        if (k > 0 && slot == previous_value) return n_inputs + previous_last;
        return static_cast<int32_t>(std::find(externals.begin(), externals.end(), slot) - externals.begin());
      };
      for (nnp_elementwise_step st : by_slot[k]) {
        st.a = operand(st.a);
        st.b = st.kind == NNP_STEP_BINARY ? operand(st.b) : 0;
        steps.push_back(st);
      }
      previous_last = static_cast<int32_t>(steps.size()) - 1;
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
