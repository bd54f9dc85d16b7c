// nn.GraphModule, the module ONNX import builds (graph_module.cpp).
#pragma once

#include "../nn/layer_registry.hpp"

namespace nnp::core::onnx {

void register_graph_module(nn::LayerRegistry& registry);

}  // namespace nnp::core::onnx
