#include "onnx_graph.hpp"

#include "../dtype.hpp"
#include "../error.hpp"
#include "../object_pool.hpp"
#include "../ops.hpp"

namespace nnp::core::onnx {

int32_t onnx_elem_type(nnp_dtype dtype) {
  using T = ::onnx::TensorProto;
  switch (dtype) {
    case NNP_F32: return T::FLOAT;
    case NNP_F64: return T::DOUBLE;
    case NNP_F16: return T::FLOAT16;
    case NNP_BF16: return T::BFLOAT16;
    case NNP_I64: return T::INT64;
    case NNP_I32: return T::INT32;
    case NNP_U8: return T::UINT8;
    case NNP_BOOL: return T::BOOL;
    case NNP_I8: return T::INT8;
    case NNP_I16: return T::INT16;
    case NNP_U16: return T::UINT16;
    case NNP_U32: return T::UINT32;
    case NNP_U64: return T::UINT64;
    default: fail(NNP_DTYPE_MISMATCH, "onnx export: dtype ", dtype, " has no ONNX element type");
  }
}

namespace {
::onnx::AttributeProto& new_attr(::onnx::NodeProto& node, const std::string& name,
                                 ::onnx::AttributeProto_AttributeType type) {
  ::onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(type);
  return a;
}
}  // namespace

void set_attr(::onnx::NodeProto& node, const std::string& name, int64_t value) {
  new_attr(node, name, ::onnx::AttributeProto::INT).set_i(value);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, float value) {
  new_attr(node, name, ::onnx::AttributeProto::FLOAT).set_f(value);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::string& value) {
  new_attr(node, name, ::onnx::AttributeProto::STRING).set_s(value);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  ::onnx::AttributeProto& a = new_attr(node, name, ::onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}
void set_attr(::onnx::NodeProto& node, const std::string& name, const std::vector<float>& values) {
  ::onnx::AttributeProto& a = new_attr(node, name, ::onnx::AttributeProto::FLOATS);
  for (float v : values) a.add_floats(v);
}

}  // namespace nnp::core::onnx

using nnp::core::fail;
using nnp::core::onnx::TracedValue;

std::string nnp_onnx_graph::fresh(const std::string& hint) {
  const std::string base = hint.empty() ? "v" : hint;
  std::string name = base;
  for (int64_t i = 1; names_.count(name); ++i) name = base + "_" + std::to_string(i);
  names_.insert(name);
  return name;
}

TracedValue nnp_onnx_graph::value(const Tensor& t) {
  auto traced = values.find(&t);
  if (traced != values.end()) return traced->second;
  auto key = state.find(&t);
  if (key != state.end()) {
    if (!initialised.count(key->second)) {
      names_.insert(key->second);
      write_initializer(t, key->second);
      initialised.insert(key->second);
    }
    return {key->second, -1};
  }
  // A tensor made inside forward (a scalar, a mask): its traced contents.
  for (int32_t i = 0; i < t.shape.ndim; ++i)
    if (batch > 1 && t.shape[i] == batch)
      lose_batch("a constant of shape " + nnp::core::format_dims(t.shape) +
                 " made during forward has the batch size in it");
  auto hint = constant_hints.find(&t);
  std::string name = constant(t, hint == constant_hints.end() ? "const" : hint->second);
  bind(t, name, -1);
  return {name, -1};
}

void nnp_onnx_graph::bind(const Tensor& t, const std::string& name, int32_t batch_axis, int64_t batch_lead) {
  auto it = values.find(&t);
  if (it == values.end()) {
    keep.push_back(nnp::core::TensorRef::share(&t));
    if (keep.size() % 16 == 0) drop_unreachable_data();
  }
  values[&t] = TracedValue{name, batch_axis, batch_axis >= 0 ? batch_lead : 1};
}

// A traced value that only the trace still holds can never be read again
// (no one else can hand it to an op): the trace needs its address alone, to
// keep it from being reused for another value. Its data goes (the tensor
// keeps an empty block of the same backend), where holding it made a trace
// hold every intermediate of the model at once: an int8 U-Net at 1024x1024
// met the OOM killer at 24 GB while nnp::compile traced it. Checked every
// 16 values bound: linear in the trace's values over the whole trace.
void nnp_onnx_graph::drop_unreachable_data() {
  for (nnp::core::TensorRef& kept : keep) {
    Tensor* t = kept.get();
    nnp::core::Storage* old = t->storage;
    if (t->refs.load(std::memory_order_acquire) != 1 || t->is_view || t->view_base || !old || old->bytes == 0 ||
        old->release_external)
      continue;
    nnp::core::Storage* empty = nnp::core::ObjectPool<nnp::core::Storage>::create();
    empty->backend = old->backend;
    empty->device = old->device;
    t->storage = empty;
    nnp::core::release(old);
  }
}

::onnx::NodeProto& nnp_onnx_graph::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& outputs, const std::string& domain) {
  ::onnx::NodeProto& n = *graph->add_node();
  const std::string prefix = domain.empty() ? op_type : domain + "." + op_type;
  n.set_name(prefix + "_" + std::to_string(node_counts_[prefix]++));
  n.set_op_type(op_type);
  if (tagging_op) n.set_doc_string(tagging_op);
  if (!domain.empty()) {
    n.set_domain(domain);
    custom_domains.insert(domain);
  }
  for (const std::string& i : inputs) n.add_input(i);
  for (const std::string& o : outputs) {
    names_.insert(o);
    n.add_output(o);
  }
  return n;
}

std::string nnp_onnx_graph::node1(const std::string& op_type, const std::vector<std::string>& inputs,
                                  const std::string& hint) {
  std::string out = fresh(hint.empty() ? op_type : hint);
  node(op_type, inputs, {out});
  return out;
}

void nnp_onnx_graph::write_initializer(const Tensor& t, const std::string& name) {
  nnp::core::TensorRef dense = nnp::core::contiguous(t);
  ::onnx::TensorProto& init = *graph->add_initializer();
  init.set_name(name);
  init.set_data_type(nnp::core::onnx::onnx_elem_type(t.dtype));
  for (int32_t i = 0; i < t.shape.ndim; ++i) init.add_dims(t.shape[i]);
  const size_t bytes = nnp::core::checked_bytes("onnx export", t.shape, nnp::core::dtype_size(t.dtype));
  std::string raw(bytes, '\0');
  if (bytes) nnp::core::copy_to_host(*dense, raw.data(), bytes);
  init.set_raw_data(std::move(raw));
}

std::string nnp_onnx_graph::constant(const Tensor& t, const std::string& hint) {
  std::string name = fresh(hint);
  write_initializer(t, name);
  return name;
}

std::string nnp_onnx_graph::int64s(const std::vector<int64_t>& list, const std::string& hint) {
  std::string name = fresh(hint);
  ::onnx::TensorProto& init = *graph->add_initializer();
  init.set_name(name);
  init.set_data_type(::onnx::TensorProto::INT64);
  init.add_dims(static_cast<int64_t>(list.size()));
  for (int64_t v : list) init.add_int64_data(v);
  return name;
}

std::string nnp_onnx_graph::scalar(double v, nnp_dtype dtype, const std::string& hint) {
  std::string name = fresh(hint);
  ::onnx::TensorProto& init = *graph->add_initializer();
  init.set_name(name);
  init.set_data_type(nnp::core::onnx::onnx_elem_type(dtype));
  switch (dtype) {
    case NNP_F32: init.add_float_data(static_cast<float>(v)); break;
    case NNP_F64: init.add_double_data(v); break;
    case NNP_I64: init.add_int64_data(static_cast<int64_t>(v)); break;
    case NNP_I32:
    case NNP_BOOL:
    case NNP_U8:
    case NNP_I8:
    case NNP_I16:
    case NNP_U16: init.add_int32_data(static_cast<int32_t>(v)); break;
    case NNP_U32:
    case NNP_U64: init.add_uint64_data(static_cast<uint64_t>(v)); break;
    default: fail(NNP_DTYPE_MISMATCH, "onnx export: no scalar constant of dtype ", dtype);
  }
  return name;
}

void nnp_onnx_graph::lose_batch(const std::string& why) {
  if (batch >= 0 && batch_lost.empty()) batch_lost = why;
}
