// The core's built-in layers as ONNX nodes, and the vendor-domain node.
#include "lowering.hpp"

#include <cstring>

#include "../error.hpp"
#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/named_list.hpp"
#include "../ops.hpp"

namespace nnp::core::onnx {

namespace {

using nn::AttrValue;

const AttrValue* find_attr(const LayerCall& c, const char* name) {
  auto it = c.attrs.values.find(name);
  return it == c.attrs.values.end() ? nullptr : &it->second;
}
bool flag(const LayerCall& c, const char* name, bool fallback) {
  const AttrValue* v = find_attr(c, name);
  return v ? v->b : fallback;
}
double real(const LayerCall& c, const char* name, double fallback) {
  const AttrValue* v = find_attr(c, name);
  return v ? (v->type == NNP_ATTR_INT ? static_cast<double>(v->i) : v->f) : fallback;
}
int64_t integer(const LayerCall& c, const char* name, int64_t fallback) {
  const AttrValue* v = find_attr(c, name);
  return v ? v->i : fallback;
}
// An INTS attribute for d dimensions (one value stands for all of them).
std::vector<int64_t> per_dim(const LayerCall& c, const char* name, size_t d, std::vector<int64_t> fallback) {
  const AttrValue* v = find_attr(c, name);
  if (!v || v->type != NNP_ATTR_INTS || v->ints.empty()) return fallback;
  if (v->ints.size() == 1) return std::vector<int64_t>(d, v->ints[0]);
  return v->ints;
}
std::vector<int64_t> twice(const std::vector<int64_t>& v) {  // ONNX pads: every begin, then every end
  std::vector<int64_t> out = v;
  out.insert(out.end(), v.begin(), v.end());
  return out;
}
std::string tensor_name(nnp_onnx_graph& g, const LayerCall& c, const char* name) {
  TensorRef t = nn::get_tensor(c.module, name);
  return g.value(*t).name;
}
bool has_tensor(const LayerCall& c, const char* name) {
  try {
    return static_cast<bool>(nn::get_tensor(c.module, name));
  } catch (const Error&) {
    return false;
  }
}
int32_t rank(const LayerCall& c) { return c.inputs.empty() ? -1 : c.inputs[0]->shape.ndim; }

// An int64 tensor constant (shapes, pads).
std::string int64_constant(nnp_onnx_graph& g, const LayerCall& c, const std::vector<int64_t>& values,
                           const char* hint) {
  Dims dims;
  dims.ndim = 1;
  dims.d[0] = static_cast<int64_t>(values.size());
  return g.constant(*from_host(values.data(), dims, NNP_I64, c.inputs[0]->device), hint);
}
// A Pad node: `lead` are the pads of the leading (batch, channel) axes as
// ONNX writes them (every begin, then every end), `spatial` those of the
// rest in the same order; mode "constant", "reflect" or "edge".
std::string pad_node(nnp_onnx_graph& g, const LayerCall& c, const std::string& x, const std::vector<int64_t>& lead,
                     const std::vector<int64_t>& spatial, const char* mode, double value = 0) {
  const size_t l = lead.size() / 2, d = spatial.size() / 2;
  std::vector<int64_t> pads(lead.begin(), lead.begin() + static_cast<std::ptrdiff_t>(l));
  pads.insert(pads.end(), spatial.begin(), spatial.begin() + static_cast<std::ptrdiff_t>(d));
  pads.insert(pads.end(), lead.begin() + static_cast<std::ptrdiff_t>(l), lead.end());
  pads.insert(pads.end(), spatial.begin() + static_cast<std::ptrdiff_t>(d), spatial.end());
  std::vector<std::string> in{x, int64_constant(g, c, pads, "pads")};
  if (std::strcmp(mode, "constant") == 0 && value != 0) {
    const Tensor& t = *c.inputs[0];
    in.push_back(g.constant(*full(Dims{}, value, t.dtype, t.device), "pad_value"));
  }
  const std::string out = g.fresh("padded");
  set_attr(g.node("Pad", in, {out}), "mode", std::string(mode));
  return out;
}

// ---- Linear -> Gemm (2-D input) or MatMul + Add ----
bool linear_applies(const LayerCall& c, const nnp_onnx_graph&) { return c.inputs.size() == 1 && rank(c) >= 1; }
void linear_write(nnp_onnx_graph& g, const LayerCall& c) {
  const std::string w = tensor_name(g, c, "weight");
  const bool bias = flag(c, "bias", true);
  if (rank(c) == 2) {
    std::vector<std::string> in{c.input_names[0], w};
    if (bias) in.push_back(tensor_name(g, c, "bias"));
    set_attr(g.node("Gemm", in, {c.output_names[0]}), "transB", int64_t{1});
    return;
  }
  std::string wt = g.fresh(w + "_t");
  set_attr(g.node("Transpose", {w}, {wt}), "perm", std::vector<int64_t>{1, 0});
  if (!bias) {
    g.node("MatMul", {c.input_names[0], wt}, c.output_names);
    return;
  }
  g.node("Add", {g.node1("MatMul", {c.input_names[0], wt}), tensor_name(g, c, "bias")}, c.output_names);
}

// ---- Conv1d/2d/3d -> Conv ----
template <size_t D>
bool conv_applies(const LayerCall& c, const nnp_onnx_graph&) {
  const AttrValue* mode = find_attr(c, "padding_mode");
  const bool pad_mode_known = !mode || mode->s == "zeros" || mode->s == "reflect" || mode->s == "replicate";
  return c.inputs.size() == 1 && rank(c) == static_cast<int32_t>(D) + 2 && pad_mode_known;
}
template <size_t D>
void conv_write(nnp_onnx_graph& g, const LayerCall& c) {
  const std::vector<int64_t> kernel = per_dim(c, "kernel_size", D, {});
  const std::vector<int64_t> dilation = per_dim(c, "dilation", D, std::vector<int64_t>(D, 1));
  std::vector<int64_t> pads;
  const AttrValue* padding = find_attr(c, "padding");
  if (padding && padding->type == NNP_ATTR_STRING) {
    std::vector<int64_t> before(D, 0), after(D, 0);
    if (padding->s == "same")
      for (size_t i = 0; i < D; ++i) {  // the odd one after, as PyTorch
        const int64_t total = dilation[i] * (kernel[i] - 1);
        before[i] = total / 2;
        after[i] = total - before[i];
      }
    pads = before;
    pads.insert(pads.end(), after.begin(), after.end());
  } else {
    pads = twice(per_dim(c, "padding", D, std::vector<int64_t>(D, 0)));
  }
  std::string x = c.input_names[0];
  const AttrValue* mode = find_attr(c, "padding_mode");
  if (mode && mode->s != "zeros") {  // padded first, as the layer does
    x = pad_node(g, c, x, twice(std::vector<int64_t>(2, 0)), pads, mode->s == "reflect" ? "reflect" : "edge");
    pads.assign(pads.size(), 0);
  }
  std::vector<std::string> in{x, tensor_name(g, c, "weight")};
  if (flag(c, "bias", true)) in.push_back(tensor_name(g, c, "bias"));
  ::onnx::NodeProto& n = g.node("Conv", in, c.output_names);
  set_attr(n, "kernel_shape", kernel);
  set_attr(n, "strides", per_dim(c, "stride", D, std::vector<int64_t>(D, 1)));
  set_attr(n, "pads", pads);
  set_attr(n, "dilations", dilation);
  set_attr(n, "group", integer(c, "groups", 1));
}

// ---- MaxPool / AvgPool ----
template <size_t D>
bool max_pool_applies(const LayerCall& c, const nnp_onnx_graph&) {
  return c.inputs.size() == 1 && rank(c) == static_cast<int32_t>(D) + 2 && !flag(c, "return_indices", false);
}
// The attributes MaxPool and AveragePool share.
template <size_t D>
::onnx::NodeProto& pool_node(nnp_onnx_graph& g, const LayerCall& c, const char* type) {
  const std::vector<int64_t> kernel = per_dim(c, "kernel_size", D, {});
  ::onnx::NodeProto& n = g.node(type, {c.input_names[0]}, c.output_names);
  set_attr(n, "kernel_shape", kernel);
  set_attr(n, "strides", per_dim(c, "stride", D, kernel));
  set_attr(n, "pads", twice(per_dim(c, "padding", D, std::vector<int64_t>(D, 0))));
  set_attr(n, "ceil_mode", int64_t{flag(c, "ceil_mode", false) ? 1 : 0});
  return n;
}
template <size_t D>
void max_pool_write(nnp_onnx_graph& g, const LayerCall& c) {
  set_attr(pool_node<D>(g, c, "MaxPool"), "dilations", per_dim(c, "dilation", D, std::vector<int64_t>(D, 1)));
}
template <size_t D>
bool avg_pool_applies(const LayerCall& c, const nnp_onnx_graph&) {
  const AttrValue* divisor = find_attr(c, "divisor_override");
  // With ceil_mode, PyTorch's divisor never counts the part of the last
  // window past the padding while ONNX's count_include_pad does: such a
  // layer is written as the ops it runs (without padding the two agree
  // once count_include_pad is off, see below).
  const bool padded = per_dim(c, "padding", D, std::vector<int64_t>(D, 0)) != std::vector<int64_t>(D, 0);
  const bool diverges = flag(c, "ceil_mode", false) && flag(c, "count_include_pad", true) && padded;
  return c.inputs.size() == 1 && rank(c) == static_cast<int32_t>(D) + 2 && !divisor && !diverges;
}
template <size_t D>
void avg_pool_write(nnp_onnx_graph& g, const LayerCall& c) {
  const bool padded = per_dim(c, "padding", D, std::vector<int64_t>(D, 0)) != std::vector<int64_t>(D, 0);
  const bool include_pad = flag(c, "count_include_pad", true) && padded;
  set_attr(pool_node<D>(g, c, "AveragePool"), "count_include_pad", int64_t{include_pad ? 1 : 0});
}

// ---- BatchNorm in eval, with running statistics -> BatchNormalization ----
bool batch_norm_applies(const LayerCall& c, const nnp_onnx_graph&) {
  return c.inputs.size() == 1 && rank(c) >= 2 && !c.module.training && flag(c, "track_running_stats", true) &&
         has_tensor(c, "running_mean");
}
void batch_norm_write(nnp_onnx_graph& g, const LayerCall& c) {
  const Tensor& mean = *nn::get_tensor(c.module, "running_mean");
  std::string scale, shift;
  if (flag(c, "affine", true)) {
    scale = tensor_name(g, c, "weight");
    shift = tensor_name(g, c, "bias");
  } else {
    TensorRef ones = full(mean.shape, 1.0, mean.dtype, mean.device),
              zeros = full(mean.shape, 0.0, mean.dtype, mean.device);
    scale = g.constant(*ones, "bn_scale");
    shift = g.constant(*zeros, "bn_bias");
  }
  ::onnx::NodeProto& n =
      g.node("BatchNormalization",
             {c.input_names[0], scale, shift, tensor_name(g, c, "running_mean"), tensor_name(g, c, "running_var")},
             c.output_names);
  set_attr(n, "epsilon", static_cast<float>(real(c, "eps", 1e-5)));
}

// ---- LayerNorm -> LayerNormalization (opset 17) ----
bool layer_norm_applies(const LayerCall& c, const nnp_onnx_graph& g) { return g.opset >= 17 && c.inputs.size() == 1; }
void layer_norm_write(nnp_onnx_graph& g, const LayerCall& c) {
  const AttrValue* shape = find_attr(c, "normalized_shape");
  const std::vector<int64_t> normalized = shape ? shape->ints : std::vector<int64_t>{};
  std::vector<std::string> in{c.input_names[0]};
  if (flag(c, "elementwise_affine", true)) {
    in.push_back(tensor_name(g, c, "weight"));
    if (flag(c, "bias", true)) in.push_back(tensor_name(g, c, "bias"));
  } else {
    const Tensor& x = *c.inputs[0];
    Dims dims;
    dims.ndim = static_cast<int32_t>(normalized.size());
    for (size_t i = 0; i < normalized.size(); ++i) dims.d[i] = normalized[i];
    in.push_back(g.constant(*full(dims, 1.0, x.dtype, x.device), "ln_scale"));
  }
  ::onnx::NodeProto& n = g.node("LayerNormalization", in, c.output_names);
  set_attr(n, "axis", -static_cast<int64_t>(normalized.size()));
  set_attr(n, "epsilon", static_cast<float>(real(c, "eps", 1e-5)));
}

// ---- Flatten(1, -1) -> Flatten ----
bool flatten_applies(const LayerCall& c, const nnp_onnx_graph&) {
  const int32_t r = rank(c);
  const int64_t start = integer(c, "start_dim", 1), end = integer(c, "end_dim", -1);
  return c.inputs.size() == 1 && r >= 2 && (start == 1 || start == 1 - r) && (end == -1 || end == r - 1);
}
void flatten_write(nnp_onnx_graph& g, const LayerCall& c) {
  set_attr(g.node("Flatten", {c.input_names[0]}, c.output_names), "axis", int64_t{1});
}

// ---- ZeroPad / ConstantPad / ReflectionPad / ReplicationPad -> Pad ----
template <size_t D>
bool pad_applies(const LayerCall& c, const nnp_onnx_graph&) {
  return c.inputs.size() == 1 && rank(c) >= static_cast<int32_t>(D) + 1;
}
// PyTorch's (left, right, top, bottom, front, back) are pairs from the last
// dimension backwards.
template <size_t D>
void pad_write(nnp_onnx_graph& g, const LayerCall& c, const char* mode) {
  const std::vector<int64_t> torch_order = per_dim(c, "padding", 2 * D, std::vector<int64_t>(2 * D, 0));
  std::vector<int64_t> spatial(2 * D);
  for (size_t i = 0; i < D; ++i) {
    spatial[D - 1 - i] = torch_order[2 * i];
    spatial[2 * D - 1 - i] = torch_order[2 * i + 1];
  }
  const std::vector<int64_t> lead(2 * static_cast<size_t>(rank(c) - static_cast<int32_t>(D)), 0);
  const std::string out = pad_node(g, c, c.input_names[0], lead, spatial, mode, real(c, "value", 0));
  g.node("Identity", {out}, c.output_names);
}
template <size_t D>
void constant_pad_write(nnp_onnx_graph& g, const LayerCall& c) {
  pad_write<D>(g, c, "constant");
}
template <size_t D>
void reflection_pad_write(nnp_onnx_graph& g, const LayerCall& c) {
  pad_write<D>(g, c, "reflect");
}
template <size_t D>
void replication_pad_write(nnp_onnx_graph& g, const LayerCall& c) {
  pad_write<D>(g, c, "edge");
}

// ---- LocalResponseNorm (odd size) -> LRN ----
// PyTorch's window is [c - size/2, c + (size-1)/2], ONNX's
// [c - (size-1)/2, c + size/2]: the same only for an odd size.
bool lrn_applies(const LayerCall& c, const nnp_onnx_graph&) {
  return c.inputs.size() == 1 && rank(c) >= 3 && integer(c, "size", 0) % 2 == 1;
}
void lrn_write(nnp_onnx_graph& g, const LayerCall& c) {
  ::onnx::NodeProto& n = g.node("LRN", {c.input_names[0]}, c.output_names);
  set_attr(n, "size", integer(c, "size", 1));
  set_attr(n, "alpha", static_cast<float>(real(c, "alpha", 1e-4)));
  set_attr(n, "beta", static_cast<float>(real(c, "beta", 0.75)));
  set_attr(n, "bias", static_cast<float>(real(c, "k", 1.0)));
}

// ---- ConvTranspose1d/2d/3d -> ConvTranspose (weights share the layout) ----
template <size_t D>
bool conv_transpose_applies(const LayerCall& c, const nnp_onnx_graph&) {
  return c.inputs.size() == 1 && rank(c) == static_cast<int32_t>(D) + 2;
}
template <size_t D>
void conv_transpose_write(nnp_onnx_graph& g, const LayerCall& c) {
  std::vector<std::string> in{c.input_names[0], tensor_name(g, c, "weight")};
  if (flag(c, "bias", true)) in.push_back(tensor_name(g, c, "bias"));
  ::onnx::NodeProto& n = g.node("ConvTranspose", in, c.output_names);
  set_attr(n, "kernel_shape", per_dim(c, "kernel_size", D, {}));
  set_attr(n, "strides", per_dim(c, "stride", D, std::vector<int64_t>(D, 1)));
  set_attr(n, "pads", twice(per_dim(c, "padding", D, std::vector<int64_t>(D, 0))));
  set_attr(n, "dilations", per_dim(c, "dilation", D, std::vector<int64_t>(D, 1)));
  set_attr(n, "output_padding", per_dim(c, "output_padding", D, std::vector<int64_t>(D, 0)));
  set_attr(n, "group", integer(c, "groups", 1));
}

// ---- Embedding (no max_norm: that one rewrites its weights) -> Gather ----
bool embedding_applies(const LayerCall& c, const nnp_onnx_graph&) {
  return c.inputs.size() == 1 && !find_attr(c, "max_norm");
}
void embedding_write(nnp_onnx_graph& g, const LayerCall& c) {
  set_attr(g.node("Gather", {tensor_name(g, c, "weight"), c.input_names[0]}, c.output_names), "axis", int64_t{0});
}

const BuiltinLowering kLowerings[] = {
    {"nn.Linear", linear_applies, linear_write},
    {"nn.NonDynamicallyQuantizableLinear", linear_applies, linear_write},
    {"nn.Conv1d", conv_applies<1>, conv_write<1>},
    {"nn.Conv2d", conv_applies<2>, conv_write<2>},
    {"nn.Conv3d", conv_applies<3>, conv_write<3>},
    {"nn.MaxPool1d", max_pool_applies<1>, max_pool_write<1>},
    {"nn.MaxPool2d", max_pool_applies<2>, max_pool_write<2>},
    {"nn.MaxPool3d", max_pool_applies<3>, max_pool_write<3>},
    {"nn.AvgPool1d", avg_pool_applies<1>, avg_pool_write<1>},
    {"nn.AvgPool2d", avg_pool_applies<2>, avg_pool_write<2>},
    {"nn.AvgPool3d", avg_pool_applies<3>, avg_pool_write<3>},
    {"nn.BatchNorm1d", batch_norm_applies, batch_norm_write},
    {"nn.BatchNorm2d", batch_norm_applies, batch_norm_write},
    {"nn.BatchNorm3d", batch_norm_applies, batch_norm_write},
    {"nn.LayerNorm", layer_norm_applies, layer_norm_write},
    {"nn.Flatten", flatten_applies, flatten_write},
    {"nn.ZeroPad1d", pad_applies<1>, constant_pad_write<1>},
    {"nn.ZeroPad2d", pad_applies<2>, constant_pad_write<2>},
    {"nn.ZeroPad3d", pad_applies<3>, constant_pad_write<3>},
    {"nn.ConstantPad1d", pad_applies<1>, constant_pad_write<1>},
    {"nn.ConstantPad2d", pad_applies<2>, constant_pad_write<2>},
    {"nn.ConstantPad3d", pad_applies<3>, constant_pad_write<3>},
    {"nn.ReflectionPad1d", pad_applies<1>, reflection_pad_write<1>},
    {"nn.ReflectionPad2d", pad_applies<2>, reflection_pad_write<2>},
    {"nn.ReflectionPad3d", pad_applies<3>, reflection_pad_write<3>},
    {"nn.ReplicationPad1d", pad_applies<1>, replication_pad_write<1>},
    {"nn.ReplicationPad2d", pad_applies<2>, replication_pad_write<2>},
    {"nn.ReplicationPad3d", pad_applies<3>, replication_pad_write<3>},
    {"nn.LocalResponseNorm", lrn_applies, lrn_write},
    {"nn.ConvTranspose1d", conv_transpose_applies<1>, conv_transpose_write<1>},
    {"nn.ConvTranspose2d", conv_transpose_applies<2>, conv_transpose_write<2>},
    {"nn.ConvTranspose3d", conv_transpose_applies<3>, conv_transpose_write<3>},
    {"nn.Embedding", embedding_applies, embedding_write},
};

}  // namespace

const BuiltinLowering* find_builtin_lowering(const std::string& type) {
  for (const BuiltinLowering& l : kLowerings)
    if (type == l.type) return &l;
  return nullptr;
}

void add_attributes(::onnx::NodeProto& node, const nnp_attrs& attrs) {
  for (const auto& [key, v] : attrs.values) {
    switch (v.type) {
      case NNP_ATTR_INT: set_attr(node, key, v.i); break;
      case NNP_ATTR_BOOL: set_attr(node, key, int64_t{v.b ? 1 : 0}); break;
      case NNP_ATTR_FLOAT: set_attr(node, key, static_cast<float>(v.f)); break;
      case NNP_ATTR_STRING: set_attr(node, key, v.s); break;
      case NNP_ATTR_INTS: set_attr(node, key, v.ints); break;
      case NNP_ATTR_FLOATS: set_attr(node, key, std::vector<float>(v.floats.begin(), v.floats.end())); break;
      default: break;  // None: left out, as the layer's default
    }
  }
}

bool builtin_custom_node(const std::string& type) { return type.rfind("nn.quantized.", 0) == 0; }

void write_vendor_node(nnp_onnx_graph& g, const LayerCall& c) {
  const std::string& type = c.module.layer_type->name;
  const size_t dot = type.rfind('.');
  // The layer's own parameters and buffers travel as extra inputs, named in
  // the node's nnp_tensors attribute so import gives them back.
  std::vector<std::string> inputs = c.input_names;
  std::vector<std::string> local;
  for (const auto& [name, tensor] : c.module.parameters)
    if (tensor) {
      local.push_back(name);
      inputs.push_back(g.name(*tensor));
    }
  for (const auto& [name, tensor] : c.module.buffers)
    if (tensor && !c.module.non_persistent.count(name)) {
      local.push_back(name);
      inputs.push_back(g.name(*tensor));
    }
  ::onnx::NodeProto& n = g.node(type.substr(dot + 1), inputs, c.output_names, type.substr(0, dot));
  add_attributes(n, c.attrs);
  if (!local.empty()) {
    ::onnx::AttributeProto& a = *n.add_attribute();
    a.set_name("nnp_tensors");
    a.set_type(::onnx::AttributeProto::STRINGS);
    for (const std::string& name : local) a.add_strings(name);
  }
}

}  // namespace nnp::core::onnx
