#include "quantized_conv_packing.hpp"

#include <cmath>

#include "../autograd/grad_mode.hpp"
#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "layer_sizes.hpp"
#include "node_match.hpp"
#include "pool_layer_direct.hpp"
#include "readers.hpp"

namespace nnp::core::graph {

namespace {

// What the kernel takes of a static int8 Conv2d layer, read once per plan
// as the layer computes it on each call.
struct QuantizedConv {
  nnp_conv2d_params p;
  nnp_quantized_conv2d_params q;
  bool linear;                     // an nn.quantized.Linear: a 1 x 1 convolution of its rows
  TensorRef weight;                // i8 [C_out, C_in, kH, kW], or [C_out, C_in] for a Linear
  TensorRef scale;                 // f32 [C_out]: each weight scale times the input's, as an f32 product
  std::vector<TensorRef> tensors;  // the buffers read: they must still be the layer's
};

// The buffers the kernel reads, in QuantizedConv::tensors' order.
constexpr const char* kTensorNames[] = {"weight",           "weight_scale", "input_scale",
                                        "input_zero_point", "scale",        "zero_point"};

std::vector<double> values_of(const Tensor& t) {
  const TensorRef d = contiguous(*to(t, t.device, NNP_F64));
  std::vector<double> v(static_cast<size_t>(d->numel));
  copy_to_host(*d, v.data(), v.size() * sizeof(double));
  return v;
}

bool positive_float(double v) {
  const float f = static_cast<float>(v);
  return f > 0 && std::isfinite(f) && std::isfinite(1.0f / f);
}

// False where the layer is not one, or holds parameters its own call would
// refuse (it then runs, and refuses, as written).
bool read_layer(const onnx::GraphNode& n, QuantizedConv& c) {
  nnp_module& m = *n.layer;
  if (!m.layer_type || !m.layer_attrs) return false;
  c.linear = m.layer_type->name == "nn.quantized.Linear";
  if (!c.linear && m.layer_type->name != "nn.quantized.Conv2d") return false;
  const nnp_attrs& a = *m.layer_attrs;
  c.p = nnp_conv2d_params{};
  c.p.struct_size = sizeof c.p;
  c.p.groups = 1;
  c.p.activation = NNP_ACTIVATION_NONE;
  const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
  if (!two_sizes(a, "stride", one, c.p.stride) || !two_sizes(a, "padding", zero, c.p.padding) ||
      !two_sizes(a, "dilation", one, c.p.dilation))
    return false;
  c.tensors.clear();
  for (const char* name : kTensorNames) {
    const TensorRef* t = m.buffers.find(name);
    if (!t || !*t) return false;
    c.tensors.push_back(*t);
  }
  const Tensor& w = *c.tensors[0];
  if (w.dtype != NNP_I8 || w.shape.ndim != (c.linear ? 2 : 4) || w.numel == 0 || c.tensors[1]->numel != w.shape[0])
    return false;
  for (size_t i = 2; i < c.tensors.size(); ++i)
    if (c.tensors[i]->numel != 1) return false;
  const double input_scale = values_of(*c.tensors[2])[0], input_zero_point = values_of(*c.tensors[3])[0];
  const double output_scale = values_of(*c.tensors[4])[0], zero_point = values_of(*c.tensors[5])[0];
  if (!positive_float(input_scale) || !positive_float(output_scale) || !(input_zero_point >= 0) ||
      input_zero_point > 128 || !(zero_point >= 0) || zero_point > 255)
    return false;
  const float in_scale = static_cast<float>(input_scale), out_scale = static_cast<float>(output_scale);
  c.q = nnp_quantized_conv2d_params{};
  c.q.struct_size = sizeof c.q;
  c.q.input_inv_scale = 1.0f / in_scale;
  c.q.input_offset_min = -static_cast<int32_t>(input_zero_point);
  c.q.output_scale = out_scale;
  c.q.output_inv_scale = 1.0f / out_scale;
  c.q.output_zero_point = static_cast<int32_t>(zero_point);
  c.q.output_min = flag(a, "relu") ? c.q.output_zero_point : 0;
  c.q.output_max = 255;
  // The f64 product of two floats is exact: rounded once, it is their f32 product.
  std::vector<float> scales;
  for (double s : values_of(*c.tensors[1]))
    scales.push_back(static_cast<float>(static_cast<double>(static_cast<float>(s)) * in_scale));
  Dims shape;
  shape.ndim = 1;
  shape.d[0] = w.shape[0];
  c.scale = from_host(scales.data(), shape, NNP_F32, w.device);
  c.weight = c.tensors[0];
  return true;
}

// A Linear's weight [O, K] as the 1 x 1 convolution's [O, K, 1, 1].
TensorRef as_convolution(const Tensor& w) {
  const int64_t shape[4] = {w.shape[0], w.shape[1], 1, 1};
  return reshape(w, shape, 4);
}

// An Identity (op or layer) node reading slot alone.
bool is_identity(const onnx::GraphNode& n, int32_t slot) {
  const bool layer =
      n.kind == onnx::GraphNodeKind::kLayer && n.layer->layer_type && n.layer->layer_type->name == "nn.Identity";
  return (layer || n.kind == onnx::GraphNodeKind::kOp) && (layer || n.op_type == "Identity") && n.inputs.size() == 1 &&
         n.inputs[0] == slot && n.outputs.size() == 1 && n.outputs[0] >= 0;
}

// Whether every tensor read is still the layer's (none replaced).
bool still_the_layers(nnp_module& m, const std::vector<TensorRef>& tensors) {
  size_t i = 0;
  for (const char* name : kTensorNames) {
    const TensorRef* t = m.buffers.find(name);
    if (!t || t->get() != tensors[i++].get()) return false;
  }
  return true;
}

}  // namespace

QuantizedConvPacking pack_quantized_convolutions(const std::vector<const onnx::GraphNode*>& nodes,
                                                 const std::vector<int32_t>& outputs, int32_t slots) {
  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  auto read_once = [&](int32_t slot) { return readers[static_cast<size_t>(slot)] == 1; };
  QuantizedConvPacking result;
  ChainFusion fusion(nodes);
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::GraphNode& conv = *nodes[i];
    QuantizedConv c;
    if (fusion.claimed(i) || conv.kind != onnx::GraphNodeKind::kLayer || conv.inputs.size() != 1 ||
        conv.inputs[0] < 0 || conv.outputs.size() != 1 || conv.outputs[0] < 0 || !read_layer(conv, c))
      continue;
    std::vector<size_t> chain{i};
    int32_t result_slot = conv.outputs[0];
    size_t next = reader_of(nodes, i, result_slot);
    if (read_once(result_slot) && next < nodes.size() && !fusion.claimed(next) &&
        is_identity(*nodes[next], result_slot)) {
      chain.push_back(next);
      result_slot = nodes[next]->outputs[0];
      next = reader_of(nodes, next, result_slot);
    }
    int64_t pool[2] = {0, 0};
    ModuleRef pool_layer;
    TensorRef packed;
    if (!c.linear && read_once(result_slot) && next < nodes.size() && !fusion.claimed(next) &&
        tiling_pool(*nodes[next], result_slot, pool)) {
      if ((packed = quantized_conv2d_pack_weight(*c.weight, c.p, pool))) {
        chain.push_back(next);
        result_slot = nodes[next]->outputs[0];
        pool_layer = nodes[next]->layer;
      } else {
        pool[0] = pool[1] = 0;
      }
    }
    if (!packed && chain.size() > 1) chain.resize(1);  // an Identity alone is not worth a node
    if (!packed) packed = quantized_conv2d_pack_weight(c.linear ? *as_convolution(*c.weight) : *c.weight, c.p, pool);
    if (!packed) continue;
    if (chain.size() == 1) result_slot = conv.outputs[0];
    for (const TensorRef& t : c.tensors) result.sources.push_back(t.get());
    std::vector<const onnx::GraphNode*> originals;
    for (size_t k : chain) originals.push_back(nodes[k]);
    auto fused = std::make_unique<onnx::GraphNode>();
    fused->kind = onnx::GraphNodeKind::kFused;
    fused->op_type = conv.op_type + (pool_layer ? "+MaxPool" : "");
    fused->layer = conv.layer;
    fused->inputs = conv.inputs;
    fused->outputs = {result_slot};
    fused->fused = [originals, c, pool0 = pool[0], pool1 = pool[1], packed, pool_layer](
                       const onnx::GraphNode& node, std::vector<onnx::GraphValue>& values) {
      const TensorRef& x = onnx::tensor_of(values[static_cast<size_t>(node.inputs[0])], node.op_type);
      const int64_t windows[2] = {pool0, pool1};
      TensorRef out;
      const TensorRef* bias = node.layer->buffers.find("bias");
      if (nn::calls_plainly(*node.layer) && (!pool_layer || nn::calls_plainly(*pool_layer)) &&
          still_the_layers(*node.layer, c.tensors))
        out = quantized_conv2d_packed_kernel(*x, *node.layer, *c.weight, *packed, *c.scale,
                                             bias && *bias ? bias->get() : nullptr, c.q, c.p, windows);
      output_or_originals(node, values, std::move(out), originals);
    };
    fusion.replace(chain, std::move(fused));
  }
  result.program = fusion.finish();
  return result;
}

}  // namespace nnp::core::graph
