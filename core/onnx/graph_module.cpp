// nn.GraphModule: a module that runs a dataflow graph - what ONNX import
// builds (torch.fx's GraphModule is the PyTorch analogue). It is a core
// container, as nn.Sequential is: its children are layers from the layer
// registry and its op nodes run the registered graph ops (graph_ops.hpp: the
// built-in library's ONNX interpreter, or a plugin's). Its one attribute,
// `graph`, is a JSON program:
//   {"inputs": ["input"], "outputs": ["output"],
//    "tensors": [{"key": "fc_bias", "value": "fc.bias", "shape": [4], "dtype": "f32", "parameter": true}],
//    "layers": [{"name": "conv", "type": "nn.Conv2d", "attrs": {"in_channels": 1, ...}}],
//    "nodes": [{"op": "Relu", "inputs": ["x"], "outputs": ["y"], "attrs": {}},
//              {"layer": "conv", "inputs": ["y"], "outputs": ["z"]}]}
// Tensors are its parameters (trainable) or buffers, layers its children;
// nodes run in order, each reading values that are inputs, tensors or
// earlier nodes' outputs (checked when the module is made, so a program from
// a stranger cannot refer forward, loop, or reuse a name).
#include "graph_module.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <nnp/detail/strings.hpp>

#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../graph/inference_plan.hpp"
#include "../graph/liveness.hpp"
#include "../io/strict_json.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../nn/module_call.hpp"
#include "../ops.hpp"
#include "graph_ops.hpp"
#include "graph_program.hpp"

namespace nnp::core::onnx {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxEntries = size_t{1} << 20;        // nodes, tensors, layers
constexpr int64_t kMaxTensorBytes = int64_t{1} << 36;  // 64 GiB in all

[[noreturn]] void bad(const std::string& what) { fail(NNP_INVALID_ARGUMENT, "nn.GraphModule: the graph ", what); }

const json& field(const json& object, const char* name, json::value_t type, const std::string& where) {
  if (!object.is_object() || !object.contains(name)) bad(where + " has no \"" + name + "\"");
  const json& v = object[name];
  if (v.type() != type && !(type == json::value_t::number_integer && v.is_number_unsigned()))
    bad(where + "'s \"" + name + "\" has the wrong type");
  return v;
}

std::string text(const json& v, const std::string& where) {
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) bad(where + " must be a non-empty string");
  return v.get<std::string>();
}

nnp_dtype dtype_named(const std::string& name, const std::string& where) {
  for (int32_t d = 0; d < NNP_DTYPE_COUNT; ++d)
    if (const char* known = dtype_name(static_cast<nnp_dtype>(d)); known && name == known)
      return static_cast<nnp_dtype>(d);
  bad(where + " has an unknown dtype '" + name + "'");
}

bool all_integers(const json& v) {
  return std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); });
}
bool all_numbers(const json& v) {
  return std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number(); });
}

// An attribute's value from JSON (ints, floats, bools, strings, lists of
// numbers, null).
nn::AttrValue attr_value(const json& v, const std::string& name, const std::string& where) {
  nn::AttrValue value;
  if (v.is_null()) {
    value.type = NNP_ATTR_NONE;
  } else if (v.is_boolean()) {
    value.type = NNP_ATTR_BOOL;
    value.b = v.get<bool>();
  } else if (v.is_number_integer()) {
    value.type = NNP_ATTR_INT;
    value.i = v.get<int64_t>();
  } else if (v.is_number()) {
    value.type = NNP_ATTR_FLOAT;
    value.f = v.get<double>();
  } else if (v.is_string()) {
    value.type = NNP_ATTR_STRING;
    value.s = v.get<std::string>();
  } else if (v.is_array() && all_integers(v)) {
    value.type = NNP_ATTR_INTS;
    value.ints = v.get<std::vector<int64_t>>();
  } else if (v.is_array() && all_numbers(v)) {
    value.type = NNP_ATTR_FLOATS;
    value.floats = v.get<std::vector<double>>();
  } else {
    bad(where + "'s attribute '" + name + "' is not a number, string, bool or list of numbers");
  }
  return value;
}

// A layer's attributes from JSON.
std::unique_ptr<nnp_attrs> layer_attrs(const json& given, const std::string& where) {
  auto attrs = std::make_unique<nnp_attrs>();
  if (!given.is_object()) bad(where + "'s attrs must be an object");
  for (auto it = given.begin(); it != given.end(); ++it)
    attrs->set(it.key().c_str(), attr_value(it.value(), it.key(), where), "nn.GraphModule");
  return attrs;
}

// An op node's attributes as nnp_graph_op.run receives them: ONNX's kinds,
// and a tensor attribute ({"elem_type": 1, "data": [0.5]}) as FLOATS of its
// values and INT "<name>.elem_type". Lists of strings reach no op nnplug
// runs and are left out.
std::unique_ptr<nnp_attrs> op_attrs(const json& given, const std::string& where) {
  auto attrs = std::make_unique<nnp_attrs>();
  if (!given.is_object()) bad(where + "'s attrs must be an object");
  for (auto it = given.begin(); it != given.end(); ++it) {
    const json& v = it.value();
    const std::string& name = it.key();
    if (v.is_object()) {
      if (!v.contains("elem_type") || !v["elem_type"].is_number_integer() || !v.contains("data") ||
          !v["data"].is_array() || !all_numbers(v["data"]))
        bad(where + "'s tensor attribute '" + name + "' needs \"elem_type\" and numeric \"data\"");
      nn::AttrValue values, elem_type;
      values.type = NNP_ATTR_FLOATS;
      values.floats = v["data"].get<std::vector<double>>();
      elem_type.type = NNP_ATTR_INT;
      elem_type.i = v["elem_type"].get<int64_t>();
      attrs->set(name.c_str(), std::move(values), "nn.GraphModule");
      attrs->set((name + ".elem_type").c_str(), std::move(elem_type), "nn.GraphModule");
      continue;
    }
    if (v.is_array() && !v.empty() && !all_numbers(v)) {
      if (std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); })) continue;
      bad(where + "'s attribute '" + name + "' mixes numbers and other values");
    }
    attrs->set(name.c_str(), attr_value(v, name, where), "nn.GraphModule");
  }
  return attrs;
}

// A tensor whose values the program holds (small constants: shapes, axes).
TensorRef inline_values(const json& data, const Dims& shape, int64_t numel, nnp_dtype dtype, const std::string& where) {
  if (!data.is_array() || static_cast<int64_t>(data.size()) != numel)
    bad(where + "'s data does not have one number per element");
  const nnp_device cpu = parse_device("cpu");
  if (!is_floating(dtype)) {
    std::vector<int64_t> values;
    for (const json& v : data) {
      if (!v.is_number_integer()) bad(where + "'s data holds a value that is not an integer");
      values.push_back(v.get<int64_t>());
    }
    return core::to(*from_host(values.data(), shape, NNP_I64, cpu), cpu, dtype);
  }
  std::vector<double> values;
  for (const json& v : data) {
    if (!v.is_number()) bad(where + "'s data holds a value that is not a number");
    values.push_back(v.get<double>());
  }
  return core::to(*from_host(values.data(), shape, NNP_F64, cpu), cpu, dtype);
}

// What a GraphModule runs: the module's self.
struct Program {
  std::vector<int32_t> inputs, outputs;
  std::vector<std::pair<int32_t, TensorRef>> tensors;  // slot, the registered tensor
  std::vector<GraphNode> nodes;
  int32_t slots = 0;
  nnp_device fallback = parse_device("cpu");  // runs what a backend that compiles graphs leaves
  bool as_written = false;                    // never planned (set_graph_as_written)

  // Reads the program and registers its tensors and layers on m.
  Program(const std::string& program, nn::Module& m);
  std::vector<TensorRef> run(const std::vector<TensorRef>& args) const;
  // What the plan of a call now would run, and what its passes did.
  std::vector<std::string> plan_notes() const {
    const std::shared_ptr<const graph::InferencePlan> plan =
        plan_.get({&nodes, &inputs, &outputs, &tensors, slots, fallback});
    if (!plan) return {"the program runs as written (gradients of the tensors it would fold are wanted)"};
    std::vector<std::string> notes = {std::to_string(plan->nodes.size()) + " nodes run (" +
                                      std::to_string(nodes.size()) + " in the program)"};
    notes.insert(notes.end(), plan->notes.begin(), plan->notes.end());
    return notes;
  }

 private:
  mutable graph::PlanCache plan_;                    // graph mode: the program as it runs without gradients
  std::vector<const GraphNode*> in_order_;           // nodes, as run as written
  std::vector<std::vector<int32_t>> release_after_;  // per node: the values its run ends (liveness.hpp)
  std::map<std::string, int32_t> slot_of_;           // the names in scope while reading
  std::map<std::string, ModuleRef> layers_;
  int32_t define(const std::string& name, const std::string& where) {
    if (!slot_of_.emplace(name, slots).second) bad(where + " writes '" + name + "', which is already defined");
    return slots++;
  }
  int32_t read(const json& name, const std::string& where) const {
    if (name.is_string() && name.get_ref<const std::string&>().empty()) return -1;
    auto it = slot_of_.find(text(name, where));
    if (it == slot_of_.end()) bad(where + " reads '" + name.get<std::string>() + "', which nothing before it defines");
    return it->second;
  }
  static const json& list(const json& object, const char* name, const std::string& where) {
    const json& l = field(object, name, json::value_t::array, where);
    if (l.size() > kMaxEntries) bad(where + "'s \"" + name + "\" has too many entries");
    return l;
  }
  std::vector<GraphNode> read_nodes(const json& node_list, const std::string& where, size_t depth);
  GraphNode read_node(const json& n, const std::string& where, size_t depth);
  Subgraph read_subgraph(const json& g, const std::string& where, size_t depth);
};

Subgraph Program::read_subgraph(const json& g, const std::string& where, size_t depth) {
  if (depth > kMaxGraphNesting) bad(where + " nests subgraphs deeper than " + std::to_string(kMaxGraphNesting));
  // The subgraph sees the enclosing names; its own names end with it.
  const std::map<std::string, int32_t> enclosing = slot_of_;
  Subgraph sub;
  for (const json& name : list(g, "inputs", where)) sub.inputs.push_back(define(text(name, where), where + "'s input"));
  sub.nodes = read_nodes(list(g, "nodes", where), where, depth);
  for (const json& name : list(g, "outputs", where)) {
    sub.outputs.push_back(read(name, where + "'s outputs"));
    if (sub.outputs.back() < 0) bad(where + " names an empty output");
  }
  slot_of_ = enclosing;
  return sub;
}

GraphNode Program::read_node(const json& n, const std::string& at, size_t depth) {
  GraphNode node;
  std::string where = at;
  if (n.is_object() && n.contains("layer")) {
    const std::string name = text(n["layer"], where + "'s layer");
    auto it = layers_.find(name);
    if (it == layers_.end()) bad(where + " calls layer '" + name + "', which is not among its layers");
    node.kind = GraphNodeKind::kLayer;
    node.layer = it->second;
    node.op_type = name;
  } else if (n.is_object() && (n.contains("control") || n.contains("sequence"))) {
    const bool control = n.contains("control");
    node.kind = control ? GraphNodeKind::kControl : GraphNodeKind::kSequence;
    node.op_type = text(n[control ? "control" : "sequence"], where + "'s op");
    where += " (" + node.op_type + ")";
    if (control ? !is_control_op(node.op_type) : !is_sequence_op(node.op_type))
      fail(NNP_UNIMPLEMENTED, "nn.GraphModule: ", where, ": nnplug does not run this op");
    node.attrs = op_attrs(n.contains("attrs") ? n["attrs"] : json::object(), where);
  } else {
    node.op_type = text(field(n, "op", json::value_t::string, where), where + "'s op");
    where += " (" + node.op_type + ")";
    node.op = graph_ops().find(node.op_type);
    if (!node.op) fail(NNP_UNIMPLEMENTED, "nn.GraphModule: ", where, ": nnplug does not run this op");
    node.attrs = op_attrs(n.contains("attrs") ? n["attrs"] : json::object(), where);
  }
  for (const json& name : list(n, "inputs", where)) node.inputs.push_back(read(name, where));
  if (node.kind == GraphNodeKind::kControl) {
    const json& graphs = list(n, "graphs", where);
    const size_t wanted = node.op_type == "If" ? 2 : 1;
    if (graphs.size() != wanted) bad(where + " needs " + std::to_string(wanted) + " subgraphs");
    for (size_t i = 0; i < graphs.size(); ++i)
      node.graphs.push_back(read_subgraph(graphs[i], where + "'s subgraph " + std::to_string(i), depth + 1));
  }
  for (const json& name : list(n, "outputs", where)) {  // "": an optional output left out (-1)
    const bool omitted = name.is_string() && name.get_ref<const std::string&>().empty();
    node.outputs.push_back(omitted ? -1 : define(text(name, where), where));
  }
  if (node.outputs.empty()) bad(where + " has no outputs");
  return node;
}

std::vector<GraphNode> Program::read_nodes(const json& node_list, const std::string& where, size_t depth) {
  std::vector<GraphNode> out;
  for (size_t i = 0; i < node_list.size(); ++i)
    out.push_back(read_node(node_list[i], (where.empty() ? "" : where + "'s ") + "node " + std::to_string(i), depth));
  return out;
}

Program::Program(const std::string& program, nn::Module& m) {
  json g = io::parse_strict_json(program, 16 + 4 * kMaxGraphNesting,  // four JSON levels a subgraph
                                 [](const std::string& what) { bad(what); });
  for (const json& name : list(g, "inputs", "")) inputs.push_back(define(text(name, "an input name"), "an input"));
  int64_t bytes = 0;
  for (const json& t : list(g, "tensors", "")) {
    const std::string key = text(field(t, "key", json::value_t::string, "a tensor"), "a tensor key");
    const std::string where = "tensor '" + key + "'";
    Dims shape;
    int64_t numel = 1;
    for (const json& d : field(t, "shape", json::value_t::array, where)) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0 || shape.ndim >= NNP_MAX_DIMS) bad(where + " has a bad shape");
      shape.d[shape.ndim++] = d.get<int64_t>();
      const int64_t size = shape.d[shape.ndim - 1];
      if (size != 0 && numel > kMaxTensorBytes / size) bad(where + " is too large");
      numel *= size;
    }
    const nnp_dtype dtype = dtype_named(text(field(t, "dtype", json::value_t::string, where), where), where);
    bytes += numel * static_cast<int64_t>(dtype_size(dtype));
    if (bytes > kMaxTensorBytes) bad("holds more than 64 GiB of tensors");
    const bool parameter = t.contains("parameter") && t["parameter"].is_boolean() && t["parameter"].get<bool>();
    TensorRef value = t.contains("data") ? inline_values(t["data"], shape, numel, dtype, where)
                                         : full(shape, 0, dtype, parse_device("cpu"));
    if (parameter)
      nn::register_parameter(m, key.c_str(), value.get(), true);
    else
      nn::register_buffer(m, key.c_str(), value.get(), true);
    tensors.emplace_back(define(text(field(t, "value", json::value_t::string, where), where), where), value);
  }
  for (const json& l : list(g, "layers", "")) {
    const std::string name = text(field(l, "name", json::value_t::string, "a layer"), "a layer name");
    const std::string where = "layer '" + name + "'";
    const std::string type = text(field(l, "type", json::value_t::string, where), where);
    ModuleRef child = nn::LayerRegistry::instance().create(
        type, layer_attrs(l.contains("attrs") ? l["attrs"] : json::object(), where).get());
    if (!layers_.emplace(name, child).second) bad("names layer '" + name + "' twice");
    nn::register_module(m, name.c_str(), child.get());
  }
  nodes = read_nodes(list(g, "nodes", ""), "", 0);
  for (const json& name : list(g, "outputs", "")) {
    outputs.push_back(read(name, "the outputs"));
    if (outputs.back() < 0) bad("names an empty output");
  }
  if (outputs.empty()) bad("has no outputs");
  for (const GraphNode& n : nodes) in_order_.push_back(&n);
  release_after_ = graph::release_points(in_order_, outputs, slots);
  slot_of_.clear();
  layers_.clear();
}

// One op node's results, by its registered op.
std::vector<TensorRef> run_op(const GraphNode& node, const std::vector<const nnp_tensor*>& in) {
  nnp_list results;
  const uint64_t since = last_error_serial();
  const nnp_status status = node.op->run(in.data(), static_cast<int32_t>(in.size()), node.attrs.get(),
                                         static_cast<int32_t>(node.outputs.size()), &results, node.op->user_data);
  if (status != NNP_OK) check_plugin_status(status, node.op_type.c_str(), "run", since);
  std::vector<TensorRef> out;
  for (nnp_list::Entry& e : results.entries)
    if (e.tensor) out.push_back(std::move(e.tensor));
  return out;
}

// An op or layer node: its tensors in, its tensors out.
void run_compute(const GraphNode& node, std::vector<GraphValue>& values) {
  std::vector<const nnp_tensor*> in;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int32_t s = node.inputs[i];
    if (i < node.host_copies.size() && node.host_copies[i])
      in.push_back(node.host_copies[i].get());
    else
      in.push_back(s < 0 ? nullptr : tensor_of(values[static_cast<size_t>(s)], node.op_type).get());
  }
  std::vector<TensorRef> out;
  if (node.kind == GraphNodeKind::kOp) {
    out = run_op(node, in);
  } else {
    nnp_list given;
    for (const nnp_tensor* t : in) {
      if (t)
        given.add("", TensorRef::share(t));
      else
        given.add_scalar("", NNP_VALUE_NONE);
    }
    for (nnp_list::Entry& e : nn::call_values(*node.layer, std::move(given)).entries)
      if (e.tensor) out.push_back(std::move(e.tensor));
  }
  if (out.size() < node.outputs.size())
    fail(NNP_INTERNAL, "GraphModule: ", node.op_type, " gave ", out.size(), " results for ", node.outputs.size(),
         " outputs");
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0) values[static_cast<size_t>(node.outputs[i])] = GraphValue{std::move(out[i]), nullptr};
}

std::vector<TensorRef> Program::run(const std::vector<TensorRef>& args) const {
  if (args.size() != inputs.size())
    fail(NNP_INVALID_ARGUMENT, "GraphModule: expected ", inputs.size(), " inputs, got ", args.size());
  std::vector<GraphValue> values(static_cast<size_t>(slots));
  for (size_t i = 0; i < inputs.size(); ++i) values[static_cast<size_t>(inputs[i])].tensor = args[i];
  for (const auto& [slot, t] : tensors) values[static_cast<size_t>(slot)].tensor = t;
  if (const std::shared_ptr<const graph::InferencePlan> plan =
          as_written ? nullptr : plan_.get({&nodes, &inputs, &outputs, &tensors, slots, fallback}, &values)) {
    values.resize(static_cast<size_t>(plan->slots));
    for (const auto& [slot, t] : plan->constants) values[static_cast<size_t>(slot)].tensor = t;
    graph::run_releasing(plan->nodes, plan->release_after, values);
  } else {
    graph::run_releasing(in_order_, release_after_, values);
  }
  std::vector<TensorRef> results;
  for (int32_t s : outputs) results.push_back(tensor_of(values[static_cast<size_t>(s)], "the graph's output"));
  return results;
}

std::vector<TensorRef> refs_of(const nnp_tensor* const* inputs, int32_t n) {
  std::vector<TensorRef> out;
  for (int32_t i = 0; i < n; ++i) out.push_back(TensorRef::share(inputs[i]));
  return out;
}

// module_call: the first output, as PyTorch's forward returning a tuple is
// read by code that takes one tensor.
nnp_status forward(void* self, nnp_module*, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** output) {
  return guard([&] { *output = static_cast<const Program*>(self)->run(refs_of(inputs, n_inputs))[0].take(); });
}

nnp_status forward_values(void* self, nnp_module*, const nnp_list* args, nnp_list* outputs) {
  return guard([&] {
    std::vector<TensorRef> in;
    for (const nnp_list::Entry& e : args->entries) {
      if (!e.tensor) fail(NNP_INVALID_ARGUMENT, "GraphModule: its inputs are tensors; argument ", in.size(), " is not");
      in.push_back(e.tensor);
    }
    for (TensorRef& t : static_cast<const Program*>(self)->run(in)) outputs->add("", std::move(t));
  });
}

nnp_status extra_repr(void* self, char* buf, size_t size, size_t* needed) {
  return guard([&] {
    const auto& p = *static_cast<const Program*>(self);
    detail::write_string("nodes=" + std::to_string(p.nodes.size()) + ", tensors=" + std::to_string(p.tensors.size()),
                         buf, size, needed);
  });
}

void destroy(void* self) { delete static_cast<Program*>(self); }

nnp_status create(const nnp_attrs* attrs, void*, nnp_module** out) {
  return guard([&] {
    nnp_module_vtable vtable{};
    vtable.struct_size = sizeof vtable;
    vtable.forward = forward;
    vtable.forward_values = forward_values;
    vtable.extra_repr = extra_repr;
    vtable.destroy = destroy;
    ModuleRef m = nn::create_module("GraphModule", &vtable, nullptr);
    auto program = std::make_unique<Program>(attrs->get("graph", NNP_ATTR_STRING, "nn.GraphModule").s, *m);
    m->self = program.release();
    *out = m.take();
  });
}

}  // namespace

void run_node(const GraphNode& node, std::vector<GraphValue>& values) {
  try {
    switch (node.kind) {
      case GraphNodeKind::kControl: run_control(node, values); break;
      case GraphNodeKind::kSequence: run_sequence_op(node, values); break;
      case GraphNodeKind::kFused: node.fused(node, values); break;
      default: run_compute(node, values);
    }
  } catch (const Error& e) {
    fail(e.status(), "GraphModule: ", node.op_type, ": ", e.what());
  }
}

void run_nodes(const std::vector<GraphNode>& nodes, std::vector<GraphValue>& values) {
  for (const GraphNode& node : nodes) run_node(node, values);
}

const TensorRef& tensor_of(const GraphValue& v, const std::string& who) {
  if (v.sequence) fail(NNP_INVALID_ARGUMENT, who, " reads a sequence where a tensor is needed");
  if (!v.tensor) fail(NNP_INTERNAL, who, " reads a value nothing has written");
  return v.tensor;
}

std::vector<std::string> graph_plan_notes(const nn::Module& m) {
  if (m.type_name != "GraphModule" || m.vtable.forward_values != forward_values || !m.self)
    fail(NNP_INVALID_ARGUMENT, m.type_name, " is not an nn.GraphModule");
  return static_cast<const Program*>(m.self)->plan_notes();
}

void set_graph_fallback(nn::Module& m, nnp_device device) {
  if (m.type_name != "GraphModule" || m.vtable.forward_values != forward_values || !m.self)
    fail(NNP_INVALID_ARGUMENT, m.type_name, " is not an nn.GraphModule");
  static_cast<Program*>(m.self)->fallback = device;
}

void set_graph_as_written(nn::Module& m) {
  if (m.type_name != "GraphModule" || m.vtable.forward_values != forward_values || !m.self)
    fail(NNP_INVALID_ARGUMENT, m.type_name, " is not an nn.GraphModule");
  static_cast<Program*>(m.self)->as_written = true;
}

void register_graph_module(nn::LayerRegistry& registry) {
  static const nnp_attr_def attrs[] = {{sizeof(nnp_attr_def), "graph", NNP_ATTR_STRING, 1, nullptr,
                                        "the program: inputs, tensors, layers, nodes, outputs"}};
  nnp_layer_type type{};
  type.struct_size = sizeof type;
  type.name = "nn.GraphModule";
  type.doc = "runs a dataflow graph of ops and layers (what ONNX import builds)";
  type.attrs = attrs;
  type.attr_count = 1;
  type.create = create;
  registry.add(nn::validate_layer_type(type, "core", "core"));
}

}  // namespace nnp::core::onnx
