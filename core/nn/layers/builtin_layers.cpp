#include "../layer_registry.hpp"
#include "builtin.hpp"

namespace nnp::core::nn {

void register_builtin_layers(LayerRegistry& registry) {
  layers::register_linear_layers(registry);
  layers::register_activation_layers(registry);
  layers::register_loss_layers(registry);
  layers::register_norm_layers(registry);
  layers::register_conv_layers(registry);
  layers::register_recurrent_layers(registry);
  layers::register_attention_layers(registry);
  layers::register_transformer_layers(registry);
  layers::register_padding_layers(registry);
  layers::register_dropout_layers(registry);
  layers::register_vision_layers(registry);
  layers::register_distance_layers(registry);
  layers::register_pooling_layers(registry);
  layers::register_embedding_layers(registry);
  layers::register_upsampling_layers(registry);
  layers::register_adaptive_softmax_layers(registry);
  layers::register_quantization_layers(registry);
  layers::register_quantized_layers(registry);
  layers::register_graph_layers(registry);
}

}  // namespace nnp::core::nn
