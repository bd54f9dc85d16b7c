#include "conv_integer_packing.hpp"

#include <unordered_map>

#include "../autograd/grad_mode.hpp"
#include "../ops.hpp"

namespace nnp::core::graph {

namespace {

// Two sizes of an ONNX attribute (absent: the fallback); false where it has another form.
bool onnx_pair(const nnp_attrs& a, const char* name, int64_t fallback, int64_t out[2]) {
  auto it = a.values.find(name);
  if (it == a.values.end()) {
    out[0] = out[1] = fallback;
    return true;
  }
  if (it->second.type != NNP_ATTR_INTS || it->second.ints.size() != 2) return false;
  out[0] = it->second.ints[0];
  out[1] = it->second.ints[1];
  return true;
}

// A ConvInteger node's geometry for a weight [C_out, C_in, kH, kW]: 2-D,
// one group or one channel a group, padding the same on both sides (or auto_pad VALID); false
// where the packed form does not take it (the node then runs as written).
bool conv_integer_geometry(const onnx::GraphNode& n, const Tensor& w, nnp_conv2d_params& p) {
  if (w.shape.ndim != 4) return false;
  p = nnp_conv2d_params{};
  p.struct_size = sizeof p;
  p.activation = NNP_ACTIVATION_NONE;
  p.groups = 1;
  if (!n.attrs) return true;
  const nnp_attrs& a = *n.attrs;
  if (auto g = a.values.find("group"); g != a.values.end()) {  // 1, or one channel a group (depthwise)
    if (g->second.type != NNP_ATTR_INT || !(g->second.i == 1 || (g->second.i == w.shape[0] && w.shape[1] == 1)))
      return false;
    p.groups = g->second.i;
  }
  if (auto k = a.values.find("kernel_shape");
      k != a.values.end() && !(k->second.type == NNP_ATTR_INTS && k->second.ints.size() == 2 &&
                               k->second.ints[0] == w.shape[2] && k->second.ints[1] == w.shape[3]))
    return false;
  bool valid = false;
  if (auto pad = a.values.find("auto_pad"); pad != a.values.end()) {
    if (pad->second.type != NNP_ATTR_STRING || (pad->second.s != "NOTSET" && pad->second.s != "VALID")) return false;
    valid = pad->second.s == "VALID";
  }
  if (auto pads = a.values.find("pads"); pads != a.values.end() && !valid) {
    const std::vector<int64_t>& v = pads->second.ints;
    if (pads->second.type != NNP_ATTR_INTS || v.size() != 4 || v[0] != v[2] || v[1] != v[3]) return false;
    p.padding[0] = v[0];
    p.padding[1] = v[1];
  }
  return onnx_pair(a, "strides", 1, p.stride) && onnx_pair(a, "dilations", 1, p.dilation);
}

}  // namespace

ConvIntegerPacking pack_conv_integers(const std::vector<const onnx::GraphNode*>& nodes,
                                      const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                      const std::vector<std::pair<int32_t, TensorRef>>& folded) {
  std::unordered_map<int32_t, std::pair<TensorRef, bool>> constants;  // the tensor, and whether the module's own
  for (const auto& [slot, t] : module_tensors) constants[slot] = {t, true};
  for (const auto& [slot, t] : folded) constants[slot] = {t, false};
  auto constant = [&](const onnx::GraphNode& n, size_t i) -> const std::pair<TensorRef, bool>* {
    if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
    auto c = constants.find(n.inputs[i]);
    return c != constants.end() && c->second.first ? &c->second : nullptr;
  };
  ConvIntegerPacking result;
  ChainFusion fusion(nodes);
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& conv = *nodes[i];
    if (conv.kind != onnx::GraphNodeKind::kOp || conv.op_type != "ConvInteger" || conv.inputs.size() < 2 ||
        conv.inputs.size() > 4 || conv.inputs[0] < 0 || conv.outputs.size() != 1 || conv.outputs[0] < 0)
      continue;
    const auto* weight = constant(conv, 1);
    const auto* weight_zero = constant(conv, 3);
    nnp_conv2d_params p;
    if (!weight || (conv.inputs.size() == 4 && conv.inputs[3] >= 0 && !weight_zero) ||
        !conv_integer_geometry(conv, *weight->first, p))
      continue;
    const TensorRef w = weight->first, w_zero = weight_zero ? weight_zero->first : TensorRef();
    const TensorRef packed = conv2d_integer_pack_weight(*w, w_zero.get(), p);
    if (!packed) continue;
    for (const auto* c : {weight, weight_zero})
      if (c && c->second) result.sources.push_back(c->first.get());
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = "ConvInteger(packed)";
    fused->inputs = conv.inputs;
    fused->outputs = conv.outputs;
    const onnx::GraphNode* original = &conv;
    fused->fused = [original, p, w, w_zero, packed](const onnx::GraphNode& node,
                                                    std::vector<onnx::GraphValue>& values) {
      const Tensor* x = input_tensor(node, values, 0);
      const Tensor* x_zero = input_tensor(node, values, 2);
      TensorRef out;
      // The constants are the plan's: the slots hold them unless a caller replaced them.
      if (x && input_tensor(node, values, 1) == w.get() && (!w_zero || input_tensor(node, values, 3) == w_zero.get()))
        out = conv2d_integer_packed_kernel(*x, x_zero, *w, w_zero.get(), *packed, p);
      output_or_originals(node, values, std::move(out), {original});
    };
    fusion.replace({i}, std::move(fused));
  }
  result.program = fusion.finish();
  return result;
}

}  // namespace nnp::core::graph
