// Registering the core's own layer types (the same registry plugins use).
#pragma once

#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "../layer_registry.hpp"

namespace nnp::core::nn::layers {

using nnp::nn::AttrDecl;

// Registers a built-in layer type the way a plugin registers its own (the
// SDK's layer_type<M>), only without a plugin host. M is an nnp::nn::Module
// constructed from nnp::nn::Attrs.
template <typename M>
void add_builtin(LayerRegistry& registry, const char* name, const char* doc, const std::vector<AttrDecl>& attrs) {
  registry.add(validate_layer_type(nnp::nn::layer_type<M>(name, doc, attrs).get(), "core", "core"));
}

using nnp::detail::shape_text;  // "[2,3]", as the core's messages write shapes

void register_linear_layers(LayerRegistry& registry);
void register_activation_layers(LayerRegistry& registry);
void register_loss_layers(LayerRegistry& registry);
void register_norm_layers(LayerRegistry& registry);
void register_conv_layers(LayerRegistry& registry);
void register_recurrent_layers(LayerRegistry& registry);
void register_attention_layers(LayerRegistry& registry);
void register_transformer_layers(LayerRegistry& registry);
void register_padding_layers(LayerRegistry& registry);
void register_dropout_layers(LayerRegistry& registry);
void register_vision_layers(LayerRegistry& registry);
void register_distance_layers(LayerRegistry& registry);
void register_pooling_layers(LayerRegistry& registry);
void register_embedding_layers(LayerRegistry& registry);
void register_upsampling_layers(LayerRegistry& registry);
void register_adaptive_softmax_layers(LayerRegistry& registry);
void register_quantization_layers(LayerRegistry& registry);
void register_quantized_layers(LayerRegistry& registry);
void register_graph_layers(LayerRegistry& registry);

}  // namespace nnp::core::nn::layers
