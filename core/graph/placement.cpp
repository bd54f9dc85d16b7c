#include "placement.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "../autograd/grad_mode.hpp"
#include "../device.hpp"
#include "../error.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../ops.hpp"
#include "../profiler/profiler.hpp"
#include "layer_onnx_form.hpp"
#include "readers.hpp"

namespace nnp::core::graph {
namespace {

using onnx::GraphNode;
using onnx::GraphNodeKind;
using onnx::GraphValue;

const Tensor* tensor_in(const std::vector<GraphValue>& values, int32_t slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= values.size()) return nullptr;
  const GraphValue& v = values[static_cast<size_t>(slot)];
  return v.sequence ? nullptr : v.tensor.get();
}

// A node as a backend is offered it: an op node as it is, a layer node as
// the ONNX node it stands for with its weights as further inputs (in slots
// of their own), or neither.
struct Offered {
  std::string op_type;
  const nnp_attrs* attrs = nullptr;
  std::vector<int32_t> inputs, outputs;
  std::unique_ptr<OnnxForm> form;  // a layer's
};

// Every input and output the call computed as a tensor.
bool all_tensors(const Offered& o, const std::vector<GraphValue>& values) {
  for (int32_t s : o.inputs)
    if (s >= 0 && !tensor_in(values, s)) return false;
  for (int32_t s : o.outputs)
    if (s >= 0 && !tensor_in(values, s)) return false;
  return true;
}

// The plan's nodes as an nnp_graph, and what its pointers point to.
class Description {
 public:
  // offered: per plan node, what it is offered as (null: not offered).
  Description(const std::vector<std::unique_ptr<Offered>>& offered, int32_t slots,
              const std::vector<GraphValue>& values, const std::unordered_map<int32_t, const Tensor*>& constants)
      : shapes_(static_cast<size_t>(slots)), values_(static_cast<size_t>(slots)) {
    const nnp_device cpu = parse_device("cpu");
    for (int32_t s = 0; s < slots; ++s) {
      nnp_graph_value& v = values_[static_cast<size_t>(s)];
      v.struct_size = sizeof v;
      v.name = "";
      const Tensor* t = tensor_in(values, s);
      if (!t) continue;
      v.dtype = t->dtype;
      v.ndim = t->shape.ndim;
      shapes_[static_cast<size_t>(s)].assign(t->shape.d, t->shape.d + t->shape.ndim);
      v.shape = shapes_[static_cast<size_t>(s)].data();
      const auto constant = constants.find(s);
      if (constant == constants.end() || !constant->second) continue;
      host_copies_.push_back(core::contiguous(*core::to(*constant->second, cpu, constant->second->dtype)));
      v.constant = host_copies_.back()->numel > 0 ? host_copies_.back()->data() : nullptr;
    }
    for (size_t i = 0; i < offered.size(); ++i) {
      const Offered* o = offered[i].get();
      if (!o) continue;
      nnp_graph_node d{};
      d.struct_size = sizeof d;
      d.op_type = o->op_type.c_str();
      d.domain = "";
      d.attrs = o->attrs ? o->attrs : &no_attrs_;
      d.inputs = o->inputs.data();
      d.n_inputs = static_cast<int32_t>(o->inputs.size());
      d.outputs = o->outputs.data();
      d.n_outputs = static_cast<int32_t>(o->outputs.size());
      nodes_.push_back(d);
      plan_index_.push_back(i);
    }
  }

  // The whole plan (no inputs or outputs: capability only looks).
  nnp_graph whole() const { return graph_of(nodes_, {}, {}); }
  // A run of described nodes [first, last], reading inputs and writing outputs.
  nnp_graph part(size_t first, size_t last, const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs) {
    part_nodes_.assign(nodes_.begin() + static_cast<std::ptrdiff_t>(first),
                       nodes_.begin() + static_cast<std::ptrdiff_t>(last) + 1);
    return graph_of(part_nodes_, inputs, outputs);
  }
  size_t size() const { return nodes_.size(); }
  size_t plan_index(size_t described) const { return plan_index_[described]; }
  const nnp_graph_value& value(int32_t slot) const { return values_[static_cast<size_t>(slot)]; }

 private:
  nnp_graph graph_of(const std::vector<nnp_graph_node>& nodes, const std::vector<int32_t>& inputs,
                     const std::vector<int32_t>& outputs) const {
    nnp_graph g{};
    g.struct_size = sizeof g;
    g.values = values_.data();
    g.n_values = static_cast<int32_t>(values_.size());
    g.nodes = nodes.data();
    g.n_nodes = static_cast<int32_t>(nodes.size());
    g.inputs = inputs.data();
    g.n_inputs = static_cast<int32_t>(inputs.size());
    g.outputs = outputs.data();
    g.n_outputs = static_cast<int32_t>(outputs.size());
    return g;
  }

  std::vector<std::vector<int64_t>> shapes_;
  std::vector<nnp_graph_value> values_;
  std::vector<TensorRef> host_copies_;
  std::vector<nnp_graph_node> nodes_, part_nodes_;
  std::vector<size_t> plan_index_;  // described node -> plan node
  nnp_attrs no_attrs_;
};

// t on device: itself, or a copy (an NNP_PROFILE_COPY event).
TensorRef moved(const TensorRef& t, nnp_device device, const char* why) {
  if (same_device(t->device, device)) return t;
  const profiler::CopyScope event(
      [&] {
        return str_cat("copy ", device_name(t->device), " -> ", device_name(device), ": ", why, " (",
                       t->numel * static_cast<int64_t>(dtype_size(t->dtype)), " bytes)");
      },
      device_name(t->backend().host_memory() ? device : t->device));  // the device's end, not the host's
  return core::to(*t, device, t->dtype);
}

// A node that copies one value to `device` into another slot (or the same).
std::unique_ptr<GraphNode> copy_node(int32_t from, int32_t to, nnp_device device, std::string why) {
  auto node = std::make_unique<GraphNode>();
  node->kind = GraphNodeKind::kFused;
  node->op_type = "Copy to " + device_name(device);
  node->inputs = {from};
  node->outputs = {to};
  node->fused = [device, why = std::move(why)](const GraphNode& n, std::vector<GraphValue>& values) {
    autograd::NoGradGuard no_grad;
    const TensorRef& t = onnx::tensor_of(values[static_cast<size_t>(n.inputs[0])], n.op_type);
    values[static_cast<size_t>(n.outputs[0])] = GraphValue{moved(t, device, why.c_str()), nullptr};
  };
  return node;
}

// The executable a backend compiled, released with the plan. A refusal
// names the backend and the nodes it claimed (a claim it could not keep).
std::shared_ptr<void> compiled(const PlacementTarget& target, const nnp_graph& part, const std::string& ops) {
  const nnp_backend& table = target.backend->table();
  void* executable = nullptr;
  try {
    check_plugin_status(table.compile(table.state, target.device.index, &part, &executable),
                        target.backend->name().c_str(), "compile");
  } catch (const Error& e) {
    fail(e.status(), "backend '", target.backend->name(), "' claimed ", ops, " but could not compile them: ", e.what());
  }
  if (!executable)
    fail(NNP_INTERNAL, "backend '", target.backend->name(), "' compiled ", ops,
         " but gave no executable (a flaw in its plugin: ", target.backend->plugin_path(), ")");
  const BackendRecord* backend = target.backend;
  const int32_t device = target.device.index;
  return std::shared_ptr<void>(executable, [backend, device](void* e) {
    if (e) backend->table().release(backend->table().state, device, e);
  });
}

// The node that runs a compiled run of nodes: its inputs moved to the
// device, its outputs allocated there as the description shapes them.
std::unique_ptr<GraphNode> compiled_node(const PlacementTarget& target, std::shared_ptr<void> executable,
                                         const std::vector<int32_t>& inputs, const std::vector<int32_t>& outputs,
                                         const Description& d, std::string label) {
  struct Output {
    Dims shape;
    nnp_dtype dtype;
  };
  std::vector<Output> made;
  for (int32_t s : outputs) {
    const nnp_graph_value& v = d.value(s);
    Output o{};
    o.shape.ndim = v.ndim;
    std::copy(v.shape, v.shape + v.ndim, o.shape.d);
    o.dtype = v.dtype;
    made.push_back(o);
  }
  auto node = std::make_unique<GraphNode>();
  node->kind = GraphNodeKind::kFused;
  node->op_type = label;
  node->inputs = inputs;
  node->outputs = outputs;
  node->fused = [target, executable = std::move(executable), made = std::move(made)](const GraphNode& n,
                                                                                     std::vector<GraphValue>& values) {
    const profiler::Scope event(NNP_PROFILE_OP, n.op_type.c_str());
    autograd::NoGradGuard no_grad;
    std::vector<TensorRef> given, results;
    std::vector<nnp_view> in, out;
    for (int32_t s : n.inputs) {
      given.push_back(core::contiguous(
          *moved(onnx::tensor_of(values[static_cast<size_t>(s)], n.op_type), target.device, n.op_type.c_str())));
      in.push_back(kernel_view(*given.back()));
    }
    for (const Output& o : made) {
      results.push_back(make_tensor(o.shape, o.dtype, target.device));
      out.push_back(kernel_view(*results.back()));
    }
    const nnp_backend& table = target.backend->table();
    check_plugin_status(table.execute(table.state, target.device.index, executable.get(), in.data(),
                                      static_cast<int32_t>(in.size()), out.data(), static_cast<int32_t>(out.size())),
                        target.backend->name().c_str(), "execute");
    for (size_t i = 0; i < results.size(); ++i)
      values[static_cast<size_t>(n.outputs[i])] = GraphValue{std::move(results[i]), nullptr};
  };
  return node;
}

// A layer made again on `device` from its type and attributes, holding
// copies of its parameters and buffers; null where that would not be the
// same layer (not made by the registry, or with children of its own).
ModuleRef layer_copy_on(const nnp_module& layer, nnp_device device) {
  if (!layer.layer_type || !layer.layer_attrs || !layer.children.empty()) return {};
  ModuleRef copy = nn::LayerRegistry::instance().create(layer.layer_type->name, layer.layer_attrs.get());
  nn::to(*copy, &device, -1);
  autograd::NoGradGuard no_grad;
  // Written into the copy's own tensors, which its forward may hold on to.
  auto fill = [](const auto& from, auto& into) {
    for (const auto& [name, t] : from) {
      const TensorRef* mine = into.find(name);
      if (!t || !mine || !*mine || (*mine)->shape != t->shape || (*mine)->dtype != t->dtype) return false;
      core::copy_into(const_cast<Tensor&>(**mine), *t);
    }
    return true;
  };
  if (!fill(layer.parameters, copy->parameters) || !fill(layer.buffers, copy->buffers)) return {};
  nn::train(*copy, layer.training);
  return copy;
}

// n with some inputs read from other slots (copies on the fallback), and
// its layer (if given) in place of its own.
std::unique_ptr<GraphNode> remade_reading(const GraphNode& n, const std::map<size_t, int32_t>& inputs,
                                          ModuleRef layer = {}) {
  auto remade = std::make_unique<GraphNode>();
  remade->kind = n.kind;
  remade->op = n.op;
  remade->op_type = n.op_type;
  remade->layer = layer ? layer : n.layer;
  if (n.attrs) remade->attrs = std::make_unique<nnp_attrs>(*n.attrs);
  remade->inputs = n.inputs;
  for (const auto& [i, slot] : inputs) remade->inputs[i] = slot;
  remade->outputs = n.outputs;
  remade->host_copies = n.host_copies;
  return remade;
}

}  // namespace

PlacementTarget placement_target(const std::vector<onnx::GraphValue>& values) {
  for (const GraphValue& v : values)
    if (v.tensor && v.tensor->storage && v.tensor->backend().compiles_graphs())
      return {&v.tensor->backend(), v.tensor->device};
  return {};
}

Placement place_on_backend(const std::vector<const GraphNode*>& nodes, const std::vector<int32_t>& outputs,
                           int32_t program_slots, const PlacementTarget& target,
                           const std::vector<GraphValue>& computed_values,
                           const std::vector<std::pair<int32_t, TensorRef>>& module_tensors,
                           const std::vector<std::pair<int32_t, TensorRef>>& folded) {
  Placement out;
  // What each node is offered as; a layer's weights get slots of their own
  // (plan constants: the layer's own tensors, where they lie).
  std::vector<GraphValue> values = computed_values;
  values.resize(static_cast<size_t>(program_slots));
  std::unordered_map<int32_t, const Tensor*> constants;
  for (const auto& [slot, t] : module_tensors) constants[slot] = t.get();
  for (const auto& [slot, t] : folded) constants[slot] = t.get();
  std::vector<std::unique_ptr<Offered>> offered(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = *nodes[i];
    auto o = std::make_unique<Offered>();
    o->outputs = n.outputs;
    if (n.kind == GraphNodeKind::kOp) {
      o->op_type = n.op_type;
      o->attrs = n.attrs.get();
      o->inputs = n.inputs;
    } else if (n.kind == GraphNodeKind::kLayer && n.layer && (o->form = onnx_form_of(*n.layer.get()))) {
      o->op_type = o->form->op_type;
      o->attrs = o->form->attrs.get();
      o->inputs = n.inputs;
      for (const TensorRef& w : o->form->weights) {
        const int32_t slot = static_cast<int32_t>(values.size());
        values.push_back(GraphValue{w, nullptr});
        constants[slot] = w.get();
        out.weights.emplace_back(slot, w);
        o->inputs.push_back(slot);
      }
    } else {
      continue;
    }
    if (all_tensors(*o, values)) offered[i] = std::move(o);
  }
  const int32_t slots = static_cast<int32_t>(values.size());
  out.slots = slots;
  Description d(offered, slots, values, constants);
  const nnp_backend& table = target.backend->table();
  const std::string where = device_name(target.device);
  std::vector<uint8_t> claimed(d.size(), 0);
  const nnp_graph whole = d.whole();
  check_plugin_status(table.capability(table.state, target.device.index, &whole, claimed.data()),
                      target.backend->name().c_str(), "capability");

  // Which plan node is claimed, and the runs of consecutive claimed nodes.
  std::vector<int> described_as(nodes.size(), -1);
  for (size_t k = 0; k < d.size(); ++k) described_as[d.plan_index(k)] = static_cast<int>(k);
  auto is_claimed = [&](size_t i) { return described_as[i] >= 0 && claimed[static_cast<size_t>(described_as[i])]; };

  const nnp_device fallback = target.fallback;
  const std::string elsewhere = device_name(fallback);
  std::unordered_map<int32_t, bool> constant_slot;  // slot -> a module tensor (else folded)
  for (const auto& [slot, t] : module_tensors) constant_slot[slot] = true;
  for (const auto& [slot, t] : folded) constant_slot[slot] = false;
  for (const auto& [slot, t] : out.weights) constant_slot[slot] = false;
  // Where each value lies as the plan runs: inputs and constants where they
  // are, a compiled run's results on the device, the rest on the fallback.
  std::vector<nnp_device> home(static_cast<size_t>(slots), fallback);  // (copies' slots are never read back)
  for (int32_t s = 0; s < slots; ++s)
    if (const Tensor* t = tensor_in(values, s)) home[static_cast<size_t>(s)] = t->device;
  std::vector<bool> computed(static_cast<size_t>(slots), false);
  for (const GraphNode* n : nodes)
    for (int32_t s : n->outputs)
      if (s >= 0) computed[static_cast<size_t>(s)] = true;
  for (int32_t s = 0; s < slots; ++s)
    if (computed[static_cast<size_t>(s)]) home[static_cast<size_t>(s)] = fallback;

  const std::vector<int> readers = count_readers(nodes, outputs, slots);
  std::unordered_map<int32_t, int32_t> on_fallback, on_device;  // slot -> its copy's slot there
  std::map<std::string, int> fallback_ops;
  int fallback_nodes = 0;
  for (size_t i = 0; i < nodes.size();) {
    if (!is_claimed(i)) {
      // Run on the fallback: what it reads from the device, copied first.
      const GraphNode& n = *nodes[i];
      std::map<size_t, int32_t> remap;
      // An op runs on the fallback, and a layer too as a copy made there;
      // one that cannot be copied runs where its own weights are.
      ModuleRef layer_copy;
      if (n.kind == GraphNodeKind::kLayer && n.layer && !same_device(target.device, fallback)) {
        layer_copy = layer_copy_on(*n.layer.get(), fallback);
        if (layer_copy) {
          for (const auto& [name, t] : n.layer->parameters) out.sources.push_back(t.get());
          for (const auto& [name, t] : n.layer->buffers) out.sources.push_back(t.get());
        }
      }
      const bool layer = n.kind == GraphNodeKind::kLayer && !layer_copy;
      const nnp_device runs_on = layer ? target.device : fallback;
      auto& copies = layer ? on_device : on_fallback;
      const bool movable = n.kind == GraphNodeKind::kOp || n.kind == GraphNodeKind::kLayer;
      for (size_t k = 0; movable && k < n.inputs.size(); ++k) {
        const int32_t s = n.inputs[k];
        if (s < 0 || same_device(home[static_cast<size_t>(s)], runs_on) || !tensor_in(values, s)) continue;
        auto [copy, made] = copies.try_emplace(s, out.slots);
        if (made) {
          ++out.slots;
          const auto constant = constant_slot.find(s);
          if (constant != constant_slot.end() && !computed[static_cast<size_t>(s)]) {
            autograd::NoGradGuard no_grad;
            const Tensor& t = *tensor_in(values, s);
            out.constants.emplace_back(copy->second, core::to(t, runs_on, t.dtype));
            if (constant->second) out.copied_slots.push_back(s);
          } else {
            auto node = copy_node(s, copy->second, runs_on, "read by " + n.op_type + " on " + device_name(runs_on));
            out.program.nodes.push_back(node.get());
            out.program.made.push_back(std::move(node));
            ++out.copies;
          }
        }
        remap[k] = copy->second;
      }
      for (int32_t s : n.outputs)
        if (s >= 0) home[static_cast<size_t>(s)] = runs_on;
      if (remap.empty() && !layer_copy) {
        out.program.nodes.push_back(nodes[i]);
      } else {
        auto node = remade_reading(n, remap, layer_copy);
        out.program.nodes.push_back(node.get());
        out.program.made.push_back(std::move(node));
      }
      ++fallback_nodes;
      ++fallback_ops[n.op_type];
      ++i;
      continue;
    }
    // A run of claimed nodes: what it reads from before it, what is read of
    // it after (or is an output).
    size_t end = i;
    while (end < nodes.size() && is_claimed(end)) ++end;
    std::vector<int32_t> produced, inputs, results;
    std::vector<int> inside(static_cast<size_t>(slots), 0);
    for (size_t j = i; j < end; ++j) {
      for (int32_t s : offered[j]->inputs) {
        if (s < 0) continue;
        ++inside[static_cast<size_t>(s)];
        if (std::find(produced.begin(), produced.end(), s) == produced.end() &&
            std::find(inputs.begin(), inputs.end(), s) == inputs.end())
          inputs.push_back(s);
      }
      for (int32_t s : nodes[j]->outputs)
        if (s >= 0) produced.push_back(s);
    }
    std::string ops;
    for (size_t j = i; j < end; ++j) ops += (j > i ? ", " : "") + offered[j]->op_type;
    for (int32_t s : produced)
      if (readers[static_cast<size_t>(s)] > inside[static_cast<size_t>(s)]) results.push_back(s);
    const size_t first = static_cast<size_t>(described_as[i]), last = static_cast<size_t>(described_as[end - 1]);
    const nnp_graph part = d.part(first, last, inputs, results);
    auto node =
        compiled_node(target, compiled(target, part, ops), inputs, results, d, "compiled on " + where + ": " + ops);
    out.program.nodes.push_back(node.get());
    out.program.made.push_back(std::move(node));
    for (int32_t s : results) home[static_cast<size_t>(s)] = target.device;
    out.lines.push_back(where + " runs " + ops + " (" + std::to_string(end - i) + (end - i == 1 ? " node" : " nodes") +
                        ") as one executable");
    out.claimed_nodes += static_cast<int>(end - i);
    ++out.program.fused;
    i = end;
  }
  // The outputs where the program as written gives them.
  for (int32_t s : outputs) {
    const Tensor* t = tensor_in(values, s);
    if (!t || same_device(home[static_cast<size_t>(s)], t->device)) continue;
    auto node = copy_node(s, s, t->device, "an output");
    out.program.nodes.push_back(node.get());
    out.program.made.push_back(std::move(node));
    home[static_cast<size_t>(s)] = t->device;
    ++out.copies;
  }
  if (fallback_nodes > 0) {
    std::string ops;
    for (const auto& [op, count] : fallback_ops)
      ops += (ops.empty() ? "" : ", ") + op + (count > 1 ? " x" + std::to_string(count) : "");
    out.lines.push_back(elsewhere + " runs " + ops + " (" + std::to_string(fallback_nodes) +
                        (fallback_nodes == 1 ? " node" : " nodes") + ", not claimed by " + where + ")");
  }
  if (out.copies > 0 || !out.constants.empty())
    out.lines.push_back(std::to_string(out.copies) + " values copied between " + where + " and " + elsewhere +
                        " per call, " + std::to_string(out.constants.size()) + " constants copied to " + elsewhere +
                        " once");
  return out;
}

}  // namespace nnp::core::graph
