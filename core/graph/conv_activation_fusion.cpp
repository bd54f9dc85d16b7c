#include "conv_activation_fusion.hpp"

#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "layer_relu_fusion.hpp"
#include "layer_sizes.hpp"

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

// The fused node's work: kernel(x, weight, bias) where the layer calls
// plainly and the kernel applies, else the layer and the ReLU as the program
// runs them.
template <typename Kernel>
void run_layer_relu(const char* who, const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values,
                    Kernel kernel) {
  nnp_module& layer = *node.layer;
  const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], who);
  TensorRef out;
  if (nn::calls_plainly(layer)) {
    const TensorRef* weight = layer.parameters.find("weight");
    const TensorRef* bias = layer.parameters.find("bias");
    if (weight && *weight) out = kernel(*x, **weight, bias && *bias ? bias->get() : nullptr);
  }
  if (!out) out = unary(NNP_UNARY_RELU, *nn::call(layer, {x}));
  values[static_cast<size_t>(node.outputs[0])] = onnx::GraphValue{std::move(out), nullptr};
}

}  // namespace

FusedProgram fuse_conv_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                            int32_t slots) {
  return fuse_layers_with_relu(nodes, outputs, slots, [](const onnx::GraphNode& conv) -> FusedRun {
    nnp_conv2d_params p;
    if (!conv_params(conv, p)) return {};
    return [p](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      run_layer_relu("Conv2d+Relu", node, values, [&p](const Tensor& x, const Tensor& w, const Tensor* bias) {
        return conv2d_kernel(x, w, bias, p);
      });
    };
  });
}

// An nn.Linear layer and the Relu after it: the backend's GEMM with the bias
// and the ReLU in its epilogue (gemm_epilogue_kernel, ABI 1.18), the weight
// read transposed where it lies.
FusedProgram fuse_linear_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                              int32_t slots) {
  return fuse_layers_with_relu(nodes, outputs, slots, [](const onnx::GraphNode& linear) -> FusedRun {
    const nnp_module& m = *linear.layer;
    if (!m.layer_type || m.layer_type->name != "nn.Linear") return {};
    return [](const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      run_layer_relu("Linear+Relu", node, values, [](const Tensor& x, const Tensor& w, const Tensor* bias) {
        return w.shape.ndim == 2 ? gemm_epilogue_kernel(x, *transpose(w, 0, 1), bias, NNP_ACTIVATION_RELU)
                                 : TensorRef();
      });
    };
  });
}

}  // namespace nnp::core::graph
