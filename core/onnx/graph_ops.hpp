// The graph ops: every ONNX operator an imported graph runs (nn.GraphModule's
// op nodes) by op type, the built-in library's or a plugin's, registered
// through the table (nnp_api.register_graph_op). ONNX import accepts a node
// whose op type is here; nn.GraphModule runs it.
#pragma once

#include <nnp/nnp.h>

#include <string>

#include "../named_registry.hpp"

namespace nnp::core::onnx {

struct GraphOp {
  std::string name;  // the op type: "Relu"
  std::string doc;
  decltype(nnp_graph_op::run) run = nullptr;
  void* user_data = nullptr;
  uint64_t host_inputs = 0;  // bit i: input i is read on the host only (ABI 1.20)
  std::string origin;        // "core", "the application" or the plugin's path (for messages)
  nnp_graph_op c_op{};

  void bind_c_view();
};

// Checks an op given through the C API and copies it (strings too).
GraphOp validate_graph_op(const nnp_graph_op& op, const std::string& origin);

// Every op type; the built-in library's are registered when it is first used.
NamedRegistry<GraphOp>& graph_ops();

}  // namespace nnp::core::onnx
