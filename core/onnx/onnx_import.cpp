#include "onnx_import.hpp"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_set>
#include <vector>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../io/regular_file.hpp"
#include "../nn/attrs.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "../ops.hpp"
#include "../plugin_registry.hpp"
#include "../shape.hpp"
#include "graph_ops.hpp"
#include "graph_program.hpp"
#include "lowering.hpp"
#include "node_order.hpp"
#include "version_upgrade.hpp"

namespace nnp::core::onnx {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
constexpr uint64_t kMaxModelBytes = (uint64_t{1} << 31) - 1;  // protobuf's limit
constexpr int64_t kInlineConstant = 64;                       // elements of a constant kept in the program

// A tensor read out of the file (an initialiser or a Constant's value).
struct HostTensor {
  Dims shape;
  nnp_dtype dtype = NNP_F32;
  std::string bytes;  // numel * itemsize, little-endian
};

nnp_dtype dtype_of(int32_t elem_type, const std::string& what) {
  using T = ::onnx::TensorProto;
  switch (elem_type) {
    case T::FLOAT: return NNP_F32;
    case T::DOUBLE: return NNP_F64;
    case T::FLOAT16: return NNP_F16;
    case T::BFLOAT16: return NNP_BF16;
    case T::INT64: return NNP_I64;
    case T::INT32: return NNP_I32;
    case T::UINT8: return NNP_U8;
    case T::INT8: return NNP_I8;
    case T::BOOL: return NNP_BOOL;
    case T::INT16: return NNP_I16;
    case T::UINT16: return NNP_U16;
    case T::UINT32: return NNP_U32;
    case T::UINT64: return NNP_U64;
    default: fail(NNP_UNIMPLEMENTED, what, ": element type ", elem_type, " has no nnplug dtype");
  }
}

// A TensorProto's typed field as the dtype's bytes (bytes is sized already).
template <typename Stored, typename Field>
void store_values(const Field& field, std::string& bytes) {
  for (int i = 0; i < field.size(); ++i) {
    const Stored v = static_cast<Stored>(field.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(Stored), &v, sizeof(Stored));
  }
}

// The value of a one-element tensor, read on the host.
double only_value(const HostTensor& t, const std::string& what) {
  auto read = [&](auto v) {
    std::memcpy(&v, t.bytes.data(), sizeof v);
    return static_cast<double>(v);
  };
  switch (t.dtype) {
    case NNP_F32: return read(float{});
    case NNP_F64: return read(double{});
    case NNP_I64: return read(int64_t{});
    case NNP_I32: return read(int32_t{});
    case NNP_I8: return read(int8_t{});
    case NNP_I16: return read(int16_t{});
    case NNP_U16: return read(uint16_t{});
    case NNP_U32: return read(uint32_t{});
    case NNP_U64: return read(uint64_t{});
    case NNP_U8:
    case NNP_BOOL: return read(uint8_t{});
    default: fail(NNP_UNIMPLEMENTED, what, ": a 16-bit floating constant value is not supported");
  }
}

// A sorted model as onnx::checker can check it from memory: its checks of
// external data look in the working directory there, so initialisers
// stored outside the file (already checked by check_external_data) are
// graph inputs of their type and shape in the copy.
::onnx::ModelProto checkable(const ::onnx::ModelProto& model) {
  ::onnx::ModelProto copy = model;
  ::onnx::GraphProto& g = *copy.mutable_graph();
  std::unordered_set<std::string> inputs;
  for (const ::onnx::ValueInfoProto& v : g.input()) inputs.insert(v.name());
  google::protobuf::RepeatedPtrField<::onnx::TensorProto> kept;
  for (::onnx::TensorProto& t : *g.mutable_initializer()) {
    if (t.data_location() != ::onnx::TensorProto::EXTERNAL) {
      kept.Add()->Swap(&t);
      continue;
    }
    if (!inputs.insert(t.name()).second) continue;
    ::onnx::ValueInfoProto& v = *g.add_input();
    v.set_name(t.name());
    auto* type = v.mutable_type()->mutable_tensor_type();
    type->set_elem_type(t.data_type());
    for (int64_t d : t.dims()) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  g.mutable_initializer()->Swap(&kept);
  return copy;
}

class Importer {
 public:
  explicit Importer(std::string path) : path_(std::move(path)) {}
  ModuleRef run();

 private:
  std::string path_;
  ::onnx::ModelProto model_;
  void parse_file();
  std::map<std::string, const ::onnx::TensorProto*> initializers_;
  std::set<std::string> absorbed_;      // initialisers a layer took over
  std::map<std::string, int> readers_;  // how many node inputs read each value
  json program_ = {{"inputs", json::array()},
                   {"outputs", json::array()},
                   {"tensors", json::array()},
                   {"layers", json::array()},
                   {"nodes", json::array()}};
  std::set<std::string> keys_;                                    // state-dict names taken (tensors and layers)
  std::map<std::string, HostTensor> tensor_values_;               // tensor key -> contents
  std::vector<std::pair<std::string, HostTensor>> layer_values_;  // "child.weight" -> contents
  int64_t fresh_ = 0;
  int64_t original_opset_ = 0;        // the file's, before the version converter
  bool opset8_scan_lengths_ = false;  // an opset 8 Scan gives sequence_lens

  [[noreturn]] void corrupt(const std::string& what) const { fail(NNP_CORRUPT_DATA, "onnx load ", path_, ": ", what); }
  std::string node_name(const ::onnx::NodeProto& n) const {
    return "node '" + (n.name().empty() ? n.output_size() ? n.output(0) : std::string("?") : n.name()) + "' (" +
           (n.domain().empty() ? "" : n.domain() + ".") + n.op_type() + ")";
  }
  HostTensor read_tensor(const ::onnx::TensorProto& t, const std::string& what) const;
  std::string external_bytes(const ::onnx::TensorProto& t, const std::string& what, uint64_t bytes) const;
  std::string unique_key(const std::string& wanted);
  std::string fresh_value(const std::string& hint) { return "nnp_" + hint + "_" + std::to_string(fresh_++); }
  void add_tensor(const std::string& value, HostTensor contents, bool parameter);
  // Input i of n when it is an initialiser no other node reads (a layer may
  // take it over), else NULL.
  const ::onnx::TensorProto* initializer(const ::onnx::NodeProto& n, int i) const {
    if (i >= n.input_size() || n.input(i).empty()) return nullptr;
    auto it = initializers_.find(n.input(i));
    if (it == initializers_.end() || readers_.at(n.input(i)) != 1) return nullptr;
    return it->second;
  }
  void check_external_data() const;
  void check_graph_outputs(const ::onnx::GraphProto& g, std::vector<const std::unordered_set<std::string>*>& outer,
                           size_t depth) const;
  void upgrade_opset();
  void inline_initializer_identities();
  std::filesystem::path external_file(const std::string& location, const std::string& what) const;
  json attributes(const ::onnx::NodeProto& n) const;
  json op_node(const ::onnx::NodeProto& n, size_t depth);
  json subgraph(const ::onnx::GraphProto& g, size_t depth);
  void count_readers(const ::onnx::GraphProto& g);
  HostTensor constant_value(const ::onnx::NodeProto& n) const;
  void add_layer_node(const std::string& layer, const std::vector<std::string>& inputs,
                      const std::vector<std::string>& outputs) {
    program_["nodes"].push_back({{"layer", layer}, {"inputs", inputs}, {"outputs", outputs}});
  }
  std::string add_layer(const std::string& wanted, const std::string& type, json attrs);
  bool try_conv(const ::onnx::NodeProto& n);
  bool try_conv_transpose(const ::onnx::NodeProto& n);
  // The layer's node, with initialisers 1 (weight) and 2 (bias, optional) as its tensors.
  void add_weighted_layer_node(const std::string& layer, const ::onnx::NodeProto& n, const ::onnx::TensorProto& w,
                               const ::onnx::TensorProto* b);
  bool try_gemm(const ::onnx::NodeProto& n);
  bool try_pool(const ::onnx::NodeProto& n);
  bool try_lstm(const ::onnx::NodeProto& n);
  void expect_lstm_shape(const ::onnx::NodeProto& n, const ::onnx::TensorProto& t, const char* what,
                         const std::vector<int64_t>& want) const;
  void add_vendor_layer(const ::onnx::NodeProto& n);
};

HostTensor Importer::read_tensor(const ::onnx::TensorProto& t, const std::string& what) const {
  HostTensor out;
  out.dtype = dtype_of(t.data_type(), what);
  if (t.dims_size() > NNP_MAX_DIMS) corrupt(what + " has more than " + std::to_string(NNP_MAX_DIMS) + " dimensions");
  out.shape.ndim = t.dims_size();
  for (int i = 0; i < t.dims_size(); ++i) {
    if (t.dims(i) < 0) corrupt(what + " has a negative dimension");
    out.shape.d[i] = t.dims(i);
  }
  int64_t numel = 0;
  if (!sizes_fit(out.shape.d, out.shape.ndim, &numel)) corrupt(what + " is too large");
  const size_t item = dtype_size(out.dtype);
  if (static_cast<uint64_t>(numel) > kMaxModelBytes * 8 / item) corrupt(what + " is too large");
  const uint64_t bytes = static_cast<uint64_t>(numel) * item;
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL) {
    out.bytes = external_bytes(t, what, bytes);
    return out;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      corrupt(what + " holds " + std::to_string(t.raw_data().size()) + " bytes of data for " + std::to_string(bytes));
    out.bytes = t.raw_data();
    return out;
  }
  const int count = out.dtype == NNP_F32   ? t.float_data_size()
                    : out.dtype == NNP_F64 ? t.double_data_size()
                    : out.dtype == NNP_I64 ? t.int64_data_size()
                    : out.dtype == NNP_U32 || out.dtype == NNP_U64
                        ? t.uint64_data_size()
                        : t.int32_data_size();  // int32, 16-bit values (floats' bits too), 8-bit and bool
  if (count != numel)
    corrupt(what + " holds " + std::to_string(count) + " values for " + std::to_string(numel) + " elements");
  out.bytes.resize(bytes);
  switch (out.dtype) {
    case NNP_F32: store_values<float>(t.float_data(), out.bytes); break;
    case NNP_F64: store_values<double>(t.double_data(), out.bytes); break;
    case NNP_I64: store_values<int64_t>(t.int64_data(), out.bytes); break;
    case NNP_I32: store_values<int32_t>(t.int32_data(), out.bytes); break;
    case NNP_F16:
    case NNP_BF16:
    case NNP_U16: store_values<uint16_t>(t.int32_data(), out.bytes); break;
    case NNP_I16: store_values<int16_t>(t.int32_data(), out.bytes); break;
    case NNP_U32: store_values<uint32_t>(t.uint64_data(), out.bytes); break;
    case NNP_U64: store_values<uint64_t>(t.uint64_data(), out.bytes); break;
    default: store_values<uint8_t>(t.int32_data(), out.bytes);
  }
  return out;
}

// External data lives beside the model: a relative path that stays inside
// the model's folder once resolved (no "..", no absolute path, no symlink
// leading out), read only where the file has those bytes.
fs::path Importer::external_file(const std::string& location, const std::string& what) const {
  const fs::path folder = fs::weakly_canonical(fs::absolute(fs::path(path_)).parent_path());
  const fs::path relative(location);
  const fs::path file = fs::weakly_canonical(folder / relative);
  auto [end, ignored] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
  if (relative.is_absolute() || end != folder.end())
    fail(NNP_INVALID_ARGUMENT, "onnx load ", path_, ": ", what, "'s external data '", location,
         "' lies outside the model's folder ", folder.string(), "; only files beside the model are read");
  return file;
}

std::string Importer::external_bytes(const ::onnx::TensorProto& t, const std::string& what, uint64_t bytes) const {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  for (const ::onnx::StringStringEntryProto& e : t.external_data()) {
    auto number = [&](const std::string& text) {
      if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
        corrupt(what + ": external data " + e.key() + " '" + text + "' is not a number");
      return std::stoull(text);
    };
    if (e.key() == "location") location = e.value();
    if (e.key() == "offset") offset = number(e.value());
    if (e.key() == "length") length = static_cast<int64_t>(number(e.value()));
  }
  if (location.empty()) corrupt(what + " is stored externally but names no location");
  const fs::path file = external_file(location, what);
  if (length >= 0 && static_cast<uint64_t>(length) != bytes)
    corrupt(what + "'s external data is " + std::to_string(length) + " bytes for " + std::to_string(bytes));
  io::RegularFile data(file.string(), "onnx external data");
  if (offset > data.size() || bytes > data.size() - offset)
    corrupt(what + "'s external data needs bytes " + std::to_string(offset) + " to " + std::to_string(offset + bytes) +
            " of " + file.string() + ", which has " + std::to_string(data.size()));
  std::string out(bytes, '\0');
  data.read_at(offset, out.data(), bytes);
  return out;
}

// Opsets before 13 are brought to 13 by ONNX's own version converter (in a
// child process: version_upgrade.hpp), so
// the ops run one meaning of each operator (Softmax's axis, Split's and the
// reductions' axes as inputs, Upsample as Resize, broadcasting attributes
// gone). Where the converter has no adapter for a node, a model of opset 9
// or later is read as it is (the ops read both forms where they differ);
// an older one is refused with the converter's reason.
void Importer::upgrade_opset() {
  constexpr int64_t kUnified = 13, kNewest = 20, kOldestDirect = 9;
  int64_t opset = 0;
  for (const ::onnx::OperatorSetIdProto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset > kNewest)
    fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": opset ", opset, " is not read; nnplug reads opsets 1 to ", kNewest);
  original_opset_ = opset;
  for (const ::onnx::NodeProto& n : model_.graph().node())
    if (n.op_type() == "Scan" && opset < 9 && n.input_size() > 0 && !n.input(0).empty()) opset8_scan_lengths_ = true;
  if (opset == 0 || opset >= kUnified) return;
  UpgradeResult upgraded = upgrade_in_child(model_, static_cast<int>(kUnified), path_);
  if (upgraded.converted) {
    model_ = std::move(upgraded.model);
  } else if (opset < kOldestDirect) {
    fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": opset ", opset, " is read through ONNX's version converter, ",
         "which cannot bring this model to opset ", kUnified, ": ", upgraded.why);
  }
}

// PyTorch's exporter writes one initializer for several equal ones (the
// biases of folded batch norms, often) and an Identity node for each other
// use. A Conv or Gemm whose weight or bias comes through such a node would
// not become a layer (its operand is then computed, not a weight) and would
// run as the generic op: each Identity of an initializer becomes an
// initializer of its own, as the file had it before the export merged them.
void Importer::inline_initializer_identities() {
  ::onnx::GraphProto& g = *model_.mutable_graph();
  std::unordered_map<std::string, int> by_name;
  for (int i = 0; i < g.initializer_size(); ++i) by_name.emplace(g.initializer(i).name(), i);
  std::unordered_set<std::string> outputs;
  for (const ::onnx::ValueInfoProto& v : g.output()) outputs.insert(v.name());
  google::protobuf::RepeatedPtrField<::onnx::NodeProto> kept;
  for (::onnx::NodeProto& n : *g.mutable_node()) {
    const auto source = n.op_type() == "Identity" && n.domain().empty() && n.input_size() == 1 && n.output_size() == 1
                            ? by_name.find(n.input(0))
                            : by_name.end();
    if (source == by_name.end() || outputs.count(n.output(0)) || by_name.count(n.output(0))) {
      kept.Add()->Swap(&n);
      continue;
    }
    ::onnx::TensorProto copy = g.initializer(source->second);
    copy.set_name(n.output(0));
    by_name.emplace(copy.name(), g.initializer_size());
    *g.add_initializer() = std::move(copy);
  }
  g.mutable_node()->Swap(&kept);
}

// onnx::checker leaves a graph output that names no value unchecked, and
// ONNX's version converter dereferences the value it does not find: every
// output of every graph must be one of its inputs, initialisers or node
// outputs, or (in a subgraph) a value of an enclosing graph.
void Importer::check_graph_outputs(const ::onnx::GraphProto& g,
                                   std::vector<const std::unordered_set<std::string>*>& outer, size_t depth) const {
  if (depth > kMaxGraphNesting) corrupt("subgraphs nest deeper than " + std::to_string(kMaxGraphNesting) + " levels");
  std::unordered_set<std::string> defined;
  for (const ::onnx::ValueInfoProto& v : g.input()) defined.insert(v.name());
  for (const ::onnx::TensorProto& t : g.initializer()) defined.insert(t.name());
  for (const ::onnx::NodeProto& n : g.node()) defined.insert(n.output().begin(), n.output().end());
  defined.erase("");  // an empty name is an absent optional value, never an output
  outer.push_back(&defined);
  for (const ::onnx::NodeProto& n : g.node())
    for (const ::onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) check_graph_outputs(a.g(), outer, depth + 1);
      for (const ::onnx::GraphProto& each : a.graphs()) check_graph_outputs(each, outer, depth + 1);
    }
  outer.pop_back();
  for (const ::onnx::ValueInfoProto& v : g.output()) {
    const bool seen = defined.count(v.name()) || std::any_of(outer.begin(), outer.end(),
                                                             [&](const auto* scope) { return scope->count(v.name()); });
    if (!seen)
      corrupt((depth ? "an output of subgraph '" + g.name() + "'" : std::string("graph output")) + " '" + v.name() +
              "' is no input, initialiser or node output" + (depth ? " of it or an enclosing graph" : "") +
              " (every output must name a value the graph computes)");
  }
}

void Importer::check_external_data() const {
  for (const ::onnx::TensorProto& t : model_.graph().initializer()) {
    if (t.data_location() != ::onnx::TensorProto::EXTERNAL) continue;
    for (const ::onnx::StringStringEntryProto& e : t.external_data())
      if (e.key() == "location") external_file(e.value(), "initialiser '" + t.name() + "'");
  }
}

std::string Importer::unique_key(const std::string& wanted) {
  std::string key;
  for (char c : wanted) key += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (key.empty()) key = "t";
  std::string candidate = key;
  for (int i = 1; keys_.count(candidate); ++i) candidate = key + "_" + std::to_string(i);
  keys_.insert(candidate);
  return candidate;
}

void Importer::add_tensor(const std::string& value, HostTensor contents, bool parameter) {
  const std::string key = unique_key(value);
  json shape = json::array();
  for (int32_t i = 0; i < contents.shape.ndim; ++i) shape.push_back(contents.shape[i]);
  const bool trainable = parameter && (contents.dtype == NNP_F32 || contents.dtype == NNP_F64);
  json entry = {{"key", key},
                {"value", value},
                {"shape", shape},
                {"dtype", dtype_name(contents.dtype)},
                {"parameter", trainable}};
  // Small constants (shapes, axes, scalars) are part of the program: a spec
  // without its weights file must still compute the right shapes.
  const int64_t numel = contents.shape.numel();
  if (!trainable && numel <= kInlineConstant && contents.dtype != NNP_F16 && contents.dtype != NNP_BF16) {
    json data = json::array();
    HostTensor one = contents;
    one.shape = Dims{};
    for (int64_t i = 0; i < numel; ++i) {
      const size_t item = dtype_size(contents.dtype);
      one.bytes = contents.bytes.substr(static_cast<size_t>(i) * item, item);
      if (contents.dtype == NNP_I64) {
        int64_t v = 0;
        std::memcpy(&v, one.bytes.data(), 8);
        data.push_back(v);  // exactly, INT64_MAX (Slice's "to the end") included
      } else if (contents.dtype == NNP_F32 || contents.dtype == NNP_F64) {
        data.push_back(only_value(one, "constant " + value));
      } else {
        data.push_back(static_cast<int64_t>(only_value(one, "constant " + value)));
      }
    }
    entry["data"] = std::move(data);
  }
  program_["tensors"].push_back(std::move(entry));
  tensor_values_[key] = std::move(contents);
}

json Importer::attributes(const ::onnx::NodeProto& n) const {
  json out = json::object();
  for (const ::onnx::AttributeProto& a : n.attribute()) {
    switch (a.type()) {
      case ::onnx::AttributeProto::INT: out[a.name()] = a.i(); break;
      case ::onnx::AttributeProto::FLOAT: out[a.name()] = a.f(); break;
      case ::onnx::AttributeProto::STRING: out[a.name()] = a.s(); break;
      case ::onnx::AttributeProto::INTS: out[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end()); break;
      case ::onnx::AttributeProto::FLOATS:
        out[a.name()] = std::vector<float>(a.floats().begin(), a.floats().end());
        break;
      case ::onnx::AttributeProto::STRINGS: {  // one string, joined by ',' (RNN's activations)
        std::string joined;
        for (const std::string& v : a.strings()) joined += (joined.empty() ? "" : ",") + v;
        out[a.name()] = joined;
        break;
      }
      case ::onnx::AttributeProto::TENSOR: {  // ConstantOfShape's value: one element
        HostTensor t = read_tensor(a.t(), node_name(n) + "'s " + a.name());
        if (t.shape.numel() != 1)
          fail(NNP_UNIMPLEMENTED, node_name(n), ": tensor attribute ", a.name(), " is not one value");
        out[a.name()] = {{"elem_type", a.t().data_type()}, {"data", {only_value(t, node_name(n))}}};
        break;
      }
      case ::onnx::AttributeProto::GRAPH:  // If's, Loop's and Scan's subgraphs: op_node reads them
        if (!is_control_op(n.op_type()))
          fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), " has subgraph '", a.name(),
               "'; nnplug runs the subgraphs of If, Loop and Scan");
        break;
      default:
        fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), " has attribute '", a.name(),
             "' of a kind nnplug does not run (sparse tensors, lists of tensors or graphs, type protos)");
    }
  }
  return out;
}

std::string Importer::add_layer(const std::string& wanted, const std::string& type, json attrs) {
  const std::string name = unique_key(wanted);
  program_["layers"].push_back({{"name", name}, {"type", type}, {"attrs", std::move(attrs)}});
  return name;
}

bool has_attr(const ::onnx::NodeProto& n, const char* name) {
  return std::any_of(n.attribute().begin(), n.attribute().end(),
                     [&](const ::onnx::AttributeProto& a) { return a.name() == name; });
}
std::vector<int64_t> ints_attr(const ::onnx::NodeProto& n, const char* name, std::vector<int64_t> fallback) {
  for (const ::onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return fallback;
}
int64_t int_attr(const ::onnx::NodeProto& n, const char* name, int64_t fallback) {
  for (const ::onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}
float float_attr(const ::onnx::NodeProto& n, const char* name, float fallback) {
  for (const ::onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return a.f();
  return fallback;
}
std::string string_attr(const ::onnx::NodeProto& n, const char* name, const std::string& fallback) {
  for (const ::onnx::AttributeProto& a : n.attribute())
    if (a.name() == name) return a.s();
  return fallback;
}
// The begin half of symmetric ONNX pads, or empty when they are not symmetric.
std::vector<int64_t> symmetric_pads(const ::onnx::NodeProto& n, size_t d) {
  std::vector<int64_t> pads = ints_attr(n, "pads", std::vector<int64_t>(2 * d, 0));
  if (pads.size() != 2 * d ||
      !std::equal(pads.begin(), pads.begin() + static_cast<long>(d), pads.begin() + static_cast<long>(d)))
    return {};
  return std::vector<int64_t>(pads.begin(), pads.begin() + static_cast<long>(d));
}
// A layer name from the weight's name: "features.0.weight" -> "features_0".
std::string layer_name_from(const std::string& weight, const std::string& fallback) {
  const std::string suffix = ".weight";
  if (weight.size() > suffix.size() && weight.compare(weight.size() - suffix.size(), suffix.size(), suffix) == 0)
    return weight.substr(0, weight.size() - suffix.size());
  return fallback;
}

void Importer::add_weighted_layer_node(const std::string& layer, const ::onnx::NodeProto& n,
                                       const ::onnx::TensorProto& w, const ::onnx::TensorProto* b) {
  layer_values_.emplace_back(layer + ".weight", read_tensor(w, n.input(1)));
  absorbed_.insert(n.input(1));
  if (b) {
    layer_values_.emplace_back(layer + ".bias", read_tensor(*b, n.input(2)));
    absorbed_.insert(n.input(2));
  }
  add_layer_node(layer, {n.input(0)}, {n.output(0)});
}

bool Importer::try_conv(const ::onnx::NodeProto& n) {
  const ::onnx::TensorProto* w = initializer(n, 1);
  const ::onnx::TensorProto* b = n.input_size() > 2 && !n.input(2).empty() ? initializer(n, 2) : nullptr;
  if (!w || w->dims_size() < 3 || w->dims_size() > 5 || (n.input_size() > 2 && !n.input(2).empty() && !b)) return false;
  const size_t d = static_cast<size_t>(w->dims_size() - 2);
  const std::string auto_pad = string_attr(n, "auto_pad", "NOTSET");
  std::vector<int64_t> pads = symmetric_pads(n, d);
  if ((auto_pad != "NOTSET" && auto_pad != "VALID") || pads.empty()) return false;
  const int64_t group = int_attr(n, "group", 1);
  std::vector<int64_t> kernel(w->dims().begin() + 2, w->dims().end());
  json attrs = {{"in_channels", w->dims(1) * group},
                {"out_channels", w->dims(0)},
                {"kernel_size", kernel},
                {"stride", ints_attr(n, "strides", std::vector<int64_t>(d, 1))},
                {"padding", auto_pad == "VALID" ? std::vector<int64_t>(d, 0) : pads},
                {"dilation", ints_attr(n, "dilations", std::vector<int64_t>(d, 1))},
                {"groups", group},
                {"bias", b != nullptr}};
  const std::string layer = add_layer(layer_name_from(n.input(1), "conv"), "nn.Conv" + std::to_string(d) + "d", attrs);
  add_weighted_layer_node(layer, n, *w, b);
  return true;
}

// ConvTranspose: the weight's layout is PyTorch's ([in, out/groups, k...]).
bool Importer::try_conv_transpose(const ::onnx::NodeProto& n) {
  const ::onnx::TensorProto* w = initializer(n, 1);
  const ::onnx::TensorProto* b = n.input_size() > 2 && !n.input(2).empty() ? initializer(n, 2) : nullptr;
  if (!w || w->dims_size() < 3 || w->dims_size() > 5 || (n.input_size() > 2 && !n.input(2).empty() && !b)) return false;
  const size_t d = static_cast<size_t>(w->dims_size() - 2);
  std::vector<int64_t> pads = symmetric_pads(n, d);
  if (string_attr(n, "auto_pad", "NOTSET") != "NOTSET" || pads.empty() || has_attr(n, "output_shape")) return false;
  const int64_t group = int_attr(n, "group", 1);
  json attrs = {{"in_channels", w->dims(0)},
                {"out_channels", w->dims(1) * group},
                {"kernel_size", std::vector<int64_t>(w->dims().begin() + 2, w->dims().end())},
                {"stride", ints_attr(n, "strides", std::vector<int64_t>(d, 1))},
                {"padding", pads},
                {"output_padding", ints_attr(n, "output_padding", std::vector<int64_t>(d, 0))},
                {"dilation", ints_attr(n, "dilations", std::vector<int64_t>(d, 1))},
                {"groups", group},
                {"bias", b != nullptr}};
  const std::string layer =
      add_layer(layer_name_from(n.input(1), "conv_transpose"), "nn.ConvTranspose" + std::to_string(d) + "d", attrs);
  add_weighted_layer_node(layer, n, *w, b);
  return true;
}

bool Importer::try_gemm(const ::onnx::NodeProto& n) {
  const ::onnx::TensorProto* w = initializer(n, 1);
  const ::onnx::TensorProto* b = initializer(n, 2);
  const bool has_c = n.input_size() > 2 && !n.input(2).empty();
  if (!w || w->dims_size() != 2 || int_attr(n, "transB", 0) != 1 || int_attr(n, "transA", 0) != 0 ||
      float_attr(n, "alpha", 1) != 1 || float_attr(n, "beta", 1) != 1 ||
      (has_c && (!b || b->dims_size() != 1 || b->dims(0) != w->dims(0))))
    return false;
  const std::string layer = add_layer(layer_name_from(n.input(1), "linear"), "nn.Linear",
                                      {{"in_features", w->dims(1)}, {"out_features", w->dims(0)}, {"bias", has_c}});
  add_weighted_layer_node(layer, n, *w, has_c ? b : nullptr);
  return true;
}

bool Importer::try_pool(const ::onnx::NodeProto& n) {
  const bool max = n.op_type() == "MaxPool";
  std::vector<int64_t> kernel = ints_attr(n, "kernel_shape", {});
  const size_t d = kernel.size();
  std::vector<int64_t> pads = symmetric_pads(n, d);
  if (d < 1 || d > 3 || pads.empty() || string_attr(n, "auto_pad", "NOTSET") != "NOTSET" || n.output_size() != 1 ||
      int_attr(n, "storage_order", 0) != 0)
    return false;
  // ONNX counts the part of a ceil_mode window past the padding when
  // count_include_pad is set; nn.AvgPool never does.
  const bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (!max && int_attr(n, "ceil_mode", 0) != 0 && int_attr(n, "count_include_pad", 0) != 0 && padded) return false;
  // nn.MaxPool and nn.AvgPool take at most half a window of padding; the
  // graph op pads first and takes any.
  const std::vector<int64_t> dilations = ints_attr(n, "dilations", std::vector<int64_t>(d, 1));
  for (size_t i = 0; i < d && i < dilations.size(); ++i)
    if (2 * pads[i] > (kernel[i] - 1) * dilations[i] + 1) return false;
  json attrs = {{"kernel_size", kernel},
                {"stride", ints_attr(n, "strides", std::vector<int64_t>(d, 1))},
                {"padding", pads},
                {"ceil_mode", int_attr(n, "ceil_mode", 0) != 0}};
  if (max)
    attrs["dilation"] = ints_attr(n, "dilations", std::vector<int64_t>(d, 1));
  else
    attrs["count_include_pad"] = int_attr(n, "count_include_pad", 0) != 0;
  const std::string type = std::string(max ? "nn.MaxPool" : "nn.AvgPool") + std::to_string(d) + "d";
  add_layer_node(add_layer(max ? "maxpool" : "avgpool", type, attrs), {n.input(0)}, {n.output(0)});
  return true;
}

// An LSTM input's dims must be `want`.
void Importer::expect_lstm_shape(const ::onnx::NodeProto& n, const ::onnx::TensorProto& t, const char* what,
                                 const std::vector<int64_t>& want) const {
  const std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  if (dims != want)
    corrupt(node_name(n) + ": " + what + " '" + t.name() + "' has shape " +
            (dims.size() <= 8 ? format_dims(dims.data(), static_cast<int32_t>(dims.size()))
                              : std::to_string(dims.size()) + " dimensions") +
            " where its hidden_size and direction need " + format_dims(want.data(), static_cast<int32_t>(want.size())));
}

// ONNX's gates are i, o, f, c; PyTorch's (and nnplug's) i, f, g, o.
HostTensor reorder_gates(const HostTensor& t, int64_t direction, int64_t hidden, int64_t offset_gates = 0) {
  // t: [directions, k * hidden, cols]; take 4 gate blocks starting at offset_gates.
  const int64_t cols = t.shape.ndim == 3 ? t.shape[2] : 1;
  const int64_t per_dir = t.shape[1] * cols;
  const size_t item = dtype_size(t.dtype);
  HostTensor out;
  out.dtype = t.dtype;
  out.shape.ndim = t.shape.ndim == 3 ? 2 : 1;
  out.shape.d[0] = 4 * hidden;
  if (t.shape.ndim == 3) out.shape.d[1] = cols;
  out.bytes.resize(static_cast<size_t>(4 * hidden * cols) * item);
  const size_t needed = static_cast<size_t>((direction + 1) * per_dir) * item;
  if (t.bytes.size() < needed || (offset_gates + 4) * hidden * cols > per_dir)
    fail(NNP_INTERNAL, "onnx load: an LSTM tensor of ", t.bytes.size(), " bytes is smaller than its gates");
  const int64_t order[4] = {0, 2, 3, 1};
  for (int64_t g = 0; g < 4; ++g)
    std::memcpy(
        out.bytes.data() + static_cast<size_t>(g * hidden * cols) * item,
        t.bytes.data() + static_cast<size_t>(direction * per_dir + (offset_gates + order[g]) * hidden * cols) * item,
        static_cast<size_t>(hidden * cols) * item);
  return out;
}

bool Importer::try_lstm(const ::onnx::NodeProto& n) {
  const ::onnx::TensorProto *w = initializer(n, 1), *r = initializer(n, 2), *b = initializer(n, 3);
  const std::string direction = string_attr(n, "direction", "forward");
  const bool has_b = n.input_size() > 3 && !n.input(3).empty();
  const bool has_lens = n.input_size() > 4 && !n.input(4).empty();
  const bool has_peephole = n.input_size() > 7 && !n.input(7).empty();
  for (const ::onnx::AttributeProto& a : n.attribute())
    if (a.name() == "activations" || a.name() == "clip" || (a.name() == "input_forget" && a.i() != 0) ||
        (a.name() == "layout" && a.i() != 0))
      return false;
  if (!w || !r || (has_b && !b) || has_lens || has_peephole || direction == "reverse" || w->dims_size() != 3)
    return false;
  const int64_t dirs = direction == "bidirectional" ? 2 : 1, hidden = int_attr(n, "hidden_size", 0);
  if (hidden <= 0 || w->dims(0) != dirs || w->dims(1) != 4 * hidden) return false;
  // The gates are copied out of R and B by these shapes: a file that says
  // otherwise is refused before a byte is read.
  expect_lstm_shape(n, *r, "R (the recurrent weights)", {dirs, 4 * hidden, hidden});
  if (has_b) expect_lstm_shape(n, *b, "B (the biases)", {dirs, 8 * hidden});
  const std::string layer = add_layer("lstm", "nn.LSTM",
                                      {{"input_size", w->dims(2)},
                                       {"hidden_size", hidden},
                                       {"num_layers", 1},
                                       {"bias", has_b},
                                       {"bidirectional", dirs == 2}});
  const HostTensor W = read_tensor(*w, n.input(1)), R = read_tensor(*r, n.input(2));
  HostTensor B;
  if (has_b) B = read_tensor(*b, n.input(3));
  for (int64_t d = 0; d < dirs; ++d) {
    const std::string suffix = std::string("_l0") + (d == 1 ? "_reverse" : "");
    layer_values_.emplace_back(layer + ".weight_ih" + suffix, reorder_gates(W, d, hidden));
    layer_values_.emplace_back(layer + ".weight_hh" + suffix, reorder_gates(R, d, hidden));
    if (has_b) {
      layer_values_.emplace_back(layer + ".bias_ih" + suffix, reorder_gates(B, d, hidden, 0));
      layer_values_.emplace_back(layer + ".bias_hh" + suffix, reorder_gates(B, d, hidden, 4));
    }
  }
  for (int i = 1; i <= 3; ++i) absorbed_.insert(i < n.input_size() ? n.input(i) : "");
  std::vector<std::string> inputs{n.input(0)};
  const bool has_h = n.input_size() > 5 && !n.input(5).empty(), has_c = n.input_size() > 6 && !n.input(6).empty();
  if (has_h != has_c) return false;
  if (has_h) inputs.insert(inputs.end(), {n.input(5), n.input(6)});
  auto output = [&](int i, const char* hint) {
    return i < n.output_size() && !n.output(i).empty() ? n.output(i) : fresh_value(hint);
  };
  const std::string y = fresh_value("lstm_y");
  add_layer_node(layer, inputs, {y, output(1, "lstm_h"), output(2, "lstm_c")});
  if (n.output_size() > 0 && !n.output(0).empty()) {
    // nnplug's [seq, batch, dirs * hidden] as ONNX's Y [seq, dirs, batch, hidden].
    const std::string shape = fresh_value("lstm_shape"), split = fresh_value("lstm_split");
    HostTensor s;
    s.dtype = NNP_I64;
    s.shape.ndim = 1;
    s.shape.d[0] = 4;
    const int64_t dims[4] = {0, 0, dirs, hidden};
    s.bytes.assign(reinterpret_cast<const char*>(dims), sizeof dims);
    add_tensor(shape, s, false);
    program_["nodes"].push_back(
        {{"op", "Reshape"}, {"inputs", {y, shape}}, {"outputs", {split}}, {"attrs", json::object()}});
    program_["nodes"].push_back(
        {{"op", "Transpose"}, {"inputs", {split}}, {"outputs", {n.output(0)}}, {"attrs", {{"perm", {0, 2, 1, 3}}}}});
  }
  return true;
}

void Importer::add_vendor_layer(const ::onnx::NodeProto& n) {
  const std::string type = n.domain() + "." + n.op_type();
  const nn::LayerType* layer_type = nn::LayerRegistry::instance().find(type);
  if (!layer_type)
    fail(NNP_NOT_FOUND, "onnx load ", path_, ": ", node_name(n), " needs layer type ", type,
         ", which no loaded plugin provides; put the plugin that does in NNP_PLUGIN_PATH");
  if (layer_type->plugin == "core" && !builtin_custom_node(type))
    fail(NNP_INVALID_ARGUMENT, "onnx load ", path_, ": ", node_name(n), " names nnplug's built-in layer ", type,
         " as a custom node; built-in layers are read from their ONNX ops");
  json attrs = json::object();
  std::vector<std::string> tensors;
  for (const ::onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == "nnp_tensors") {
      tensors.assign(a.strings().begin(), a.strings().end());
      continue;
    }
    auto def = std::find_if(layer_type->attrs.begin(), layer_type->attrs.end(),
                            [&](const nn::AttrDef& d) { return d.name == a.name(); });
    const bool boolean = def != layer_type->attrs.end() && def->type == NNP_ATTR_BOOL;
    switch (a.type()) {
      case ::onnx::AttributeProto::INT: attrs[a.name()] = boolean ? json(a.i() != 0) : json(a.i()); break;
      case ::onnx::AttributeProto::FLOAT: attrs[a.name()] = a.f(); break;
      case ::onnx::AttributeProto::STRING: attrs[a.name()] = a.s(); break;
      case ::onnx::AttributeProto::INTS:
        attrs[a.name()] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
        break;
      case ::onnx::AttributeProto::FLOATS:
        attrs[a.name()] = std::vector<double>(a.floats().begin(), a.floats().end());
        break;
      default:
        fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), ": attribute '", a.name(),
             "' of an unsupported kind");
    }
  }
  const int data_inputs = n.input_size() - static_cast<int>(tensors.size());
  if (data_inputs < 0) corrupt(node_name(n) + " names more tensors than it has inputs");
  const std::string layer = add_layer(n.op_type(), type, attrs);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ::onnx::TensorProto* t = initializer(n, data_inputs + static_cast<int>(i));
    if (!t) corrupt(node_name(n) + "'s tensor '" + tensors[i] + "' is not an initialiser");
    layer_values_.emplace_back(layer + "." + tensors[i], read_tensor(*t, n.input(data_inputs + static_cast<int>(i))));
    absorbed_.insert(n.input(data_inputs + static_cast<int>(i)));
  }
  std::vector<std::string> inputs(n.input().begin(), n.input().begin() + data_inputs);
  add_layer_node(layer, inputs, std::vector<std::string>(n.output().begin(), n.output().end()));
}

// A Constant node's value.
HostTensor Importer::constant_value(const ::onnx::NodeProto& n) const {
  if (n.output_size() != 1 || n.attribute_size() != 1) corrupt(node_name(n) + " is malformed");
  const ::onnx::AttributeProto& a = n.attribute(0);
  HostTensor t;
  if (a.name() == "value") {
    t = read_tensor(a.t(), node_name(n));
  } else if (a.name() == "value_float" || a.name() == "value_int") {
    t.dtype = a.name() == "value_float" ? NNP_F32 : NNP_I64;
    if (a.name() == "value_float") {
      float v = a.f();
      t.bytes.assign(reinterpret_cast<const char*>(&v), 4);
    } else {
      int64_t v = a.i();
      t.bytes.assign(reinterpret_cast<const char*>(&v), 8);
    }
  } else if (a.name() == "value_ints" || a.name() == "value_floats") {
    const bool f = a.name() == "value_floats";
    t.dtype = f ? NNP_F32 : NNP_I64;
    t.shape.ndim = 1;
    t.shape.d[0] = f ? a.floats_size() : a.ints_size();
    if (f)
      t.bytes.assign(reinterpret_cast<const char*>(a.floats().data()), 4 * static_cast<size_t>(a.floats_size()));
    else
      t.bytes.assign(reinterpret_cast<const char*>(a.ints().data()), 8 * static_cast<size_t>(a.ints_size()));
  } else {
    fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), ": constant ", a.name(), " is not supported");
  }
  return t;
}

json Importer::op_node(const ::onnx::NodeProto& n, size_t depth) {
  const std::vector<std::string> inputs(n.input().begin(), n.input().end()),
      outputs(n.output().begin(), n.output().end());
  if (is_control_op(n.op_type())) {
    json node = {{"control", n.op_type()},
                 {"inputs", inputs},
                 {"outputs", outputs},
                 {"attrs", attributes(n)},
                 {"graphs", json::array()}};
    // ONNX's converter brings opset 8's Scan to 9 without its batch axis:
    // the node keeps opset 8's meaning (sequence_lens, its first input, is dropped).
    if (n.op_type() == "Scan" && original_opset_ > 0 && original_opset_ < 9) {
      if (opset8_scan_lengths_)
        fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), ": opset 8's sequence_lens is not supported");
      node["attrs"]["nnp_batched"] = 1;
    }
    const char* const names[] = {n.op_type() == "If" ? "then_branch" : "body",
                                 n.op_type() == "If" ? "else_branch" : ""};
    for (const char* name : names) {
      if (!*name) continue;
      auto a = std::find_if(n.attribute().begin(), n.attribute().end(),
                            [&](const ::onnx::AttributeProto& at) { return at.name() == name && at.has_g(); });
      if (a == n.attribute().end()) corrupt(node_name(n) + " has no subgraph '" + name + "'");
      node["graphs"].push_back(subgraph(a->g(), depth + 1));
    }
    return node;
  }
  if (is_sequence_op(n.op_type()))
    return {{"sequence", n.op_type()}, {"inputs", inputs}, {"outputs", outputs}, {"attrs", attributes(n)}};
  if (!graph_ops().find(n.op_type()))
    fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), ": nnplug does not run ONNX op ", n.op_type(),
         " (it runs the ops listed in docs/onnx.md, and those plugins register: nnp_api.graph_op_info)");
  return {{"op", n.op_type()}, {"inputs", inputs}, {"outputs", outputs}, {"attrs", attributes(n)}};
}

// A subgraph (If's branches, Loop's and Scan's bodies) as a nested program;
// its initialisers and constants join the module's tensors, so the nested
// program holds only nodes, which read its inputs and the enclosing scope.
json Importer::subgraph(const ::onnx::GraphProto& g, size_t depth) {
  if (depth > kMaxGraphNesting) corrupt("subgraphs nest deeper than " + std::to_string(kMaxGraphNesting) + " levels");
  json sub = {{"inputs", json::array()}, {"outputs", json::array()}, {"nodes", json::array()}};
  for (const ::onnx::ValueInfoProto& v : g.input()) sub["inputs"].push_back(v.name());
  for (const ::onnx::ValueInfoProto& v : g.output()) sub["outputs"].push_back(v.name());
  for (const ::onnx::TensorProto& t : g.initializer())
    add_tensor(t.name(), read_tensor(t, "initialiser '" + t.name() + "'"), false);
  for (const ::onnx::NodeProto& n : g.node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n), ": a subgraph runs ONNX's own ops only");
    if (n.op_type() == "Constant")
      add_tensor(n.output(0), constant_value(n), false);
    else
      sub["nodes"].push_back(op_node(n, depth));
  }
  return sub;
}

// How many node inputs (and graph outputs) read each value, subgraphs' included.
void Importer::count_readers(const ::onnx::GraphProto& g) {
  for (const ::onnx::NodeProto& n : g.node()) {
    for (const std::string& input : n.input()) ++readers_[input];
    for (const ::onnx::AttributeProto& a : n.attribute())
      if (a.has_g()) count_readers(a.g());
  }
  for (const ::onnx::ValueInfoProto& v : g.output()) ++readers_[v.name()];
}

// The file's bytes a block at a time, for protobuf to parse as they come:
// read whole first, they were one more copy of the model at the peak.
class FileBlocks : public google::protobuf::io::CopyingInputStream {
 public:
  explicit FileBlocks(const io::RegularFile& file) : file_(file) {}
  int Read(void* buffer, int size) override {
    const uint64_t left = file_.size() - at_, n = std::min<uint64_t>(left, static_cast<uint64_t>(size));
    if (n > 0) file_.read_at(at_, buffer, n);
    at_ += n;
    return static_cast<int>(n);
  }

 private:
  const io::RegularFile& file_;
  uint64_t at_ = 0;
};

void Importer::parse_file() {
  io::RegularFile file(path_, "onnx load");
  if (file.size() > kMaxModelBytes)
    fail(NNP_INVALID_ARGUMENT, "onnx load ", path_, ": ", std::to_string(file.size()),
         " bytes, more than the limit of ", std::to_string(kMaxModelBytes),
         " (protobuf's); store the weights as external data");
  FileBlocks blocks(file);
  google::protobuf::io::CopyingInputStreamAdaptor stream(&blocks, 1 << 20);
  if (!model_.ParseFromZeroCopyStream(&stream)) corrupt("not an ONNX model (its protobuf does not parse)");
}

ModuleRef Importer::run() {
  PluginRegistry::instance().discover();  // plugins' layers and graph ops are read too
  parse_file();
  check_external_data();
  const bool reordered = sort_nodes(*model_.mutable_graph(), path_, kMaxGraphNesting);
  bool external = false;
  for (const ::onnx::TensorProto& t : model_.graph().initializer())
    external = external || t.data_location() == ::onnx::TensorProto::EXTERNAL;
  try {
    // From memory where no data is stored outside the file: checking the
    // path would read and parse the whole file again.
    if (!external)
      ::onnx::checker::check_model(model_);
    else if (reordered)
      ::onnx::checker::check_model(checkable(model_));
    else
      ::onnx::checker::check_model(path_);  // the file's own folder is where external data is looked for
  } catch (const std::exception& e) {
    corrupt(std::string("fails onnx::checker: ") + e.what());
  }
  std::vector<const std::unordered_set<std::string>*> scopes;
  check_graph_outputs(model_.graph(), scopes, 0);
  upgrade_opset();
  inline_initializer_identities();
  const ::onnx::GraphProto& g = model_.graph();
  for (const ::onnx::TensorProto& t : g.initializer()) initializers_[t.name()] = &t;
  count_readers(g);
  for (const ::onnx::ValueInfoProto& v : g.input())
    if (!initializers_.count(v.name())) program_["inputs"].push_back(v.name());
  for (const ::onnx::ValueInfoProto& v : g.output()) program_["outputs"].push_back(v.name());

  for (const ::onnx::NodeProto& n : g.node()) {
    // ONNX's training domain runs as graph ops too (Adagrad, Adam, Momentum).
    const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx" || n.domain() == "ai.onnx.preview.training";
    if (!onnx_domain) {
      add_vendor_layer(n);
    } else if (n.op_type() == "Constant") {
      add_tensor(n.output(0), constant_value(n), false);
    } else if (!((n.op_type() == "Conv" && try_conv(n)) || (n.op_type() == "Gemm" && try_gemm(n)) ||
                 (n.op_type() == "ConvTranspose" && try_conv_transpose(n)) ||
                 ((n.op_type() == "MaxPool" || n.op_type() == "AveragePool") && try_pool(n)) ||
                 (n.op_type() == "LSTM" && try_lstm(n)))) {
      // Forms the built-in layers do not take (computed weights, auto_pad,
      // asymmetric pads, ...) run as the graph op of the same type.
      if (n.op_type() == "LSTM" && !graph_ops().find("LSTM"))
        fail(NNP_UNIMPLEMENTED, "onnx load ", path_, ": ", node_name(n),
             " uses LSTM options beyond PyTorch's (activations, clip, peepholes, sequence lengths, reverse, layout, "
             "computed weights), which nnplug does not run");
      program_["nodes"].push_back(op_node(n, 0));
    }
  }
  for (const ::onnx::TensorProto& t : g.initializer())
    if (!absorbed_.count(t.name())) add_tensor(t.name(), read_tensor(t, "initialiser '" + t.name() + "'"), true);
  // Everything the module needs is in the program and the values read out:
  // the parsed file goes before the module's own tensors are made (swapped
  // out: Clear() keeps the strings' memory for reuse).
  ::onnx::ModelProto().Swap(&model_);

  nnp_attrs attrs;
  nn::AttrValue graph;
  graph.type = NNP_ATTR_STRING;
  graph.s = program_.dump();
  attrs.values["graph"] = graph;
  ModuleRef module = nn::LayerRegistry::instance().create("nn.GraphModule", &attrs);
  auto fill = [&](const std::string& key, const HostTensor& t) {
    TensorRef target = nn::get_tensor(*module, key);
    // A layer's weights in another floating dtype (a model in f64): the
    // layer takes that dtype, as module.to(dtype) would.
    if (const size_t dot = key.rfind('.'); dot != std::string::npos && target->shape == t.shape &&
                                           target->dtype != t.dtype && is_floating(target->dtype) &&
                                           is_floating(t.dtype)) {
      ModuleRef layer = nn::get_submodule(*module, key.substr(0, dot));
      nn::to(*layer, nullptr, t.dtype);
      target = nn::get_tensor(*module, key);
    }
    if (target->shape != t.shape || target->dtype != t.dtype)
      corrupt("the values for " + key + " are " + dtype_name(t.dtype) + " " + format_dims(t.shape) +
              " where the layer has " + dtype_name(target->dtype) + " " + format_dims(target->shape));
    TensorRef source = from_host(t.bytes.data(), t.shape, t.dtype, target->device);
    copy_into(*target, *source);
  };
  // Each value's bytes are freed once in the module's tensor.
  for (auto& [key, t] : tensor_values_) {
    fill(key, t);
    std::string().swap(t.bytes);
  }
  for (auto& [key, t] : layer_values_) {
    fill(key, t);
    std::string().swap(t.bytes);
  }
  return module;
}

}  // namespace

ModuleRef import_model(const std::string& path) { return Importer(path).run(); }

}  // namespace nnp::core::onnx
