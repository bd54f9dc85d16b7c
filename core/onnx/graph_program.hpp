// What nn.GraphModule runs (graph_module.cpp reads it from the `graph`
// attribute): nodes over numbered value slots, each value a tensor or a
// sequence of tensors. Besides op and layer nodes, ONNX's control flow (If,
// Loop, Scan: nodes with subgraphs that read the enclosing graph's values)
// and its sequence operators run here, in the core, because they move
// values rather than compute them (graph_control.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "../nn/attrs.hpp"
#include "../nn/module_ref.hpp"
#include "graph_ops.hpp"

namespace nnp::core::onnx {

// How deep subgraphs (If's branches, Loop's and Scan's bodies) may nest.
constexpr size_t kMaxGraphNesting = 12;

// A slot's value: a tensor, or (sequence set) a sequence of tensors.
struct GraphValue {
  TensorRef tensor;
  std::shared_ptr<const std::vector<TensorRef>> sequence;
};

struct GraphNode;

// A subgraph: its own inputs (slots the node fills before each run), its
// nodes, and the slots it gives back (which may be the enclosing graph's).
struct Subgraph {
  std::vector<int32_t> inputs, outputs;
  std::vector<GraphNode> nodes;
};

// kFused: a node graph mode's passes made of several (core/graph/), which
// runs through `fused`.
enum class GraphNodeKind { kOp, kLayer, kControl, kSequence, kFused };

struct GraphNode {
  GraphNodeKind kind = GraphNodeKind::kOp;
  const GraphOp* op = nullptr;  // kOp: registry entries live until process exit
  std::string op_type;          // the op type, or the layer's name
  ModuleRef layer;              // kLayer
  std::unique_ptr<nnp_attrs> attrs;
  std::vector<int32_t> inputs, outputs;  // value slots; -1: an omitted optional input or output
  std::vector<Subgraph> graphs;          // kControl: If's then and else, Loop's and Scan's body
  std::function<void(const GraphNode&, std::vector<GraphValue>&)> fused;  // kFused
  // kOp in a plan: per input, a cpu copy of a constant the op reads on the
  // host, given instead of the slot's value (core/graph/host_inputs.hpp).
  std::vector<TensorRef> host_copies;
};

// Runs one node, or nodes in order, over values (sized to every slot of the
// program); an error names the node.
void run_node(const GraphNode& node, std::vector<GraphValue>& values);
void run_nodes(const std::vector<GraphNode>& nodes, std::vector<GraphValue>& values);

// The control-flow and sequence node types, and how each runs (graph_control.cpp).
bool is_control_op(const std::string& op_type);
bool is_sequence_op(const std::string& op_type);
void run_control(const GraphNode& node, std::vector<GraphValue>& values);
void run_sequence_op(const GraphNode& node, std::vector<GraphValue>& values);

// A value's tensor, refusing a sequence where a tensor is needed.
const TensorRef& tensor_of(const GraphValue& v, const std::string& who);

}  // namespace nnp::core::onnx
