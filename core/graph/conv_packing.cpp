#include "conv_packing.hpp"

#include "../autograd/grad_mode.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "conv_activation_fusion.hpp"
#include "node_match.hpp"
#include "pool_layer_direct.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

ConvPacking pack_convolutions(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                              int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  auto read_once = [&](int32_t slot) { return readers[static_cast<size_t>(slot)] == 1; };
  ConvPacking result;
  ChainFusion fusion(nodes);
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& conv = *nodes[i];
    nnp_conv2d_params p;
    const TensorRef* weight = nullptr;
    if (fusion.claimed(i) || conv.kind != onnx::GraphNodeKind::kLayer || conv.inputs.size() != 1 ||
        conv.inputs[0] < 0 || conv.outputs.size() != 1 || conv.outputs[0] < 0 || !conv2d_geometry(conv, p) ||
        !(weight = conv.layer->parameters.find("weight")) || !*weight)
      continue;
    std::vector<size_t> chain{i};
    int32_t result_slot = conv.outputs[0];
    p.activation = NNP_ACTIVATION_NONE;
    if (size_t r = reader_of(nodes, i, result_slot);
        read_once(result_slot) && r < nodes.size() && !fusion.claimed(r) && is_op(*nodes[r], "Relu", 1)) {
      chain.push_back(r);
      result_slot = nodes[r]->outputs[0];
      p.activation = NNP_ACTIVATION_RELU;
    }
    // With the pooling after it where the backend packs for that, else without.
    int64_t pool[2] = {0, 0};
    ModuleRef pool_layer;
    TensorRef packed;
    if (size_t q = reader_of(nodes, chain.back(), result_slot);
        read_once(result_slot) && q < nodes.size() && !fusion.claimed(q) && tiling_pool(*nodes[q], result_slot, pool)) {
      if ((packed = conv2d_pack_weight(**weight, p, pool))) {
        chain.push_back(q);
        result_slot = nodes[q]->outputs[0];
        pool_layer = nodes[q]->layer;
      } else {
        pool[0] = pool[1] = 0;
      }
    }
    if (!packed) packed = conv2d_pack_weight(**weight, p, pool);
    if (!packed) continue;
    result.sources.push_back(weight->get());
    std::vector<const onnx::GraphNode*> originals;
    for (size_t c : chain) originals.push_back(nodes[c]);
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type =
        conv.op_type + (p.activation == NNP_ACTIVATION_RELU ? "+Relu" : "") + (pool_layer ? "+MaxPool" : "");
    fused->layer = conv.layer;
    fused->inputs = conv.inputs;
    fused->outputs = {result_slot};
    const TensorRef packed_from = *weight;  // held: a new weight tensor cannot take its address
    fused->fused = [originals, p, pool0 = pool[0], pool1 = pool[1], packed, packed_from, pool_layer](
                       const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], node.op_type);
      const Tensor *w = nullptr, *b = nullptr;
      const int64_t windows[2] = {pool0, pool1};
      TensorRef out;
      if (nn::calls_plainly(*node.layer) && (!pool_layer || nn::calls_plainly(*pool_layer)) &&
          weight_and_bias(*node.layer, w, b) && w == packed_from.get())
        out = conv2d_packed_kernel(*x, *w, *packed, b, p, windows);
      output_or_originals(node, values, std::move(out), originals);
    };
    fusion.replace(chain, std::move(fused));
  }
  result.program = fusion.finish();
  return result;
}

}  // namespace nnp::core::graph
