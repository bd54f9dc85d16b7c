#include "pool_layer_direct.hpp"

#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "layer_sizes.hpp"

namespace nnp::core::graph {

bool max_pool_params(const nnp_module& m, nnp_pool2d_params& p) {
  if (!m.layer_type || m.layer_type->name != "nn.MaxPool2d" || !m.layer_attrs) return false;
  const nnp_attrs& a = *m.layer_attrs;
  if (flag(a, "ceil_mode") || flag(a, "return_indices")) return false;
  p = nnp_pool2d_params{};
  p.struct_size = sizeof p;
  const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
  if (!two_sizes(a, "kernel_size", nullptr, p.kernel) || !two_sizes(a, "stride", p.kernel, p.stride) ||
      !two_sizes(a, "padding", zero, p.padding) || !two_sizes(a, "dilation", one, p.dilation))
    return false;
  for (int i = 0; i < 2; ++i)
    if (p.kernel[i] < 1 || p.kernel[i] > (int64_t{1} << 20) || p.stride[i] < 1 || p.stride[i] > (int64_t{1} << 20) ||
        p.padding[i] < 0 || 2 * p.padding[i] > p.kernel[i] || p.dilation[i] < 1 || p.dilation[i] > (int64_t{1} << 20))
      return false;
  return true;
}

namespace {

void run_pool(const nnp_pool2d_params& p, const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
  nnp_module& pool = *node.layer;
  const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], "MaxPool2d");
  TensorRef out;
  if (x->shape.ndim == 4 && nn::calls_plainly(pool)) {
    int64_t size[2];
    bool fits = true;
    for (int i = 0; i < 2; ++i) {  // floor((H + 2p - d(k - 1) - 1) / s) + 1, sizes bounded above
      const int64_t room = x->shape[2 + i] + 2 * p.padding[i] - p.dilation[i] * (p.kernel[i] - 1) - 1;
      fits = fits && room >= 0;
      size[i] = room < 0 ? 0 : room / p.stride[i] + 1;
    }
    if (fits) out = max_pool2d_kernel(*x, p, size[0], size[1], false).values;
  }
  if (!out) out = nn::call(pool, {x});  // as the program runs it
  values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
}

}  // namespace

FusedProgram call_pool_kernels_directly(const std::vector<const onnx::GraphNode*>& nodes) {
  FusedProgram out;
  for (const onnx::GraphNode* n : nodes) {
    nnp_pool2d_params p;
    if (n->kind != onnx::GraphNodeKind::kLayer || n->inputs.size() != 1 || n->inputs[0] < 0 || n->outputs.size() != 1 ||
        n->outputs[0] < 0 || !max_pool_params(*n->layer, p)) {
      out.nodes.push_back(n);
      continue;
    }
    auto direct = std::make_unique<onnx::GraphNode>();
    direct->kind = onnx::GraphNodeKind::kFused;
    direct->op_type = n->op_type;
    direct->layer = n->layer;
    direct->inputs = n->inputs;
    direct->outputs = n->outputs;
    direct->fused = [p](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      run_pool(p, node, values);
    };
    out.nodes.push_back(direct.get());
    out.made.push_back(std::move(direct));
    ++out.fused;
  }
  return out;
}

bool tiling_pool(const onnx::GraphNode& n, int32_t input, int64_t (&window)[2]) {
  nnp_pool2d_params p;
  if (n.kind != onnx::GraphNodeKind::kLayer || n.inputs.size() != 1 || n.inputs[0] != input || n.outputs.size() != 1 ||
      n.outputs[0] < 0 || !max_pool_params(*n.layer, p))
    return false;
  for (int i = 0; i < 2; ++i)
    if (p.stride[i] != p.kernel[i] || p.padding[i] != 0 || p.dilation[i] != 1) return false;
  window[0] = p.kernel[0];
  window[1] = p.kernel[1];
  return true;
}

}  // namespace nnp::core::graph
