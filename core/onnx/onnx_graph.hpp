// The ONNX graph an export is writing (nnp_onnx_graph of nnp.h): value names
// for the tensors the trace has seen, initialisers for parameters, buffers
// and constants, and which axis of each value is the batch.
#pragma once

#include <nnp/nnp.h>
#include <onnx/onnx_pb.h>

#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "../tensor.hpp"

namespace nnp::core::onnx {

struct TracedValue {
  std::string name;
  int32_t batch_axis = -1;  // the axis whose size is a multiple of the dynamic batch, or -1
  // The size of that axis is batch_lead * batch * (the rest): the constant
  // factor in front of the batch (2 for [3, B] flattened into [3 * B]).
  int64_t batch_lead = 1;
};

// ONNX's element type for a dtype (throws for none).
int32_t onnx_elem_type(nnp_dtype dtype);

}  // namespace nnp::core::onnx

struct nnp_onnx_graph {
  using Tensor = nnp::core::Tensor;
  using TracedValue = nnp::core::onnx::TracedValue;

  ::onnx::GraphProto* graph = nullptr;
  int64_t opset = 17;
  int64_t batch = -1;      // the traced batch size, or -1 when every dimension is fixed
  std::string batch_lost;  // why the batch cannot stay symbolic ("" while it can)
  std::set<std::string> custom_domains;

  // Every tensor the trace has named, kept alive so no address is reused.
  std::unordered_map<const Tensor*, TracedValue> values;
  std::vector<nnp::core::TensorRef> keep;
  // Frees the data of kept values no one else holds (onnx_graph.cpp).
  void drop_unreachable_data();
  // The exported module's parameters and buffers, by their state-dict keys.
  std::unordered_map<const Tensor*, std::string> state;
  std::unordered_map<const nnp_module*, std::string> module_prefix;  // "" for the root, "0." ...
  std::set<std::string> initialised;
  // What the dispatcher is writing: the op whose name tags each new node
  // (NodeProto.doc_string), and the ops that made constants (full, arange,
  // ...), whose names the constants take when a node first reads them.
  const char* tagging_op = nullptr;
  std::unordered_map<const Tensor*, std::string> constant_hints;

  // A copy of name that lives as long as the graph (names handed out through the C API).
  const std::string* keep_name(std::string name) { return &handed_out_.emplace_back(std::move(name)); }
  bool has_name(const std::string& name) const { return names_.count(name) != 0; }
  // A name no value has yet ("hint", "hint_1", ...).
  std::string fresh(const std::string& hint);
  // The value a node reads for t: what the trace named it, a parameter or
  // buffer's initialiser, or a new constant holding t's contents.
  TracedValue value(const Tensor& t);
  std::string name(const Tensor& t) { return value(t).name; }
  void bind(const Tensor& t, const std::string& name, int32_t batch_axis, int64_t batch_lead = 1);
  // Appends a node named after its op type.
  ::onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& domain = "");
  // One output, freshly named after hint.
  std::string node1(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& hint = "");
  // Initialisers: t's contents, or a 1-D int64 list.
  std::string constant(const Tensor& t, const std::string& hint);
  std::string int64s(const std::vector<int64_t>& values, const std::string& hint);
  std::string scalar(double value, nnp_dtype dtype, const std::string& hint);
  // Marks the batch as fixed from here on, saying why (the first reason stays).
  void lose_batch(const std::string& why);

 private:
  std::set<std::string> names_;
  std::deque<std::string> handed_out_;
  std::map<std::string, int64_t> node_counts_;
  void write_initializer(const Tensor& t, const std::string& name);
};

namespace nnp::core::onnx {

void set_attr(::onnx::NodeProto& node, const std::string& name, int64_t value);
void set_attr(::onnx::NodeProto& node, const std::string& name, float value);
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::vector<float>& values);

}  // namespace nnp::core::onnx
