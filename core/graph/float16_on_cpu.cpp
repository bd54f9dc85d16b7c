#include "float16_on_cpu.hpp"

#include <algorithm>
#include <memory>
#include <unordered_set>

#include "../autograd/grad_mode.hpp"
#include "../device.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../nn/module_ref.hpp"
#include "../ops.hpp"

namespace nnp::core::graph {

namespace {

constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10;

bool on_cpu_f16(const TensorRef& t) {
  static const nnp_device cpu = parse_device("cpu");
  return t && t->dtype == NNP_F16 && t->device.backend == cpu.backend;
}

int64_t cast_target(const onnx::GraphNode& n) {
  if (n.kind != onnx::GraphNodeKind::kOp || n.op_type != "Cast" || !n.attrs) return -1;
  const auto to = n.attrs->values.find("to");
  return to == n.attrs->values.end() ? -1 : to->second.i;
}

// A layer the registry made, with no children, called plainly, whose
// tensors are all on the cpu and some f16.
bool f16_layer(const onnx::GraphNode& n) {
  if (n.kind != onnx::GraphNodeKind::kLayer || !n.layer) return false;
  const nnp_module& m = *n.layer;
  if (!m.layer_type || !m.layer_attrs || !m.children.empty() || !nn::calls_plainly(m)) return false;
  bool any = false;
  for (const auto* entries : {&m.parameters, &m.buffers})
    for (const auto& [name, t] : *entries) {
      if (!t) continue;
      if (t->dtype == NNP_F16 && !on_cpu_f16(t)) return false;
      any |= on_cpu_f16(t);
    }
  return any;
}

TensorRef as_f32(const TensorRef& t) { return core::to(*t, t->device, NNP_F32); }

}  // namespace

Float16OnCpu run_float16_in_f32(const std::vector<const onnx::GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                                const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                                std::vector<std::pair<int32_t, TensorRef>>& folded) {
  Float16OnCpu out;
  out.program.nodes = nodes;
  // Every output written by a Cast to f32: the model's edges are f32.
  std::unordered_set<int32_t> cast_outputs, graph_outputs(outputs.begin(), outputs.end());
  for (const onnx::GraphNode* n : nodes)
    if (cast_target(*n) == kOnnxFloat && n->outputs.size() == 1) cast_outputs.insert(n->outputs[0]);
  const bool f32_edges = !outputs.empty() && std::all_of(outputs.begin(), outputs.end(),
                                                         [&](int32_t s) { return cast_outputs.count(s) > 0; });
  const bool any_half =
      std::any_of(module_tensors.begin(), module_tensors.end(), [](const auto& e) { return on_cpu_f16(e.second); }) ||
      std::any_of(folded.begin(), folded.end(), [](const auto& e) { return on_cpu_f16(e.second); }) ||
      std::any_of(nodes.begin(), nodes.end(), [](const onnx::GraphNode* n) { return f16_layer(*n); });
  if (!f32_edges || !any_half) return out;

  autograd::NoGradGuard no_grad;
  std::unordered_set<int32_t> folded_slots;
  for (auto& [slot, t] : folded) {
    folded_slots.insert(slot);
    if (on_cpu_f16(t)) t = as_f32(t);
  }
  for (const auto& [slot, t] : module_tensors)
    if (on_cpu_f16(t) && !folded_slots.count(slot)) {
      out.constants.emplace_back(slot, as_f32(t));
      out.copied_slots.push_back(slot);
    }
  out.program.nodes.clear();
  for (const onnx::GraphNode* n : nodes) {
    auto remade = std::make_unique<onnx::GraphNode>();
    if (cast_target(*n) == kOnnxFloat16 && !(n->outputs.size() == 1 && graph_outputs.count(n->outputs[0]))) {
      remade->kind = n->kind;
      remade->op = n->op;
      remade->op_type = n->op_type;
      remade->attrs = std::make_unique<nnp_attrs>(*n->attrs);
      remade->attrs->values["to"].i = kOnnxFloat;
    } else if (f16_layer(*n)) {
      const nnp_module& m = *n->layer;
      ModuleRef copy = nn::LayerRegistry::instance().create(m.layer_type->name, m.layer_attrs.get());
      std::vector<const Tensor*> copied;
      bool whole = true;  // false: a tensor the fresh layer lacks or shapes otherwise (left as written)
      for (const auto* entries : {&m.parameters, &m.buffers})
        for (const auto& [name, t] : *entries) {
          if (!t || !whole) continue;
          const TensorRef* target = (entries == &m.parameters ? copy->parameters : copy->buffers).find(name);
          if (!target || !*target || (*target)->shape != t->shape ||
              (*target)->dtype != (t->dtype == NNP_F16 ? NNP_F32 : t->dtype)) {
            whole = false;
            continue;
          }
          copy_into(**target, t->dtype == NNP_F16 ? *as_f32(t) : *t);
          copied.push_back(t.get());
        }
      if (!whole) {
        out.program.nodes.push_back(n);
        continue;
      }
      copy->training = m.training;
      out.sources.insert(out.sources.end(), copied.begin(), copied.end());
      remade->kind = n->kind;
      remade->op_type = n->op_type;
      remade->layer = std::move(copy);
    } else {
      out.program.nodes.push_back(n);
      continue;
    }
    remade->inputs = n->inputs;
    remade->outputs = n->outputs;
    out.program.nodes.push_back(remade.get());
    out.program.made.push_back(std::move(remade));
    ++out.program.fused;
  }
  return out;
}

}  // namespace nnp::core::graph
