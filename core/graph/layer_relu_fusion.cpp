#include "layer_relu_fusion.hpp"

#include "../nn/module_call.hpp"
#include "fused_program.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

FusedProgram fuse_layers_with_relu(const std::vector<const onnx::GraphNode*>& nodes,
                                   const std::vector<int32_t>& outputs, int32_t slots,
                                   const std::function<LayerReluKernel(const onnx::GraphNode&)>& kernel_for) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  FusedProgram out;
  std::vector<bool> absorbed(nodes.size(), false);
  std::vector<const onnx::GraphNode*> replacement(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& layer = *nodes[i];
    if (layer.kind != onnx::GraphNodeKind::kLayer || layer.inputs.size() != 1 || layer.inputs[0] < 0 ||
        layer.outputs.size() != 1 || layer.outputs[0] < 0 || readers[static_cast<size_t>(layer.outputs[0])] != 1)
      continue;
    LayerReluKernel kernel = kernel_for(layer);
    if (!kernel) continue;
    for (size_t j = i + 1; j < nodes.size(); ++j) {
      const onnx::GraphNode& relu = *nodes[j];
      if (relu.inputs.empty() || relu.inputs[0] != layer.outputs[0]) continue;
      if (relu.kind != onnx::GraphNodeKind::kOp || relu.op_type != "Relu" || relu.outputs.size() != 1 ||
          relu.outputs[0] < 0)
        break;
      auto fused = std::make_unique<onnx::GraphNode>();
      fused->kind = onnx::GraphNodeKind::kFused;
      fused->op_type = layer.op_type + "+Relu";
      fused->layer = layer.layer;
      fused->inputs = layer.inputs;
      fused->outputs = relu.outputs;
      const onnx::GraphNode* layer_node = nodes[i];
      const onnx::GraphNode* relu_node = nodes[j];
      fused->fused = [kernel, layer_node, relu_node](const onnx::GraphNode& node,
                                                     std::vector<onnx::GraphValue>& values) {
        nnp_module& m = *node.layer;
        const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], node.op_type);
        if (nn::calls_plainly(m))
          if (TensorRef out = kernel(*x, m)) {
            values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
            return;
          }
        run_originals(node, {layer_node, relu_node}, values);  // as the program runs them, recorded as it records them
      };
      replacement[j] = fused.get();
      absorbed[i] = true;
      out.made.push_back(std::move(fused));
      ++out.fused;
      break;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!absorbed[i]) out.nodes.push_back(replacement[i] ? replacement[i] : nodes[i]);
  return out;
}

}  // namespace nnp::core::graph
