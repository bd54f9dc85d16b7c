// ONNX's operators as graph ops (nnp_graph_op): what nn.GraphModule runs for
// the op nodes of an imported model.
#pragma once

#include <nnp/nnp.h>

namespace nnp::library::onnx {

// Registers every op through the table (register_graph_op).
void register_graph_ops(nnp_plugin_host* host);

}  // namespace nnp::library::onnx
