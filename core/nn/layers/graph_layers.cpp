// nn.GraphModule: a module that runs a dataflow graph - what ONNX import
// builds (torch.fx's GraphModule is the PyTorch analogue). Its one attribute,
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
#include <map>
#include <nnp/nnp.hpp>

#include "../../io/strict_json.hpp"
#include "../../onnx/onnx_ops.hpp"
#include "../layer_registry.hpp"

namespace nnp::core::nn::layers {

namespace {

using json = nlohmann::json;
using nnp::Error;
using nnp::Tensor;
using nnp::Value;
using nnp::nn::Attrs;

constexpr size_t kMaxEntries = size_t{1} << 20;        // nodes, tensors, layers
constexpr int64_t kMaxTensorBytes = int64_t{1} << 36;  // 64 GiB in all

[[noreturn]] void bad(const std::string& what) {
  throw Error(NNP_INVALID_ARGUMENT, "nn.GraphModule: the graph " + what);
}

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

nnp::Dtype dtype_named(const std::string& name, const std::string& where) {
  for (nnp::Dtype d : {nnp::Dtype::f32, nnp::Dtype::f64, nnp::Dtype::f16, nnp::Dtype::bf16, nnp::Dtype::i64,
                       nnp::Dtype::i32, nnp::Dtype::u8, nnp::Dtype::boolean, nnp::Dtype::i8})
    if (name == nnp::dtype_name(d)) return d;
  bad(where + " has an unknown dtype '" + name + "'");
}

// A layer's attributes from JSON (ints, floats, bools, strings, lists, null).
Attrs layer_attrs(const json& given, const std::string& where) {
  Attrs attrs;
  if (!given.is_object()) bad(where + "'s attrs must be an object");
  for (auto it = given.begin(); it != given.end(); ++it) {
    const json& v = it.value();
    const std::string& name = it.key();
    if (v.is_null())
      attrs.set(name, std::nullopt);
    else if (v.is_boolean())
      attrs.set(name, v.get<bool>());
    else if (v.is_number_integer())
      attrs.set(name, v.get<int64_t>());
    else if (v.is_number())
      attrs.set(name, v.get<double>());
    else if (v.is_string())
      attrs.set(name, v.get<std::string>());
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); }))
      attrs.set(name, v.get<std::vector<int64_t>>());
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number(); }))
      attrs.set(name, v.get<std::vector<double>>());
    else
      bad(where + "'s attribute '" + name + "' is not a number, string, bool or list of numbers");
  }
  return attrs;
}

// A tensor whose values the program holds (small constants: shapes, axes).
Tensor inline_values(const json& data, const nnp::Shape& shape, int64_t numel, nnp::Dtype dtype,
                     const std::string& where) {
  if (!data.is_array() || static_cast<int64_t>(data.size()) != numel)
    bad(where + "'s data does not have one number per element");
  const bool integral = dtype == nnp::Dtype::i64 || dtype == nnp::Dtype::i32 || dtype == nnp::Dtype::i8 ||
                        dtype == nnp::Dtype::u8 || dtype == nnp::Dtype::boolean;
  if (integral) {
    std::vector<int64_t> values;
    for (const json& v : data) {
      if (!v.is_number_integer()) bad(where + "'s data holds a value that is not an integer");
      values.push_back(v.get<int64_t>());
    }
    return nnp::from_vector(values, shape).to(dtype);
  }
  std::vector<double> values;
  for (const json& v : data) {
    if (!v.is_number()) bad(where + "'s data holds a value that is not a number");
    values.push_back(v.get<double>());
  }
  return nnp::from_vector(values, shape).to(dtype);
}

struct Node {
  nnp::core::onnx::OpFunction op = nullptr;
  std::string op_type;
  mutable nnp::nn::ModuleHandle layer;  // calling it is not const
  json attrs;
  std::vector<int32_t> inputs, outputs;  // value slots; -1: an omitted optional input
};

struct GraphModule : nnp::nn::Module {
  std::string program;
  std::vector<int32_t> inputs, outputs;
  std::vector<std::pair<int32_t, Tensor>> tensors;  // slot, the registered tensor
  std::vector<Node> nodes;
  int32_t slots = 0;

  explicit GraphModule(const Attrs& a) : Module("GraphModule"), program(a.string("graph")) {
    json g = nnp::core::io::parse_strict_json(program, 16, [](const std::string& what) { bad(what); });
    std::map<std::string, int32_t> slot_of;
    auto define = [&](const std::string& name, const std::string& where) {
      if (!slot_of.emplace(name, slots).second) bad(where + " writes '" + name + "', which is already defined");
      return slots++;
    };
    auto read = [&](const json& name, const std::string& where) -> int32_t {
      if (name.is_string() && name.get_ref<const std::string&>().empty()) return -1;
      auto it = slot_of.find(text(name, where));
      if (it == slot_of.end()) bad(where + " reads '" + name.get<std::string>() + "', which nothing before it defines");
      return it->second;
    };
    auto list = [&](const json& object, const char* name, const std::string& where) -> const json& {
      const json& l = field(object, name, json::value_t::array, where);
      if (l.size() > kMaxEntries) bad(where + "'s \"" + name + "\" has too many entries");
      return l;
    };

    for (const json& name : list(g, "inputs", "")) inputs.push_back(define(text(name, "an input name"), "an input"));
    int64_t bytes = 0;
    for (const json& t : list(g, "tensors", "")) {
      const std::string key = text(field(t, "key", json::value_t::string, "a tensor"), "a tensor key");
      const std::string where = "tensor '" + key + "'";
      nnp::Shape shape;
      int64_t numel = 1;
      for (const json& d : field(t, "shape", json::value_t::array, where)) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0 || shape.size() >= NNP_MAX_DIMS)
          bad(where + " has a bad shape");
        shape.push_back(d.get<int64_t>());
        if (shape.back() != 0 && numel > kMaxTensorBytes / shape.back()) bad(where + " is too large");
        numel *= shape.back();
      }
      const nnp::Dtype dtype = dtype_named(text(field(t, "dtype", json::value_t::string, where), where), where);
      bytes += numel * static_cast<int64_t>(nnp::dtype_size(dtype));
      if (bytes > kMaxTensorBytes) bad("holds more than 64 GiB of tensors");
      const bool parameter = t.contains("parameter") && t["parameter"].is_boolean() && t["parameter"].get<bool>();
      Tensor value =
          t.contains("data") ? inline_values(t["data"], shape, numel, dtype, where) : nnp::zeros(shape, dtype);
      value = parameter ? register_parameter(key, value) : register_buffer(key, value);
      tensors.emplace_back(define(text(field(t, "value", json::value_t::string, where), where), where), value);
    }
    std::map<std::string, nnp::nn::ModuleHandle> layers;
    for (const json& l : list(g, "layers", "")) {
      const std::string name = text(field(l, "name", json::value_t::string, "a layer"), "a layer name");
      const std::string where = "layer '" + name + "'";
      const std::string type = text(field(l, "type", json::value_t::string, where), where);
      nnp::nn::ModuleHandle child =
          nnp::nn::create_layer(type, layer_attrs(l.contains("attrs") ? l["attrs"] : json::object(), where));
      if (!layers.emplace(name, child).second) bad("names layer '" + name + "' twice");
      register_module(name, child);
    }
    const json& node_list = list(g, "nodes", "");
    for (size_t i = 0; i < node_list.size(); ++i) {
      const json& n = node_list[i];
      Node node;
      std::string where = "node " + std::to_string(i);
      if (n.is_object() && n.contains("layer")) {
        const std::string name = text(n["layer"], where + "'s layer");
        auto it = layers.find(name);
        if (it == layers.end()) bad(where + " calls layer '" + name + "', which is not among its layers");
        node.layer = it->second;
        node.op_type = name;
      } else {
        node.op_type = text(field(n, "op", json::value_t::string, where), where + "'s op");
        where += " (" + node.op_type + ")";
        node.op = nnp::core::onnx::find_op(node.op_type);
        if (!node.op) throw Error(NNP_UNIMPLEMENTED, "nn.GraphModule: " + where + ": nnplug does not run this op");
        node.attrs = n.contains("attrs") ? n["attrs"] : json::object();
        if (!node.attrs.is_object()) bad(where + "'s attrs must be an object");
      }
      for (const json& name : list(n, "inputs", where)) node.inputs.push_back(read(name, where));
      for (const json& name : list(n, "outputs", where)) node.outputs.push_back(define(text(name, where), where));
      if (node.outputs.empty()) bad(where + " has no outputs");
      node.attrs["_outputs"] = node.outputs.size();
      nodes.push_back(std::move(node));
    }
    for (const json& name : list(g, "outputs", "")) outputs.push_back(read(name, "the outputs"));
    if (outputs.empty()) bad("has no outputs");
  }

  std::vector<Value> forward_values(const std::vector<Value>& args) override {
    if (args.size() != inputs.size())
      throw Error(NNP_INVALID_ARGUMENT, "GraphModule: expected " + std::to_string(inputs.size()) + " inputs, got " +
                                            std::to_string(args.size()));
    std::vector<Tensor> values(static_cast<size_t>(slots));
    for (size_t i = 0; i < inputs.size(); ++i) values[static_cast<size_t>(inputs[i])] = args[i].toTensor();
    for (const auto& [slot, t] : tensors) values[static_cast<size_t>(slot)] = t;
    for (const Node& node : nodes) {
      std::vector<Tensor> in;
      for (int32_t s : node.inputs) in.push_back(s < 0 ? Tensor() : values[static_cast<size_t>(s)]);
      std::vector<Tensor> out;
      try {
        if (node.op) {
          out = node.op(in, node.attrs);
        } else {
          std::vector<Value> given;
          for (const Tensor& t : in) given.push_back(t.defined() ? Value(t) : Value());
          for (const Value& v : node.layer.call_values(given))
            if (v.isTensor()) out.push_back(v.toTensor());
        }
      } catch (const Error& e) {
        throw Error(e.status(), "GraphModule: " + node.op_type + ": " + e.what());
      } catch (const json::exception& e) {  // an attribute of the wrong kind, from the program's author
        throw Error(NNP_INVALID_ARGUMENT,
                    "GraphModule: " + node.op_type + ": an attribute has the wrong type (" + e.what() + ")");
      }
      if (out.size() < node.outputs.size())
        throw Error(NNP_INTERNAL, "GraphModule: " + node.op_type + " gave " + std::to_string(out.size()) +
                                      " results for " + std::to_string(node.outputs.size()) + " outputs");
      for (size_t i = 0; i < node.outputs.size(); ++i) values[static_cast<size_t>(node.outputs[i])] = out[i];
    }
    std::vector<Value> results;
    for (int32_t s : outputs) results.emplace_back(values[static_cast<size_t>(s)]);
    return results;
  }
  Tensor forward(const std::vector<Tensor>& in) override {
    return forward_values(std::vector<Value>(in.begin(), in.end()))[0].toTensor();
  }
  std::string extra_repr() const override {
    return "nodes=" + std::to_string(nodes.size()) + ", tensors=" + std::to_string(tensors.size());
  }
};

}  // namespace

void register_graph_layers(LayerRegistry& registry) {
  const auto type = nnp::nn::layer_type<GraphModule>(
      "nn.GraphModule", "runs a dataflow graph of ops and layers (what ONNX import builds)",
      {{"graph", NNP_ATTR_STRING, true, nullptr, "the program: inputs, tensors, layers, nodes, outputs"}});
  registry.add(validate_layer_type(type.get(), "core", "core"));
}

}  // namespace nnp::core::nn::layers
