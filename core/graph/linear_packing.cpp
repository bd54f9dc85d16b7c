#include "linear_packing.hpp"

#include "../autograd/grad_mode.hpp"
#include "../autograd/record.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "conv_activation_fusion.hpp"
#include "node_match.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

LinearPacking pack_linear_layers(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                 int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  auto read_once = [&](int32_t slot) { return readers[static_cast<size_t>(slot)] == 1; };
  LinearPacking result;
  ChainFusion fusion(nodes);
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& linear = *nodes[i];
    const Tensor *w = nullptr, *b = nullptr;
    if (fusion.claimed(i) || linear.kind != onnx::GraphNodeKind::kLayer || !linear.layer || !linear.layer->layer_type ||
        linear.layer->layer_type->name != "nn.Linear" || linear.inputs.size() != 1 || linear.inputs[0] < 0 ||
        linear.outputs.size() != 1 || linear.outputs[0] < 0 || !weight_and_bias(*linear.layer, w, b) ||
        w->shape.ndim != 2)
      continue;
    const TensorRef packed = gemm_pack_weight(*transpose(*w, 0, 1));
    if (!packed) continue;
    std::vector<size_t> chain{i};
    int32_t result_slot = linear.outputs[0];
    int32_t activation = NNP_ACTIVATION_NONE;
    if (size_t r = reader_of(nodes, i, result_slot);
        read_once(result_slot) && r < nodes.size() && !fusion.claimed(r) && is_op(*nodes[r], "Relu", 1)) {
      chain.push_back(r);
      result_slot = nodes[r]->outputs[0];
      activation = NNP_ACTIVATION_RELU;
    }
    const TensorRef* weight = linear.layer->parameters.find("weight");
    const TensorRef packed_from = *weight;  // held: a new weight tensor cannot take its address
    result.sources.push_back(packed_from.get());
    std::vector<const onnx::GraphNode*> originals;
    for (size_t c : chain) originals.push_back(nodes[c]);
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = linear.op_type + (activation == NNP_ACTIVATION_RELU ? "+Relu" : "");
    fused->layer = linear.layer;
    fused->inputs = linear.inputs;
    fused->outputs = {result_slot};
    fused->fused = [originals, activation, packed, packed_from](const onnx::GraphNode& node,
                                                                std::vector<onnx::GraphValue>& values) {
      const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], node.op_type);
      const Tensor *w = nullptr, *b = nullptr;
      TensorRef out;
      // Asked of the weight itself: its transposed view records nothing.
      if (nn::calls_plainly(*node.layer) && weight_and_bias(*node.layer, w, b) && w == packed_from.get() &&
          !autograd::should_record({x.get(), w, b}))
        out = gemm_packed_kernel(*x, *transpose(*w, 0, 1), *packed, b, activation);
      output_or_originals(node, values, std::move(out), originals);
    };
    fusion.replace(chain, std::move(fused));
  }
  result.program = fusion.finish();
  return result;
}

}  // namespace nnp::core::graph
