// The built-in layer types: the built-in library's (library/), registered
// through the table as a plugin's are, and nn.GraphModule, which runs the
// ONNX op interpreter the importer uses and stays with it in the core.
#include "../../../library/library.hpp"
#include "../../plugin_registry.hpp"
#include "../layer_registry.hpp"

namespace nnp::core::nn {

namespace layers {
void register_graph_layers(LayerRegistry& registry);
}

void register_builtin_layers(LayerRegistry& registry) {
  for (LayerType& t : PluginRegistry::builtin_library_layers(library::init)) registry.add(std::move(t));
  layers::register_graph_layers(registry);
}

}  // namespace nnp::core::nn
