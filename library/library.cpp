#include "library.hpp"

#include <nnp/plugin.hpp>

#include "layers/builtin.hpp"
#include "onnx/onnx_ops.hpp"
#include "optim/algorithms.hpp"

namespace nnp::library {

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    layers::register_linear_layers(host);
    layers::register_activation_layers(host);
    layers::register_loss_layers(host);
    layers::register_norm_layers(host);
    layers::register_conv_layers(host);
    layers::register_recurrent_layers(host);
    layers::register_attention_layers(host);
    layers::register_transformer_layers(host);
    layers::register_padding_layers(host);
    layers::register_dropout_layers(host);
    layers::register_vision_layers(host);
    layers::register_distance_layers(host);
    layers::register_pooling_layers(host);
    layers::register_embedding_layers(host);
    layers::register_upsampling_layers(host);
    layers::register_adaptive_softmax_layers(host);
    layers::register_quantization_layers(host);
    layers::register_quantized_layers(host);
    for (nnp::optim::OptimizerAlgorithm& a : optim::algorithms()) nnp::optim::register_optimizer(host, std::move(a));
    onnx::register_graph_ops(host);
  });
}

}  // namespace nnp::library
