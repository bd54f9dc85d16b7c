// ONNX import: a model file (possibly a stranger's) read into an
// nn.GraphModule of built-in layers (Conv, Linear, pooling, LSTM), plugin
// layers (nodes in a plugin's domain) and ops; initialisers become its
// parameters and buffers.
#pragma once

#include <string>

#include "../nn/module_ref.hpp"

namespace nnp::core::onnx {

ModuleRef import_model(const std::string& path);

}  // namespace nnp::core::onnx
