#include "batch_norm_folding.hpp"

#include <unordered_map>

#include "../autograd/grad_mode.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "conv_activation_fusion.hpp"
#include "node_match.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// The folded weight and bias, or false where the tensors do not fit (other
// dtypes or devices, a channel count that is not the layer's).
bool fold(const Tensor& w, const Tensor* b, const Tensor* const (&bn)[4], double epsilon, TensorRef& w_out,
          TensorRef& b_out) {
  const int64_t channels = w.shape.ndim == 4 ? w.shape.d[0] : -1;
  for (const Tensor* t : {bn[0], bn[1], bn[2], bn[3], b})
    if (t && (t->numel != channels || t->dtype != w.dtype || t->device.backend != w.device.backend ||
              t->device.index != w.device.index || w.dtype != NNP_F32))
      return false;
  autograd::NoGradGuard no_grad;
  const Tensor &scale = *bn[0], &beta = *bn[1], &mean = *bn[2], &var = *bn[3];
  const int64_t flat[1] = {channels}, per_channel[4] = {channels, 1, 1, 1};
  const TensorRef eps = full(Dims{}, epsilon, w.dtype, w.device);
  const TensorRef s = binary(NNP_BINARY_MUL, *reshape(scale, flat, 1),
                             *unary(NNP_UNARY_RSQRT, *binary(NNP_BINARY_ADD, *reshape(var, flat, 1), *eps)));
  w_out = binary(NNP_BINARY_MUL, w, *reshape(*s, per_channel, 4));
  const TensorRef centred = b ? binary(NNP_BINARY_SUB, *reshape(*b, flat, 1), *reshape(mean, flat, 1))
                              : unary(NNP_UNARY_NEG, *reshape(mean, flat, 1));
  b_out = binary(NNP_BINARY_ADD, *binary(NNP_BINARY_MUL, *centred, *s), *reshape(beta, flat, 1));
  return true;
}

}  // namespace

BatchNormFolding fold_batch_norms(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                  int32_t slots, const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                  const std::vector<std::pair<int32_t, TensorRef>>& folded) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  auto read_once = [&](int32_t slot) { return readers[static_cast<size_t>(slot)] == 1; };
  std::unordered_map<int32_t, const Tensor*> constants;
  for (const auto& [slot, t] : module_tensors) constants[slot] = t.get();
  for (const auto& [slot, t] : folded) constants[slot] = t.get();
  BatchNormFolding result;
  ChainFusion fusion(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& conv = *nodes[i];
    nnp_conv2d_params p;
    if (conv.kind != onnx::GraphNodeKind::kLayer || conv.inputs.size() != 1 || conv.inputs[0] < 0 ||
        conv.outputs.size() != 1 || conv.outputs[0] < 0 || !read_once(conv.outputs[0]) || !conv2d_geometry(conv, p))
      continue;
    const size_t j = reader_of(nodes, i, conv.outputs[0]);
    if (j >= nodes.size() || fusion.claimed(j)) continue;
    const onnx::GraphNode& bn = *nodes[j];
    if (bn.kind != onnx::GraphNodeKind::kOp || bn.op_type != "BatchNormalization" || bn.inputs.size() != 5 ||
        bn.inputs[0] != conv.outputs[0] || bn.outputs.empty() || bn.outputs[0] < 0)
      continue;
    bool inference = true;
    for (size_t o = 1; o < bn.outputs.size(); ++o) inference = inference && bn.outputs[o] < 0;
    double epsilon = 1e-5;
    if (bn.attrs) {
      if (auto mode = bn.attrs->values.find("training_mode"); mode != bn.attrs->values.end())
        inference = inference && mode->second.i == 0;
      if (auto eps = bn.attrs->values.find("epsilon"); eps != bn.attrs->values.end())
        epsilon = eps->second.type == NNP_ATTR_FLOAT ? eps->second.f : static_cast<double>(eps->second.i);
    }
    const Tensor* stats[4] = {};
    for (int k = 0; k < 4; ++k) {
      auto c = constants.find(bn.inputs[static_cast<size_t>(k + 1)]);
      stats[k] = c == constants.end() ? nullptr : c->second;
    }
    const Tensor *weight = nullptr, *bias = nullptr;
    if (!inference || !stats[0] || !stats[1] || !stats[2] || !stats[3] || !weight_and_bias(*conv.layer, weight, bias))
      continue;
    TensorRef w_folded, b_folded;
    if (!fold(*weight, bias, stats, epsilon, w_folded, b_folded)) continue;
    std::vector<size_t> chain{i, j};
    int32_t result_slot = bn.outputs[0];
    p.activation = NNP_ACTIVATION_NONE;
    if (size_t r = reader_of(nodes, j, result_slot);
        read_once(result_slot) && r < nodes.size() && !fusion.claimed(r) && is_op(*nodes[r], "Relu", 1)) {
      chain.push_back(r);
      result_slot = nodes[r]->outputs[0];
      p.activation = NNP_ACTIVATION_RELU;
    }
    for (const Tensor* t : {weight, bias, stats[0], stats[1], stats[2], stats[3]})
      if (t) result.sources.push_back(t);
    std::vector<const onnx::GraphNode*> originals;
    for (size_t c : chain) originals.push_back(nodes[c]);
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = conv.op_type + "+BatchNormalization" + (p.activation == NNP_ACTIVATION_RELU ? "+Relu" : "");
    fused->layer = conv.layer;
    fused->inputs = conv.inputs;
    fused->outputs = {result_slot};
    fused->fused = [originals, p, w_folded, b_folded](const onnx::GraphNode& node,
                                                      std::vector<onnx::GraphValue>& values) {
      const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], node.op_type);
      output_or_originals(
          node, values, nn::calls_plainly(*node.layer) ? conv2d_kernel(*x, *w_folded, b_folded.get(), p) : TensorRef(),
          originals);
    };
    fusion.replace(chain, std::move(fused));
  }
  result.program = fusion.finish();
  return result;
}

}  // namespace nnp::core::graph
