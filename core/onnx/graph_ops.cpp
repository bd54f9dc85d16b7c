#include "graph_ops.hpp"

#include <cctype>

#include "../builtin_library.hpp"

namespace nnp::core::onnx {

void GraphOp::bind_c_view() {
  c_op = nnp_graph_op{sizeof(nnp_graph_op), name.c_str(), doc.c_str(), run, user_data, host_inputs};
}

GraphOp validate_graph_op(const nnp_graph_op& c, const std::string& origin) {
  check_registered_size("register_graph_op", c.struct_size, NNP_GRAPH_OP_SIZE_1_15, "nnp_graph_op");
  GraphOp op;
  op.name = c.op_type ? c.op_type : "";
  bool valid = !op.name.empty() && op.name.size() <= 128;
  for (char ch : op.name) valid = valid && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (!valid)
    fail(NNP_INVALID_ARGUMENT, "register_graph_op: '", op.name,
         "' is not an ONNX op type (letters, digits and '_', as ONNX names them)");
  if (!c.run) fail(NNP_INVALID_ARGUMENT, "register_graph_op: ", op.name, " has no run function");
  op.doc = c.doc ? c.doc : "";
  op.run = c.run;
  op.user_data = c.user_data;
  if (c.struct_size >= NNP_GRAPH_OP_SIZE_1_20) op.host_inputs = c.host_inputs;
  op.origin = origin;
  return op;
}

NamedRegistry<GraphOp>& graph_ops() {
  static auto* registry = new NamedRegistry<GraphOp>("graph op", builtin_library().graph_ops);  // never destroyed
  return *registry;
}

}  // namespace nnp::core::onnx
