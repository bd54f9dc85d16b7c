// Layer calls written as ONNX nodes of their own (Linear -> Gemm, Conv2d ->
// Conv, ...): the core's lowerings of its built-in layers, and the node in
// a vendor's domain that stands for a plugin layer without one.
#pragma once

#include <string>
#include <vector>

#include "../nn/module.hpp"
#include "onnx_graph.hpp"

namespace nnp::core::onnx {

struct LayerCall {
  nnp_module& module;
  const nnp_attrs& attrs;
  std::vector<TensorRef> inputs;   // the call's tensor arguments
  std::vector<TensorRef> outputs;  // its results (empty until forward ran)
  std::vector<std::string> input_names, output_names;
};

struct BuiltinLowering {
  const char* type;  // "nn.Linear"
  // Whether this call can be written so (a padding mode ONNX lacks: no).
  bool (*applies)(const LayerCall& call, const nnp_onnx_graph& g);
  void (*write)(nnp_onnx_graph& g, const LayerCall& call);
};

const BuiltinLowering* find_builtin_lowering(const std::string& type);

// ONNX attributes for layer attributes (bools as ints; None left out).
void add_attributes(::onnx::NodeProto& node, const nnp_attrs& attrs);

// A node "Swish" in domain "act" with the layer's attributes, for
// "act.Swish"; import turns it back into the layer.
void write_vendor_node(nnp_onnx_graph& g, const LayerCall& call);
// Built-in layers written as a node of their own domain (as a plugin's
// layer is) and read back as themselves: the int8 layers (nn.quantized.*),
// whose ops have no ONNX form in this exporter. Such a file is nnplug's
// alone; it lets nnp::compile capture a quantized model.
bool builtin_custom_node(const std::string& type);

}  // namespace nnp::core::onnx
