#include "layer_onnx_form.hpp"

#include "../nn/module.hpp"

namespace nnp::core::graph {
namespace {

using nn::AttrValue;

// The layer's attribute as `n` integers (an INT repeated), or empty.
std::vector<int64_t> ints_of(const nnp_attrs& attrs, const char* name, size_t n) {
  const auto it = attrs.values.find(name);
  if (it == attrs.values.end()) return {};
  if (it->second.type == NNP_ATTR_INT) return std::vector<int64_t>(n, it->second.i);
  if (it->second.type == NNP_ATTR_INTS && it->second.ints.size() == n) return it->second.ints;
  return {};
}

int64_t int_of(const nnp_attrs& attrs, const char* name, int64_t fallback) {
  const auto it = attrs.values.find(name);
  if (it == attrs.values.end()) return fallback;
  if (it->second.type == NNP_ATTR_INT) return it->second.i;
  if (it->second.type == NNP_ATTR_BOOL) return it->second.b ? 1 : 0;
  return fallback;
}

void set_ints(nnp_attrs& attrs, const char* name, std::vector<int64_t> values) {
  AttrValue v;
  v.type = NNP_ATTR_INTS;
  v.ints = std::move(values);
  attrs.values[name] = std::move(v);
}
void set_int(nnp_attrs& attrs, const char* name, int64_t value) {
  AttrValue v;
  v.type = NNP_ATTR_INT;
  v.i = value;
  attrs.values[name] = std::move(v);
}

// ONNX's pads: each dimension's begin, then each one's end.
std::vector<int64_t> both_ends(const std::vector<int64_t>& pads) {
  std::vector<int64_t> out(pads);
  out.insert(out.end(), pads.begin(), pads.end());
  return out;
}

TensorRef parameter(const nnp_module& m, const char* name) {
  const TensorRef* t = m.parameters.find(name);
  return t && *t ? *t : TensorRef{};
}

}  // namespace

std::unique_ptr<OnnxForm> onnx_form_of(const nnp_module& layer) {
  if (!layer.layer_type || !layer.layer_attrs) return nullptr;
  const std::string type = layer.layer_type->name;
  const nnp_attrs& a = *layer.layer_attrs;
  auto form = std::make_unique<OnnxForm>();
  form->attrs = std::make_unique<nnp_attrs>();
  if (type == "nn.Linear") {
    form->op_type = "Gemm";
    set_int(*form->attrs, "transB", 1);
  } else if (type == "nn.Conv1d" || type == "nn.Conv2d" || type == "nn.Conv3d") {
    const size_t d = static_cast<size_t>(type[7] - '0');
    const std::vector<int64_t> kernel = ints_of(a, "kernel_size", d), stride = ints_of(a, "stride", d),
                               padding = ints_of(a, "padding", d), dilation = ints_of(a, "dilation", d);
    const auto mode = a.values.find("padding_mode");
    if (kernel.empty() || stride.empty() || padding.empty() || dilation.empty() ||
        (mode != a.values.end() && mode->second.s != "zeros"))
      return nullptr;
    form->op_type = "Conv";
    set_ints(*form->attrs, "kernel_shape", kernel);
    set_ints(*form->attrs, "strides", stride);
    set_ints(*form->attrs, "pads", both_ends(padding));
    set_ints(*form->attrs, "dilations", dilation);
    set_int(*form->attrs, "group", int_of(a, "groups", 1));
  } else if (type == "nn.MaxPool1d" || type == "nn.MaxPool2d" || type == "nn.MaxPool3d") {
    const size_t d = static_cast<size_t>(type[10] - '0');
    const std::vector<int64_t> kernel = ints_of(a, "kernel_size", d);
    std::vector<int64_t> stride = ints_of(a, "stride", d), padding = ints_of(a, "padding", d),
                         dilation = ints_of(a, "dilation", d);
    if (kernel.empty() || int_of(a, "return_indices", 0) != 0) return nullptr;
    form->op_type = "MaxPool";
    set_ints(*form->attrs, "kernel_shape", kernel);
    set_ints(*form->attrs, "strides", stride.empty() ? kernel : stride);
    set_ints(*form->attrs, "pads", both_ends(padding.empty() ? std::vector<int64_t>(d, 0) : padding));
    set_ints(*form->attrs, "dilations", dilation.empty() ? std::vector<int64_t>(d, 1) : dilation);
    set_int(*form->attrs, "ceil_mode", int_of(a, "ceil_mode", 0));
    return form;
  } else {
    return nullptr;
  }
  form->weights.push_back(parameter(layer, "weight"));
  if (!form->weights.back()) return nullptr;
  if (TensorRef bias = parameter(layer, "bias")) form->weights.push_back(std::move(bias));
  return form;
}

}  // namespace nnp::core::graph
