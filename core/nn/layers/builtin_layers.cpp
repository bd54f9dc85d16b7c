// The built-in layer types: the built-in library's (library/), registered
// through the table as a plugin's are, and nn.GraphModule, which runs the
// ONNX op interpreter the importer uses and stays with it in the core.
#include "../../builtin_library.hpp"
#include "../layer_registry.hpp"

namespace nnp::core::nn {

namespace layers {
void register_graph_layers(LayerRegistry& registry);
}

void register_builtin_layers(LayerRegistry& registry) {
  for (const LayerType& t : builtin_library().layers) registry.add(t);
  layers::register_graph_layers(registry);
}

}  // namespace nnp::core::nn
