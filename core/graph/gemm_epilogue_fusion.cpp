#include "gemm_epilogue_fusion.hpp"

#include <unordered_map>

#include "../autograd/grad_mode.hpp"
#include "../ops.hpp"
#include "node_match.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// The fused node's work: the kernel where it applies (from the packed
// weight while w is the tensor packed), else the nodes it replaced.
void run_fused(const std::vector<const onnx::GraphNode*>& originals, int32_t activation, const TensorRef& packed,
               const TensorRef& packed_from, const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
  auto tensor = [&](size_t i) { return input_tensor(node, values, i); };
  const Tensor* x = tensor(0);
  const Tensor* w = tensor(1);
  TensorRef out;
  if (x && w && (node.inputs.size() < 3 || tensor(2))) {
    if (packed && w == packed_from.get()) out = gemm_packed_kernel(*x, *w, *packed, tensor(2), activation);
    if (!out) out = gemm_epilogue_kernel(*x, *w, tensor(2), activation);
  }
  output_or_originals(node, values, std::move(out), originals);
}

}  // namespace

GemmEpilogueFusion fuse_gemm_epilogues(const std::vector<const onnx::GraphNode*>& nodes,
                                       const std::vector<int32_t>& outputs, int32_t slots,
                                       const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                       const std::vector<std::pair<int32_t, TensorRef>>& folded) {
  std::unordered_map<int32_t, std::pair<TensorRef, bool>> constants;  // the tensor, and whether the module's own
  for (const auto& [slot, t] : module_tensors) constants[slot] = {t, true};
  for (const auto& [slot, t] : folded) constants[slot] = {t, false};
  GemmEpilogueFusion fusion_result;
  autograd::NoGradGuard no_grad;
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  auto read_once = [&](int32_t slot) { return readers[static_cast<size_t>(slot)] == 1; };
  ChainFusion fusion(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& matmul = *nodes[i];
    if (fusion.claimed(i) || !is_op(matmul, "MatMul", 2) || matmul.inputs[0] < 0 || matmul.inputs[1] < 0 ||
        !read_once(matmul.outputs[0]))
      continue;
    std::vector<size_t> chain{i};
    int32_t bias = -1, result = matmul.outputs[0], activation = NNP_ACTIVATION_NONE;
    // An Add of two products is claimed by the first one's chain only.
    if (size_t j = reader_of(nodes, i, result); j < nodes.size() && !fusion.claimed(j) && is_op(*nodes[j], "Add", 2)) {
      const onnx::GraphNode& add = *nodes[j];
      bias = add.inputs[0] == result ? add.inputs[1] : add.inputs[0];
      if (bias >= 0 && bias != result) {
        chain.push_back(j);
        result = add.outputs[0];
      } else {
        bias = -1;
      }
    }
    if (size_t j = reader_of(nodes, chain.back(), result); (chain.size() == 1 || read_once(result)) &&
                                                           j < nodes.size() && !fusion.claimed(j) &&
                                                           is_op(*nodes[j], "Relu", 1)) {
      chain.push_back(j);
      result = nodes[j]->outputs[0];
      activation = NNP_ACTIVATION_RELU;
    }
    if (chain.size() == 1) continue;
    std::vector<const onnx::GraphNode*> originals;
    for (size_t c : chain) originals.push_back(nodes[c]);
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = activation == NNP_ACTIVATION_RELU ? (bias >= 0 ? "MatMul+Add+Relu" : "MatMul+Relu") : "MatMul+Add";
    fused->inputs = {matmul.inputs[0], matmul.inputs[1]};
    if (bias >= 0) fused->inputs.push_back(bias);
    fused->outputs = {result};
    TensorRef packed, packed_from;
    if (auto c = constants.find(matmul.inputs[1]); c != constants.end() && c->second.first)
      if ((packed = gemm_pack_weight(*c->second.first))) {
        packed_from = c->second.first;
        if (c->second.second) fusion_result.sources.push_back(packed_from.get());
      }
    fused->fused = [originals, activation, packed, packed_from](const onnx::GraphNode& node,
                                                                std::vector<onnx::GraphValue>& values) {
      run_fused(originals, activation, packed, packed_from, node, values);
    };
    fusion.replace(chain, std::move(fused));
  }
  fusion_result.program = fusion.finish();
  return fusion_result;
}

}  // namespace nnp::core::graph
