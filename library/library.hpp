// The built-in library: nnplug's own layer types, written on the SDK alone
// and compiled where only sdk/include is visible (library/CMakeLists.txt).
// It is linked into libnnp.so, and the core starts it once, when the layer
// registry is first used, the way it starts a plugin: init receives the
// table and a host and registers through the table (register_layer_type),
// with the one difference that its types may take the reserved nn. names.
#pragma once

#include <nnp/nnp.h>

namespace nnp::library {

nnp_status init(const nnp_api* api, nnp_plugin_host* host);

}  // namespace nnp::library
