#include "onnx_export.hpp"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "../autograd/grad_mode.hpp"
#include "../error.hpp"
#include "../nn/module_call.hpp"
#include "../nn/named_list.hpp"
#include "batch_check.hpp"
#include "eval_mode_scope.hpp"
#include "onnx_graph.hpp"
#include "trace.hpp"

namespace nnp::core::onnx {

namespace {

constexpr int64_t kMinOpset = 13, kMaxOpset = 17;

// batch_axis: the dimension written as "batch" (one whose size is the batch
// times more is left unnamed), or -1.
void set_value_info(::onnx::ValueInfoProto& info, const std::string& name, const Tensor& t, int32_t batch_axis,
                    int64_t batch, bool exact = true) {
  info.set_name(name);
  ::onnx::TypeProto_Tensor& type = *info.mutable_type()->mutable_tensor_type();
  type.set_elem_type(onnx_elem_type(t.dtype));
  ::onnx::TensorShapeProto& shape = *type.mutable_shape();
  for (int32_t i = 0; i < t.shape.ndim; ++i) {
    ::onnx::TensorShapeProto_Dimension& d = *shape.add_dim();
    if (i == batch_axis && t.shape[i] == batch && exact)
      d.set_dim_param("batch");
    else if (i == batch_axis)
      continue;
    else
      d.set_dim_value(t.shape[i]);
  }
}

std::string numbered(const std::vector<std::string>& given, size_t i, const char* base) {
  if (i < given.size()) return given[i];
  return i == 0 ? base : base + std::to_string(i);
}

void write_atomically(const std::string& bytes, const std::string& path) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) fail(NNP_IO_ERROR, "onnx export: cannot create ", temporary, " (", std::strerror(errno), ")");
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok = std::fflush(file) == 0 && ok;
  ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    fail(NNP_IO_ERROR, "onnx export: writing ", path, " failed (", reason, "); any previous file is unchanged");
  }
}

// The module traced into a checked model (doc_string says why when the
// batch had to be fixed).
::onnx::ModelProto trace_model(nn::Module& module, const std::vector<TensorRef>& inputs, const std::string& path,
                               const ExportOptions& options) {
  if (options.opset < kMinOpset || options.opset > kMaxOpset)
    fail(NNP_INVALID_ARGUMENT, "onnx export: opset ", options.opset, " is not written; use ", kMinOpset, " to ",
         kMaxOpset);
  if (inputs.empty()) fail(NNP_INVALID_ARGUMENT, "onnx export: give at least one example input");
  for (const std::vector<std::string>* names : {&options.input_names, &options.output_names})
    for (const std::string& n : *names)
      if (n.empty()) fail(NNP_INVALID_ARGUMENT, "onnx export: input and output names cannot be empty");

  ::onnx::ModelProto model;
  model.set_ir_version(8);  // what opset 17 goes with
  model.set_producer_name("nnplug");
  model.set_producer_version(NNP_VERSION_STRING);
  ::onnx::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(options.opset);
  ::onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name(module.type_name);

  nnp_onnx_graph g;
  g.graph = &graph;
  g.opset = options.opset;
  const bool dynamic = !options.fixed_batch && inputs[0]->shape.ndim > 0;
  g.batch = dynamic ? inputs[0]->shape[0] : -1;
  nnp_list state;
  nn::named_parameters(module, "", true, true, state);
  nn::named_buffers(module, "", true, true, state);
  // The module's tensor names are taken first: a name made up for a traced
  // constant ("shape_1") must not be one of theirs (an imported ONNX file's
  // GraphModule keeps its initializers' names).
  for (const nnp_list::Entry& e : state.entries)
    if (e.tensor && g.state.emplace(e.tensor.get(), e.name).second) g.fresh(e.name);

  // Output names are held back so no intermediate value takes them.
  for (const std::string& n : options.output_names) g.fresh(n);
  for (int i = 0; i < 16; ++i) g.fresh(numbered({}, static_cast<size_t>(i), "output"));
  std::vector<std::string> input_names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (g.values.count(&t)) fail(NNP_INVALID_ARGUMENT, "onnx export: example input ", i, " is given twice");
    std::string name = numbered(options.input_names, i, "input");
    if (g.fresh(name) != name) fail(NNP_INVALID_ARGUMENT, "onnx export: input name '", name, "' is given twice");
    const bool batched = dynamic && t.shape.ndim > 0 && t.shape[0] == g.batch;
    g.bind(t, name, batched ? 0 : -1);
    input_names.push_back(name);
  }

  nnp_list outputs;
  {
    EvalModeScope eval(module);
    autograd::NoGradGuard no_grad;
    TraceSession session(g);
    nnp_list args;
    for (const TensorRef& t : inputs) args.add("", t);
    outputs = nn::call_values(module, std::move(args));
  }
  std::vector<TensorRef> results;
  for (const nnp_list::Entry& e : outputs.entries)
    if (e.tensor) results.push_back(e.tensor);
  if (results.empty()) fail(NNP_INVALID_ARGUMENT, "onnx export: ", module.type_name, "'s forward returned no tensor");

  const bool symbolic = dynamic && g.batch_lost.empty();
  for (size_t i = 0; i < inputs.size(); ++i)
    set_value_info(*graph.add_input(), input_names[i], *inputs[i], symbolic ? g.values[inputs[i].get()].batch_axis : -1,
                   g.batch);
  std::set<std::string> taken(input_names.begin(), input_names.end());
  for (size_t i = 0; i < results.size(); ++i) {
    TracedValue v = g.value(*results[i]);
    std::string name = numbered(options.output_names, i, "output");
    if (taken.count(name)) fail(NNP_INVALID_ARGUMENT, "onnx export: output name '", name, "' is taken");
    taken.insert(name);
    g.node("Identity", {v.name}, {name});
    set_value_info(*graph.add_output(), name, *results[i], symbolic ? v.batch_axis : -1, g.batch, v.batch_lead == 1);
  }
  if (dynamic && !symbolic) model.set_doc_string("batch fixed at " + std::to_string(g.batch) + ": " + g.batch_lost);
  for (const std::string& domain : g.custom_domains) {
    ::onnx::OperatorSetIdProto& custom = *model.add_opset_import();
    custom.set_domain(domain);
    custom.set_version(1);
  }

  // Full checking, as onnx.checker.check_model(full_check=True): a failure
  // here is the exporter's bug, so nothing is written.
  try {
    ::onnx::checker::check_model(model);
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    fail(NNP_INTERNAL, "onnx export: the graph fails onnx::checker (", e.what(), "); nothing was written to ", path);
  }
  graph.clear_value_info();  // shape inference's additions: keep the file what we wrote
  return model;
}

std::string serialize(const ::onnx::ModelProto& model) {
  std::string bytes;
  if (model.ByteSizeLong() > static_cast<size_t>(INT32_MAX) || !model.SerializeToString(&bytes))
    fail(NNP_INVALID_ARGUMENT, "onnx export: the model is over protobuf's 2 GB limit; nothing was written");
  return bytes;
}

}  // namespace

bool export_model(nn::Module& module, const std::vector<TensorRef>& inputs, const std::string& path,
                  const ExportOptions& options) {
  ::onnx::ModelProto model = trace_model(module, inputs, path, options);
  std::string bytes = serialize(model);
  bool symbolic = !options.fixed_batch && model.doc_string().empty() && inputs[0]->shape.ndim > 0;
  if (!symbolic) {
    write_atomically(bytes, path);
    return false;
  }
  // A symbolic batch is a claim about values the trace could not see (an
  // index built for this batch, a divisor that is its size): the written
  // graph, run by the importer at one more row, must give the module's own
  // outputs there, or the file is written with the batch fixed instead.
  // The draft becomes the file where it passes; the model and its bytes go
  // before the check imports it (two copies of the weights fewer at the
  // peak).
  const std::string draft = path + ".batch-check-" + std::to_string(::getpid());
  write_atomically(bytes, draft);
  ::onnx::ModelProto().Swap(&model);
  std::string().swap(bytes);
  std::string why;
  try {
    why = batch_generic_failure(module, inputs, draft);
  } catch (...) {
    std::remove(draft.c_str());
    throw;
  }
  if (why.empty()) {
    if (std::rename(draft.c_str(), path.c_str()) != 0) {
      const std::string reason = std::strerror(errno);
      std::remove(draft.c_str());
      fail(NNP_IO_ERROR, "onnx export: writing ", path, " failed (", reason, "); any previous file is unchanged");
    }
    return true;
  }
  std::remove(draft.c_str());
  ExportOptions fixed = options;
  fixed.fixed_batch = true;
  model = trace_model(module, inputs, path, fixed);
  model.set_doc_string("batch fixed at " + std::to_string(inputs[0]->shape[0]) + ": " + why);
  write_atomically(serialize(model), path);
  return false;
}

}  // namespace nnp::core::onnx
