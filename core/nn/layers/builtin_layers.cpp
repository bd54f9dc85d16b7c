// The built-in layer types: the built-in library's (library/), registered
// through the table as a plugin's are, and nn.GraphModule, the core
// container ONNX import builds (onnx/graph_module.hpp).
#include "../../builtin_library.hpp"
#include "../../onnx/graph_module.hpp"
#include "../layer_registry.hpp"

namespace nnp::core::nn {

void register_builtin_layers(LayerRegistry& registry) {
  for (const LayerType& t : builtin_library().layers) registry.add(t);
  onnx::register_graph_module(registry);
}

}  // namespace nnp::core::nn
