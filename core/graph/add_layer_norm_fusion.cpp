#include "add_layer_norm_fusion.hpp"

#include "../nn/attrs.hpp"
#include "../ops.hpp"
#include "node_match.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// A LayerNormalization's axis and epsilon (ONNX's defaults: -1, 1e-5).
void axis_and_epsilon(const onnx::GraphNode& n, int64_t& axis, double& epsilon) {
  axis = -1;
  epsilon = 1e-5;
  if (!n.attrs) return;
  if (auto a = n.attrs->values.find("axis"); a != n.attrs->values.end()) axis = a->second.i;
  if (auto e = n.attrs->values.find("epsilon"); e != n.attrs->values.end())
    epsilon = e->second.type == NNP_ATTR_FLOAT ? e->second.f : static_cast<double>(e->second.i);
}

}  // namespace

FusedProgram fuse_add_layer_norms(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                  int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  ChainFusion fusion(nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& add = *nodes[i];
    if (fusion.claimed(i) || !is_op(add, "Add", 2) || add.inputs[0] < 0 || add.inputs[1] < 0 ||
        readers[static_cast<size_t>(add.outputs[0])] != 1)
      continue;
    const size_t j = reader_of(nodes, i, add.outputs[0]);
    if (j >= nodes.size() || fusion.claimed(j)) continue;
    const onnx::GraphNode& norm = *nodes[j];
    // Y only (no Mean or InvStdDev), Scale given, X the sum.
    if (norm.kind != onnx::GraphNodeKind::kOp || norm.op_type != "LayerNormalization" || norm.inputs.size() < 2 ||
        norm.inputs.size() > 3 || norm.inputs[0] != add.outputs[0] || norm.inputs[1] < 0 || norm.outputs.empty() ||
        norm.outputs[0] < 0)
      continue;
    bool y_only = true;
    for (size_t o = 1; o < norm.outputs.size(); ++o) y_only = y_only && norm.outputs[o] < 0;
    if (!y_only) continue;
    int64_t axis = -1;
    double epsilon = 1e-5;
    axis_and_epsilon(norm, axis, epsilon);
    const std::vector<const onnx::GraphNode*> originals{&add, &norm};
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = "Add+LayerNormalization";
    fused->inputs = {add.inputs[0], add.inputs[1], norm.inputs[1]};
    if (norm.inputs.size() == 3 && norm.inputs[2] >= 0) fused->inputs.push_back(norm.inputs[2]);
    fused->outputs = {norm.outputs[0]};
    fused->fused = [originals, axis, epsilon](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      const Tensor *a = input_tensor(node, values, 0), *b = input_tensor(node, values, 1);
      TensorRef out;
      if (a && b && (axis == -1 || axis == a->shape.ndim - 1))
        out = add_layer_norm_kernel(*a, *b, input_tensor(node, values, 2), input_tensor(node, values, 3), epsilon);
      output_or_originals(node, values, std::move(out), originals);
    };
    fusion.replace({i, j}, std::move(fused));
  }
  return fusion.finish();
}

}  // namespace nnp::core::graph
