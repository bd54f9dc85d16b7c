// The built-in library: nnplug's own layer types, optimizer algorithms and
// ONNX operators (the graph ops imported models run), written on the SDK
// alone and compiled where only sdk/include is visible
// (library/CMakeLists.txt). It is linked into libnnp.so, and the core starts
// it once, when a registry it fills is first used, the way it starts a
// plugin: init receives the table and a host and registers through the table
// (register_layer_type, register_optimizer, register_graph_op), with the one
// difference that it may take the reserved names (nn.*, plain optimizer kinds).
#pragma once

#include <nnp/nnp.h>

namespace nnp::library {

nnp_status init(const nnp_api* api, nnp_plugin_host* host);

}  // namespace nnp::library
