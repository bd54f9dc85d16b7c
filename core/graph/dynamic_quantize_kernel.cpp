#include "dynamic_quantize_kernel.hpp"

#include "../ops.hpp"

namespace nnp::core::graph {

FusedProgram quantize_dynamically_on_device(const std::vector<const onnx::GraphNode*>& nodes) {
  ChainFusion fusion(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& n = *nodes[i];
    if (n.kind != onnx::GraphNodeKind::kOp || n.op_type != "DynamicQuantizeLinear" || n.inputs.size() != 1 ||
        n.inputs[0] < 0 || n.outputs.empty() || n.outputs.size() > 3)
      continue;
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = "DynamicQuantizeLinear(on device)";
    fused->inputs = n.inputs;
    fused->outputs = n.outputs;
    const onnx::GraphNode* original = &n;
    fused->fused = [original](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      const Tensor* x = input_tensor(node, values, 0);
      TensorRef y, scale, zero;
      if (!x || !dynamic_quantize_linear_kernel(*x, y, scale, zero)) {
        run_node(*original, values);
        return;
      }
      const TensorRef results[3] = {y, scale, zero};
      for (size_t o = 0; o < node.outputs.size(); ++o)
        if (node.outputs[o] >= 0) values[static_cast<size_t>(node.outputs[o])] = onnx::GraphValue{results[o], nullptr};
    };
    fusion.replace({i}, std::move(fused));
  }
  return fusion.finish();
}

}  // namespace nnp::core::graph
