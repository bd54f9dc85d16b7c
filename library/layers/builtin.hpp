// Registering the built-in layer types: through the table, exactly as a
// plugin registers its own (nnp::nn::register_layer), with the host the core
// hands the built-in library (library/library.hpp).
#pragma once

#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnp::library::layers {

using nnp::nn::AttrDecl;

// M is an nnp::nn::Module constructed from nnp::nn::Attrs.
template <typename M>
void add_builtin(nnp_plugin_host* host, const char* name, const char* doc, const std::vector<AttrDecl>& attrs) {
  nnp::nn::register_layer<M>(host, name, doc, attrs);
}

using nnp::detail::shape_text;  // "[2,3]", as the core's messages write shapes

void register_linear_layers(nnp_plugin_host* host);
void register_activation_layers(nnp_plugin_host* host);
void register_loss_layers(nnp_plugin_host* host);
void register_norm_layers(nnp_plugin_host* host);
void register_conv_layers(nnp_plugin_host* host);
void register_recurrent_layers(nnp_plugin_host* host);
void register_attention_layers(nnp_plugin_host* host);
void register_transformer_layers(nnp_plugin_host* host);
void register_padding_layers(nnp_plugin_host* host);
void register_dropout_layers(nnp_plugin_host* host);
void register_vision_layers(nnp_plugin_host* host);
void register_distance_layers(nnp_plugin_host* host);
void register_pooling_layers(nnp_plugin_host* host);
void register_embedding_layers(nnp_plugin_host* host);
void register_upsampling_layers(nnp_plugin_host* host);
void register_adaptive_softmax_layers(nnp_plugin_host* host);
void register_quantization_layers(nnp_plugin_host* host);
void register_quantized_layers(nnp_plugin_host* host);

}  // namespace nnp::library::layers
