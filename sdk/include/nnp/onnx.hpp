// nnp/onnx.hpp - ONNX export (ABI 1.8), as torch.onnx.export: the module is
// traced on example inputs (in eval mode, without gradients) and written as
// an ONNX model that passes onnx::checker with full checking.
//
//   nnp::onnx::export_model(model, {nnp::randn({3, 1, 28, 28})}, "model.onnx");
//
// Parameters and buffers become initialisers named by their state-dict keys;
// Linear, Conv, pooling, BatchNorm (eval), LayerNorm and Flatten become
// their ONNX nodes; everything else the ops it ran. Axis 0 of the inputs is
// a symbolic "batch" unless ExportOptions::fixed_batch: trace with a batch
// size other than 1, so the exporter can tell the batch from other sizes.
//
// A plugin layer writes its own nodes with a to_onnx function in its
// nnp_layer_type (Graph wraps the graph it receives); without one, it is
// exported as a node in its vendor's domain ("acme.Swish": op Swish in
// domain acme) carrying its attributes and tensors.
#pragma once

#include <nnp/nn.hpp>
#include <string>
#include <vector>

namespace nnp::onnx {

struct ExportOptions {
  int64_t opset = 17;  // 13 to 17
  bool fixed_batch = false;
  std::vector<std::string> input_names;   // default "input", "input1", ...
  std::vector<std::string> output_names;  // default "output", "output1", ...
};

inline void export_model(const nn::ModuleHandle& module, const std::vector<Tensor>& example_inputs,
                         const std::string& path, const ExportOptions& options = {}) {
  std::vector<const nnp_tensor*> inputs;
  for (const Tensor& t : example_inputs) inputs.push_back(t.get());
  std::vector<const char*> in_names, out_names;
  for (const std::string& n : options.input_names) in_names.push_back(n.c_str());
  for (const std::string& n : options.output_names) out_names.push_back(n.c_str());
  if (!in_names.empty() && in_names.size() != inputs.size())
    throw Error(NNP_INVALID_ARGUMENT, "onnx export: " + std::to_string(in_names.size()) + " input names for " +
                                          std::to_string(inputs.size()) + " inputs");
  nnp_onnx_export_options o{};
  o.struct_size = sizeof(o);
  o.opset = options.opset;
  o.fixed_batch = options.fixed_batch ? 1 : 0;
  o.input_names = in_names.empty() ? nullptr : in_names.data();
  o.output_names = out_names.empty() ? nullptr : out_names.data();
  o.n_output_names = static_cast<int32_t>(out_names.size());
  check(api().onnx_export(module.get(), inputs.data(), static_cast<int32_t>(inputs.size()), path.c_str(), &o));
}

inline void export_model(const nn::ModuleHandle& module, const std::vector<Tensor>& example_inputs,
                         const std::string& path, int64_t opset) {
  ExportOptions options;
  options.opset = opset;
  export_model(module, example_inputs, path, options);
}

// torch.onnx's counterpart in reverse: an ONNX file as a trainable module
// (an nn.GraphModule of built-in layers, plugin layers and ops).
inline nn::ModuleHandle load(const std::string& path) {
  nnp_module* m = nullptr;
  check(api().onnx_load(path.c_str(), &m));
  return nn::ModuleHandle::adopt(m);
}

// The graph a layer type's to_onnx receives (valid during that call).
class Graph {
 public:
  explicit Graph(nnp_onnx_graph* graph) : graph_(graph) {}
  // Appends a node; domain "" is ONNX's own. attributes: ints, floats,
  // strings, bools (as ints) and lists.
  void add_node(const std::string& op_type, const std::vector<std::string>& inputs,
                const std::vector<std::string>& outputs, const nn::Attrs* attributes = nullptr,
                const std::string& domain = "") {
    std::vector<const char*> in, out;
    for (const std::string& n : inputs) in.push_back(n.c_str());
    for (const std::string& n : outputs) out.push_back(n.c_str());
    check(api().onnx_graph_add_node(graph_, op_type.c_str(), domain.c_str(), in.data(), static_cast<int32_t>(in.size()),
                                    out.data(), static_cast<int32_t>(out.size()),
                                    attributes ? attributes->get() : nullptr));
  }
  // An initialiser holding value's contents now.
  std::string constant(const Tensor& value, const std::string& hint = "const") {
    const char* name = nullptr;
    check(api().onnx_graph_add_constant(graph_, value.get(), hint.c_str(), &name));
    return name;
  }
  // The initialiser of module's parameter or buffer `tensor`.
  std::string tensor_name(nnp_module* module, const std::string& tensor) {
    const char* name = nullptr;
    check(api().onnx_graph_tensor_name(graph_, module, tensor.c_str(), &name));
    return name;
  }
  std::string new_name(const std::string& hint) {
    const char* name = nullptr;
    check(api().onnx_graph_new_name(graph_, hint.c_str(), &name));
    return name;
  }
  int64_t opset() const { return api().onnx_graph_opset(graph_); }

 private:
  nnp_onnx_graph* graph_;
};

}  // namespace nnp::onnx
