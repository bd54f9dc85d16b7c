// Adapters: ONNX export and import, the graph a layer's to_onnx writes, and
// the ops imported graphs run.
#include "../graph/compiled_module.hpp"
#include "../nn/layer_registry.hpp"
#include "../onnx/graph_ops.hpp"
#include "../onnx/lowering.hpp"
#include "../onnx/onnx_export.hpp"
#include "../onnx/onnx_graph.hpp"
#include "../onnx/onnx_import.hpp"
#include "../plugin_registry.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

namespace {
nnp_onnx_graph& graph_arg(nnp_onnx_graph* g, const char* op) { return in_arg(g, op, "graph"); }
std::vector<std::string> names_arg(const char* const* names, int32_t n, const char* op, const char* what) {
  if (n < 0 || (n > 0 && !names)) fail(NNP_INVALID_ARGUMENT, op, ": ", what, " has count ", n, " but no array");
  std::vector<std::string> out;
  for (int32_t i = 0; i < n; ++i) out.push_back(string_arg(names[i], op, what));
  return out;
}
}  // namespace

nnp_status onnx_export(nnp_module* module, const nnp_tensor* const* inputs, int32_t n_inputs, const char* path,
                       const nnp_onnx_export_options* options) {
  const char* op = "onnx_export";
  return guard([&] {
    nn::Module& m = module_arg(module, op);
    if (n_inputs < 0 || (n_inputs > 0 && !inputs))
      fail(NNP_INVALID_ARGUMENT, op, ": inputs has count ", n_inputs, " but no array");
    std::vector<TensorRef> examples;
    for (int32_t i = 0; i < n_inputs; ++i) examples.push_back(TensorRef::share(&tensor_arg(inputs[i], op, "inputs")));
    onnx::ExportOptions o;
    if (options) {
      if (options->struct_size < NNP_ONNX_EXPORT_OPTIONS_SIZE_1_8)
        fail(NNP_INVALID_ARGUMENT, op, ": options struct_size ", options->struct_size,
             " is too small (set it to sizeof(nnp_onnx_export_options))");
      if (options->opset != 0) o.opset = options->opset;
      o.fixed_batch = options->fixed_batch != 0;
      if (options->input_names) o.input_names = names_arg(options->input_names, n_inputs, op, "input_names");
      o.output_names =
          names_arg(options->output_names, options->output_names ? options->n_output_names : 0, op, "output_names");
    }
    onnx::export_model(m, examples, path_arg(path, op), o);
  });
}

nnp_status onnx_graph_add_node(nnp_onnx_graph* graph, const char* op_type, const char* domain,
                               const char* const* inputs, int32_t n_inputs, const char* const* outputs,
                               int32_t n_outputs, const nnp_attrs* attributes) {
  const char* op = "onnx_graph_add_node";
  return guard([&] {
    nnp_onnx_graph& g = graph_arg(graph, op);
    const std::string type = text_arg(op_type, op, "op_type");
    std::vector<std::string> in = names_arg(inputs, n_inputs, op, "inputs");
    std::vector<std::string> out = names_arg(outputs, n_outputs, op, "outputs");
    if (out.empty()) fail(NNP_INVALID_ARGUMENT, op, ": ", type, " needs at least one output");
    for (const std::string& name : in)  // "" is ONNX's omitted optional input
      if (!name.empty() && !g.has_name(name))
        fail(NNP_NOT_FOUND, op, ": ", type, " reads '", name,
             "', which no node, input or initialiser of the graph has written yet");
    ::onnx::NodeProto& node = g.node(type, in, out, domain ? domain : "");
    if (attributes) onnx::add_attributes(node, *attributes);
  });
}

nnp_status onnx_graph_add_constant(nnp_onnx_graph* graph, const nnp_tensor* value, const char* name_hint,
                                   const char** name) {
  const char* op = "onnx_graph_add_constant";
  return guard([&] {
    const char*& result = out_arg(name, op, "name");
    nnp_onnx_graph& g = graph_arg(graph, op);
    const std::string& made = *g.keep_name(g.constant(tensor_arg(value, op, "value"), name_hint ? name_hint : "const"));
    result = made.c_str();
  });
}

nnp_status onnx_graph_tensor_name(nnp_onnx_graph* graph, nnp_module* module, const char* tensor, const char** name) {
  const char* op = "onnx_graph_tensor_name";
  return guard([&] {
    const char*& result = out_arg(name, op, "name");
    nnp_onnx_graph& g = graph_arg(graph, op);
    TensorRef t = nn::get_tensor(module_arg(module, op), text_arg(tensor, op, "tensor"));
    result = g.keep_name(g.name(*t))->c_str();
  });
}

nnp_status onnx_graph_new_name(nnp_onnx_graph* graph, const char* hint, const char** name) {
  const char* op = "onnx_graph_new_name";
  return guard([&] {
    const char*& result = out_arg(name, op, "name");
    nnp_onnx_graph& g = graph_arg(graph, op);
    result = g.keep_name(g.fresh(hint && *hint ? hint : "v"))->c_str();
  });
}

int64_t onnx_graph_opset(const nnp_onnx_graph* graph) { return graph ? graph->opset : 0; }

nnp_status module_compile(nnp_module* module, const nnp_tensor* const* example_inputs, int32_t n_inputs,
                          const nnp_compile_options* options, nnp_module** out) {
  const char* op = "module_compile";
  return handle_out(out, op, [&] {
    nn::Module& m = in_arg(module, op, "module");
    if (n_inputs < 1) fail(NNP_INVALID_ARGUMENT, op, ": give at least one example input (n_inputs is ", n_inputs, ")");
    in_arg(example_inputs, op, "example_inputs");
    std::vector<TensorRef> examples;
    for (int32_t i = 0; i < n_inputs; ++i)
      examples.push_back(TensorRef::share(&tensor_arg(example_inputs[i], op, "example_inputs")));
    graph::CompileOptions o;
    if (options) {
      if (options->struct_size < NNP_COMPILE_OPTIONS_SIZE_1_19)
        fail(NNP_INVALID_ARGUMENT, op, ": options struct_size ", options->struct_size,
             " is too small (set it to sizeof(nnp_compile_options))");
      o.dynamic_batch = options->fixed_batch == 0;
      if (options->struct_size >= NNP_COMPILE_OPTIONS_SIZE_1_24 && options->fallback)
        o.fallback = parse_device(options->fallback);
    }
    return graph::compile(m, examples, o);
  });
}

nnp_status module_compile_explain(const nnp_module* compiled, char* buf, size_t size, size_t* needed) {
  return guard([&] {
    detail::write_string(graph::explain(in_arg(compiled, "module_compile_explain", "compiled")), buf, size, needed);
  });
}

nnp_status onnx_load(const char* path, nnp_module** out) {
  return handle_out(out, "onnx_load", [&] { return onnx::import_model(path_arg(path, "onnx_load")); });
}

nnp_status register_graph_op(nnp_plugin_host* host, const nnp_graph_op* op) {
  return PluginRegistry::register_graph_op(host, op);
}
int32_t graph_op_count() {
  int32_t count = 0;
  guard([&] {
    PluginRegistry::instance().discover();  // plugins' ops count too
    count = onnx::graph_ops().count();
  });
  return count;
}
nnp_status graph_op_info(int32_t i, nnp_graph_op* out) {
  return guard([&] {
    info_arg(out, "graph_op_info");
    PluginRegistry::instance().discover();
    write_info(out, onnx::graph_ops().at(i).c_op);
  });
}

}  // namespace nnp::core::api
