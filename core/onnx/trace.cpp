#include "trace.hpp"

#include <tuple>

#include "../error.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/named_list.hpp"
#include "lowering.hpp"

namespace nnp::core::onnx {

std::atomic<int32_t> g_traces{0};

namespace {

struct ThreadTrace {
  nnp_onnx_graph* graph = nullptr;
  int32_t depth = 0;  // ops and lowered modules entered and not yet left
};
thread_local ThreadTrace t_trace;

enum class LoweringKind { NONE, PLUGIN, BUILTIN, VENDOR_NODE };

LoweringKind lowering_of(const nnp_module& m, const LayerCall& call, const nnp_onnx_graph& g) {
  const nn::LayerType* type = m.layer_type;
  if (!type || !m.layer_attrs) return LoweringKind::NONE;
  if (type->to_onnx) return LoweringKind::PLUGIN;
  if (const BuiltinLowering* b = find_builtin_lowering(type->name))
    return b->applies(call, g) ? LoweringKind::BUILTIN : LoweringKind::NONE;
  return type->plugin == "core" && !builtin_custom_node(type->name) ? LoweringKind::NONE : LoweringKind::VENDOR_NODE;
}

std::vector<TensorRef> tensors_of(const nnp_list& list) {
  std::vector<TensorRef> out;
  for (const nnp_list::Entry& e : list.entries)
    if (e.tensor) out.push_back(e.tensor);
  return out;
}

}  // namespace

TraceSession::TraceSession(nnp_onnx_graph& graph) {
  if (t_trace.graph) fail(NNP_INVALID_ARGUMENT, "onnx export: an export is already running on this thread");
  t_trace = ThreadTrace{&graph, 0};
  g_traces.fetch_add(1, std::memory_order_relaxed);
}

TraceSession::~TraceSession() {
  t_trace = ThreadTrace{};
  g_traces.fetch_sub(1, std::memory_order_relaxed);
}

int64_t traced_opset() { return t_trace.graph ? t_trace.graph->opset : 0; }

nnp_onnx_graph* enter_op() {
  if (!t_trace.graph) return nullptr;
  return t_trace.depth++ == 0 ? t_trace.graph : nullptr;
}

void leave_op() {
  if (t_trace.graph) --t_trace.depth;
}

void ModuleScope::enter(nnp_module& m, const nnp_list& args) {
  if (!t_trace.graph || t_trace.depth != 0 || !m.layer_type || !m.layer_attrs) return;
  LayerCall call{m, *m.layer_attrs, tensors_of(args), {}, {}, {}};
  kind_ = static_cast<int>(lowering_of(m, call, *t_trace.graph));
  if (kind_ == static_cast<int>(LoweringKind::NONE)) return;
  graph_ = t_trace.graph;
  module_ = &m;
  inputs_ = std::move(call.inputs);
  ++t_trace.depth;
}

ModuleScope::~ModuleScope() {
  if (graph_ && !done_) --t_trace.depth;
}

void ModuleScope::finish(const nnp_list& outputs) {
  if (!graph_ || done_) return;
  done_ = true;
  --t_trace.depth;
  nnp_onnx_graph& g = *graph_;
  nnp_module& m = *module_;
  LayerCall call{m, *m.layer_attrs, inputs_, tensors_of(outputs), {}, {}};
  int32_t batch_axis = -1;
  int64_t batch_lead = 1;
  for (const TensorRef& t : call.inputs) {
    TracedValue v = g.value(*t);
    call.input_names.push_back(v.name);
    if (batch_axis < 0) std::tie(batch_axis, batch_lead) = std::make_pair(v.batch_axis, v.batch_lead);
  }
  std::string hint = m.layer_type->name.substr(m.layer_type->name.rfind('.') + 1);
  for (size_t i = 0; i < call.outputs.size(); ++i) call.output_names.push_back(g.fresh(hint));

  LoweringKind kind = static_cast<LoweringKind>(kind_);
  if (kind == LoweringKind::PLUGIN) {
    std::vector<const char*> in, out;
    for (const std::string& n : call.input_names) in.push_back(n.c_str());
    for (const std::string& n : call.output_names) out.push_back(n.c_str());
    const uint64_t since = last_error_serial();
    nnp_status status = m.layer_type->to_onnx(&g, &m, m.layer_attrs.get(), in.data(), static_cast<int32_t>(in.size()),
                                              out.data(), static_cast<int32_t>(out.size()), m.layer_type->user_data);
    if (status == NNP_UNIMPLEMENTED)
      kind = LoweringKind::VENDOR_NODE;
    else
      check_plugin_status(status, m.layer_type->name.c_str(), "to_onnx", since);
  }
  if (kind == LoweringKind::BUILTIN) find_builtin_lowering(m.layer_type->name)->write(g, call);
  if (kind == LoweringKind::VENDOR_NODE) write_vendor_node(g, call);

  for (size_t i = 0; i < call.outputs.size(); ++i) {
    const Tensor& out = *call.outputs[i];
    const bool keeps_batch =
        batch_axis >= 0 && batch_axis < out.shape.ndim && out.shape[batch_axis] == call.inputs[0]->shape[batch_axis];
    g.bind(out, call.output_names[i], keeps_batch ? batch_axis : -1, batch_lead);
  }
}

}  // namespace nnp::core::onnx
