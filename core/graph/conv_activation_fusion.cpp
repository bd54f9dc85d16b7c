#include "conv_activation_fusion.hpp"

#include "../autograd/record.hpp"
#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "layer_relu_fusion.hpp"
#include "layer_sizes.hpp"

namespace nnp::core::graph {

bool conv2d_geometry(const onnx::GraphNode& n, nnp_conv2d_params& p) {
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

// The layer's weight and bias as the kernel takes them (bias may be null),
// or false where the layer has no weight.
bool weight_and_bias(nnp_module& layer, const Tensor*& weight, const Tensor*& bias) {
  const TensorRef* w = layer.parameters.find("weight");
  const TensorRef* b = layer.parameters.find("bias");
  if (!w || !*w) return false;
  weight = w->get();
  bias = b && *b ? b->get() : nullptr;
  return true;
}

FusedProgram fuse_conv_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                            int32_t slots) {
  return fuse_layers_with_relu(nodes, outputs, slots, [](const onnx::GraphNode& conv) -> LayerReluKernel {
    nnp_conv2d_params p;
    if (!conv2d_geometry(conv, p)) return {};
    return [p](const Tensor& x, nnp_module& layer) {
      const Tensor *weight, *bias;
      return weight_and_bias(layer, weight, bias) ? conv2d_kernel(x, *weight, bias, p) : TensorRef();
    };
  });
}

// An nn.Linear layer and the Relu after it: the backend's GEMM with the bias
// and the ReLU in its epilogue (gemm_epilogue_kernel, ABI 1.18), the weight
// read transposed where it lies.
FusedProgram fuse_linear_relu(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                              int32_t slots) {
  return fuse_layers_with_relu(nodes, outputs, slots, [](const onnx::GraphNode& linear) -> LayerReluKernel {
    const nnp_module& m = *linear.layer;
    if (!m.layer_type || m.layer_type->name != "nn.Linear") return {};
    return [](const Tensor& x, nnp_module& layer) {
      const Tensor *weight, *bias;
      // Asked here, of the weight itself: its transposed view records nothing.
      if (!weight_and_bias(layer, weight, bias) || weight->shape.ndim != 2 ||
          autograd::should_record({&x, weight, bias}))
        return TensorRef();
      return gemm_epilogue_kernel(x, *transpose(*weight, 0, 1), bias, NNP_ACTIVATION_RELU);
    };
  });
}

}  // namespace nnp::core::graph
