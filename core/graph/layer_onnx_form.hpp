// A layer node of a plan (the importer makes nn.Linear, nn.ConvNd and
// nn.MaxPoolNd layers of ONNX's Gemm, Conv and MaxPool) described as the ONNX
// node it stands for, so a backend that compiles graphs is offered it in
// ONNX's vocabulary: the op type, its ONNX attributes, and the layer's
// weights as the node's further inputs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../nn/attrs.hpp"
#include "../tensor.hpp"

struct nnp_module;

namespace nnp::core::graph {

struct OnnxForm {
  std::string op_type;
  std::unique_ptr<nnp_attrs> attrs;
  std::vector<TensorRef> weights;  // after the node's own inputs, in ONNX's order
};

// Null where the layer has no such form here (another type, or attributes
// ONNX's node cannot say, such as padding "same").
std::unique_ptr<OnnxForm> onnx_form_of(const nnp_module& layer);

}  // namespace nnp::core::graph
