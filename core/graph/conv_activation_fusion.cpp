#include "conv_activation_fusion.hpp"

#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "layer_sizes.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// The geometry of an nn.Conv2d layer, false where the fused kernel does not
// apply (padding by rule or by a mode other than zeros).
bool conv_params(const onnx::GraphNode& n, nnp_conv2d_params& p) {
  const nnp_module& m = *n.layer;
  if (!m.layer_type || m.layer_type->name != "nn.Conv2d" || !m.layer_attrs) return false;
  const nnp_attrs& a = *m.layer_attrs;
  if (auto mode = a.values.find("padding_mode");
      mode != a.values.end() && !(mode->second.type == NNP_ATTR_STRING && mode->second.s == "zeros"))
    return false;
  p = nnp_conv2d_params{};
  p.struct_size = sizeof p;
  p.groups = 1;
  if (auto g = a.values.find("groups"); g != a.values.end()) {
    if (g->second.type != NNP_ATTR_INT) return false;
    p.groups = g->second.i;
  }
  p.activation = NNP_ACTIVATION_RELU;
  const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
  return two_sizes(a, "stride", one, p.stride) && two_sizes(a, "padding", zero, p.padding) &&
         two_sizes(a, "dilation", one, p.dilation);
}

void run_conv_relu(const nnp_conv2d_params& p, const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
  nnp_module& conv = *node.layer;
  const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], "Conv2d+Relu");
  TensorRef out;
  if (nn::calls_plainly(conv)) {
    const TensorRef* weight = conv.parameters.find("weight");
    const TensorRef* bias = conv.parameters.find("bias");
    if (weight && *weight) out = conv2d_kernel(*x, **weight, bias && *bias ? bias->get() : nullptr, p);
  }
  if (!out) out = unary(NNP_UNARY_RELU, *nn::call(conv, {x}));  // as the program runs it
  values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
}

}  // namespace

FusedProgram fuse_conv_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                            int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);

  FusedProgram out;
  std::vector<bool> absorbed(nodes.size(), false);
  std::vector<const onnx::GraphNode*> replacement(nodes.size(), nullptr);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& conv = *nodes[i];
    nnp_conv2d_params p;
    if (conv.kind != onnx::GraphNodeKind::kLayer || conv.inputs.size() != 1 || conv.inputs[0] < 0 ||
        conv.outputs.size() != 1 || conv.outputs[0] < 0 || readers[static_cast<size_t>(conv.outputs[0])] != 1 ||
        !conv_params(conv, p))
      continue;
    for (size_t j = i + 1; j < nodes.size(); ++j) {
      const onnx::GraphNode& relu = *nodes[j];
      if (relu.inputs.empty() || relu.inputs[0] != conv.outputs[0]) continue;
      if (relu.kind != onnx::GraphNodeKind::kOp || relu.op_type != "Relu" || relu.outputs.size() != 1 ||
          relu.outputs[0] < 0)
        break;
      auto fused = std::make_unique<onnx::GraphNode>();
      fused->kind = onnx::GraphNodeKind::kFused;
      fused->op_type = conv.op_type + "+Relu";
      fused->layer = conv.layer;
      fused->inputs = conv.inputs;
      fused->outputs = relu.outputs;
      fused->fused = [p](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
        run_conv_relu(p, node, values);
      };
      // The fused node runs where the Relu ran: every input it reads is written by then.
      replacement[j] = fused.get();
      absorbed[i] = true;
      out.made.push_back(std::move(fused));
      ++out.fused;
      break;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (absorbed[i]) continue;
    out.nodes.push_back(replacement[i] ? replacement[i] : nodes[i]);
  }
  return out;
}

}  // namespace nnp::core::graph
