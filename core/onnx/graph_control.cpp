// ONNX's control flow (If, Loop, Scan) and sequence operators as
// nn.GraphModule runs them: they choose, repeat and collect values rather
// than compute them. A Loop or Scan runs at most kMaxIterations times, so a
// stranger's graph cannot loop forever.
#include <algorithm>

#include "../device.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "graph_program.hpp"

namespace nnp::core::onnx {

namespace {

constexpr int64_t kMaxIterations = int64_t{1} << 20;

int64_t attr_int_or(const nnp_attrs& attrs, const char* name, int64_t fallback) {
  return attrs.values.count(name) ? attrs.get(name, NNP_ATTR_INT, "graph op").i : fallback;
}
std::vector<int64_t> attr_ints_or(const nnp_attrs& attrs, const char* name) {
  return attrs.values.count(name) ? attrs.get(name, NNP_ATTR_INTS, "graph op").ints : std::vector<int64_t>{};
}

const GraphValue& input(const GraphNode& node, const std::vector<GraphValue>& values, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] < 0) fail(NNP_INVALID_ARGUMENT, node.op_type, ": input ", i, " is missing");
  return values[static_cast<size_t>(node.inputs[i])];
}
bool has_input(const GraphNode& node, size_t i) { return i < node.inputs.size() && node.inputs[i] >= 0; }

// A one-element tensor's value, on the host.
double scalar_value(const TensorRef& t, const std::string& who) {
  if (t->shape.numel() != 1) fail(NNP_INVALID_ARGUMENT, who, " must hold one value");
  double v = 0;
  TensorRef host = core::to(*t, parse_device("cpu"), NNP_F64);
  copy_to_host(*host, &v, sizeof v);
  return v;
}

TensorRef scalar_tensor(double v, nnp_dtype dtype) {
  return core::to(*from_host(&v, Dims{}, NNP_F64, parse_device("cpu")), parse_device("cpu"), dtype);
}

void set_output(const GraphNode& node, std::vector<GraphValue>& values, size_t i, GraphValue v) {
  if (i < node.outputs.size() && node.outputs[i] >= 0) values[static_cast<size_t>(node.outputs[i])] = std::move(v);
}

// Stacks per-iteration tensors along a new axis (a Loop's or Scan's scan outputs).
TensorRef joined(const std::vector<TensorRef>& parts, int64_t axis) {
  std::vector<const Tensor*> raw;
  for (const TensorRef& p : parts) raw.push_back(p.get());
  return cat(raw.data(), static_cast<int32_t>(raw.size()), axis);
}
TensorRef stacked(const std::vector<TensorRef>& parts, int64_t axis, const std::string& who) {
  if (parts.empty()) fail(NNP_UNIMPLEMENTED, who, ": a scan output of no iterations has no known shape");
  std::vector<TensorRef> expanded;
  for (const TensorRef& p : parts) expanded.push_back(unsqueeze(*p, axis));
  return joined(expanded, axis);
}
// Element `at` of axis, the axis removed.
TensorRef pick(const Tensor& t, int32_t axis, int64_t at) { return squeeze(*slice(t, axis, at, at + 1, 1), axis, false); }

void run_if(const GraphNode& node, std::vector<GraphValue>& values) {
  const bool condition = scalar_value(tensor_of(input(node, values, 0), "If's cond"), "If's cond") != 0;
  const Subgraph& branch = node.graphs[condition ? 0 : 1];
  run_nodes(branch.nodes, values);
  if (branch.outputs.size() < node.outputs.size())
    fail(NNP_INVALID_ARGUMENT, "If: the branch gives ", branch.outputs.size(), " outputs for ", node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i)
    set_output(node, values, i, values[static_cast<size_t>(branch.outputs[i])]);
}

// Loop: inputs M (trip count, optional), cond (optional), the carried
// values; the body takes the iteration number, cond and the carried values,
// and gives cond, the carried values and the scan outputs' slices.
void run_loop(const GraphNode& node, std::vector<GraphValue>& values) {
  const Subgraph& body = node.graphs[0];
  const size_t carried = node.inputs.size() < 2 ? 0 : node.inputs.size() - 2;
  if (body.inputs.size() != carried + 2 || body.outputs.size() < carried + 1)
    fail(NNP_INVALID_ARGUMENT, "Loop: the body's inputs and outputs do not match the loop's");
  const size_t scans = body.outputs.size() - 1 - carried;
  const bool bounded = has_input(node, 0), conditioned = has_input(node, 1);
  const int64_t trips = bounded ? static_cast<int64_t>(scalar_value(tensor_of(input(node, values, 0), "Loop's M"), "Loop's M")) : -1;
  bool condition = conditioned ? scalar_value(tensor_of(input(node, values, 1), "Loop's cond"), "Loop's cond") != 0 : true;
  std::vector<GraphValue> state;
  for (size_t i = 0; i < carried; ++i) state.push_back(input(node, values, i + 2));
  std::vector<std::vector<TensorRef>> collected(scans);
  for (int64_t i = 0; (!bounded || i < trips) && condition; ++i) {
    if (i >= kMaxIterations) fail(NNP_INVALID_ARGUMENT, "Loop: more than ", kMaxIterations, " iterations");
    values[static_cast<size_t>(body.inputs[0])] = GraphValue{scalar_tensor(static_cast<double>(i), NNP_I64), nullptr};
    values[static_cast<size_t>(body.inputs[1])] = GraphValue{scalar_tensor(condition ? 1 : 0, NNP_BOOL), nullptr};
    for (size_t k = 0; k < carried; ++k) values[static_cast<size_t>(body.inputs[k + 2])] = state[k];
    run_nodes(body.nodes, values);
    if (conditioned)
      condition = scalar_value(tensor_of(values[static_cast<size_t>(body.outputs[0])], "Loop's cond"), "Loop's cond") != 0;
    for (size_t k = 0; k < carried; ++k) state[k] = values[static_cast<size_t>(body.outputs[k + 1])];
    for (size_t k = 0; k < scans; ++k)
      collected[k].push_back(tensor_of(values[static_cast<size_t>(body.outputs[1 + carried + k])], "Loop's scan output"));
  }
  for (size_t k = 0; k < carried; ++k) set_output(node, values, k, state[k]);
  for (size_t k = 0; k < scans; ++k) set_output(node, values, carried + k, GraphValue{stacked(collected[k], 0, "Loop"), nullptr});
}

// Scan (opset 9 and later): the state values, then num_scan_inputs tensors
// walked along their scan axes (backwards where their direction is 1); the
// body gives the state and each scan output's slice. A Scan of opset 8
// (marked nnp_batched by the importer, which the version converter leaves
// with opset 8's meaning) has a batch axis first on every input and output:
// each batch entry is scanned on its own and the results stacked.
struct ScanResult {
  std::vector<GraphValue> state;
  std::vector<TensorRef> outputs;
};

ScanResult scan_pass(const GraphNode& node, std::vector<GraphValue>& values, std::vector<GraphValue> state,
                     const std::vector<TensorRef>& sequences) {
  const Subgraph& body = node.graphs[0];
  const size_t states = state.size(), scan_inputs = sequences.size();
  if (body.inputs.size() != states + scan_inputs || body.outputs.size() < states)
    fail(NNP_INVALID_ARGUMENT, "Scan: the body's inputs and outputs do not match the node's");
  const size_t scan_outputs = body.outputs.size() - states;
  auto per_entry = [&](const char* name, size_t count) {
    std::vector<int64_t> v = attr_ints_or(*node.attrs, name);
    if (v.empty()) v.assign(count, 0);
    if (v.size() != count) fail(NNP_INVALID_ARGUMENT, "Scan: ", name, " needs one value per scan input or output");
    return v;
  };
  const std::vector<int64_t> in_axes = per_entry("scan_input_axes", scan_inputs),
                             in_directions = per_entry("scan_input_directions", scan_inputs),
                             out_axes = per_entry("scan_output_axes", scan_outputs),
                             out_directions = per_entry("scan_output_directions", scan_outputs);
  std::vector<int32_t> axes;
  int64_t length = -1;
  for (size_t k = 0; k < scan_inputs; ++k) {
    const TensorRef& t = sequences[k];
    int64_t axis = in_axes[k];
    if (axis < 0) axis += t->shape.ndim;
    if (axis < 0 || axis >= t->shape.ndim) fail(NNP_INVALID_ARGUMENT, "Scan: a scan input axis is out of range");
    if (length >= 0 && t->shape[static_cast<int32_t>(axis)] != length)
      fail(NNP_INVALID_ARGUMENT, "Scan: the scan inputs differ in length");
    length = t->shape[static_cast<int32_t>(axis)];
    axes.push_back(static_cast<int32_t>(axis));
  }
  if (length > kMaxIterations) fail(NNP_INVALID_ARGUMENT, "Scan: more than ", kMaxIterations, " iterations");
  std::vector<std::vector<TensorRef>> collected(scan_outputs);
  for (int64_t step = 0; step < length; ++step) {
    for (size_t i = 0; i < states; ++i) values[static_cast<size_t>(body.inputs[i])] = state[i];
    for (size_t k = 0; k < scan_inputs; ++k) {
      const int64_t at = in_directions[k] ? length - 1 - step : step;
      values[static_cast<size_t>(body.inputs[states + k])] = GraphValue{pick(*sequences[k], axes[k], at), nullptr};
    }
    run_nodes(body.nodes, values);
    for (size_t i = 0; i < states; ++i) state[i] = values[static_cast<size_t>(body.outputs[i])];
    for (size_t k = 0; k < scan_outputs; ++k)
      collected[k].push_back(tensor_of(values[static_cast<size_t>(body.outputs[states + k])], "Scan's scan output"));
  }
  ScanResult result{std::move(state), {}};
  for (size_t k = 0; k < scan_outputs; ++k) {
    if (out_directions[k]) std::reverse(collected[k].begin(), collected[k].end());
    int64_t axis = out_axes[k];
    const int64_t rank = collected[k].empty() ? 1 : collected[k][0]->shape.ndim + 1;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) fail(NNP_INVALID_ARGUMENT, "Scan: a scan output axis is out of range");
    result.outputs.push_back(stacked(collected[k], axis, "Scan"));
  }
  return result;
}

void run_scan(const GraphNode& node, std::vector<GraphValue>& values) {
  const int64_t scan_inputs = attr_int_or(*node.attrs, "num_scan_inputs", 0);
  if (scan_inputs < 1 || static_cast<size_t>(scan_inputs) > node.inputs.size())
    fail(NNP_INVALID_ARGUMENT, "Scan: num_scan_inputs is out of range");
  const size_t states = node.inputs.size() - static_cast<size_t>(scan_inputs);
  std::vector<GraphValue> state;
  std::vector<TensorRef> sequences;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (i < states)
      state.push_back(input(node, values, i));
    else
      sequences.push_back(tensor_of(input(node, values, i), "Scan's scan input"));
  }
  if (!attr_int_or(*node.attrs, "nnp_batched", 0)) {
    ScanResult r = scan_pass(node, values, state, sequences);
    for (size_t i = 0; i < states; ++i) set_output(node, values, i, r.state[i]);
    for (size_t k = 0; k < r.outputs.size(); ++k) set_output(node, values, states + k, GraphValue{r.outputs[k], nullptr});
    return;
  }
  const int64_t batch = sequences[0]->shape.ndim > 0 ? sequences[0]->shape[0] : 0;
  std::vector<std::vector<TensorRef>> final_states(states), outputs;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<GraphValue> entry_state;
    std::vector<TensorRef> entry_sequences;
    for (const GraphValue& v : state) entry_state.push_back(GraphValue{pick(*tensor_of(v, "Scan's state"), 0, b), nullptr});
    for (const TensorRef& t : sequences) {
      if (t->shape.ndim < 1 || t->shape[0] != batch) fail(NNP_INVALID_ARGUMENT, "Scan: the inputs differ in batch size");
      entry_sequences.push_back(pick(*t, 0, b));
    }
    ScanResult r = scan_pass(node, values, entry_state, entry_sequences);
    for (size_t i = 0; i < states; ++i) final_states[i].push_back(tensor_of(r.state[i], "Scan's state"));
    outputs.resize(r.outputs.size());
    for (size_t k = 0; k < r.outputs.size(); ++k) outputs[k].push_back(r.outputs[k]);
  }
  for (size_t i = 0; i < states; ++i) set_output(node, values, i, GraphValue{stacked(final_states[i], 0, "Scan"), nullptr});
  for (size_t k = 0; k < outputs.size(); ++k) set_output(node, values, states + k, GraphValue{stacked(outputs[k], 0, "Scan"), nullptr});
}

using Sequence = std::vector<TensorRef>;

const Sequence& sequence_of(const GraphValue& v, const std::string& who) {
  if (!v.sequence) fail(NNP_INVALID_ARGUMENT, who, " reads a tensor where a sequence is needed");
  return *v.sequence;
}
GraphValue sequence_value(Sequence s) { return GraphValue{TensorRef(), std::make_shared<const Sequence>(std::move(s))}; }

// A position into a sequence of `size` (inserting: up to size), negative from the end.
size_t position(const TensorRef& t, size_t size, bool inserting, const std::string& who) {
  int64_t p = static_cast<int64_t>(scalar_value(t, who + "'s position"));
  const int64_t n = static_cast<int64_t>(size);
  if (p < 0) p += n;
  if (p < 0 || p > n || (!inserting && p == n)) fail(NNP_INVALID_ARGUMENT, who, ": position is out of range");
  return static_cast<size_t>(p);
}

// SplitToSequence: x split along axis by split (a chunk size or sizes), or into single slices.
void split_to_sequence(const GraphNode& node, std::vector<GraphValue>& values) {
  const std::string& op = node.op_type;
  const TensorRef& x = tensor_of(input(node, values, 0), op);
  int64_t axis = attr_int_or(*node.attrs, "axis", 0);
  if (axis < 0) axis += x->shape.ndim;
  if (axis < 0 || axis >= x->shape.ndim) fail(NNP_INVALID_ARGUMENT, op, ": axis is out of range");
  const int64_t size = x->shape[static_cast<int32_t>(axis)];
  std::vector<int64_t> sizes;
  bool squeeze_each = false;
  if (has_input(node, 1)) {
    const TensorRef& split = tensor_of(input(node, values, 1), op);
    std::vector<int64_t> given(static_cast<size_t>(split->shape.numel()));
    TensorRef host = core::to(*split, parse_device("cpu"), NNP_I64);
    copy_to_host(*host, given.data(), given.size() * sizeof(int64_t));
    if (split->shape.ndim == 0) {
      if (given[0] < 1) fail(NNP_INVALID_ARGUMENT, op, ": split must be positive");
      for (int64_t start = 0; start < size; start += given[0]) sizes.push_back(std::min(given[0], size - start));
    } else {
      sizes = given;
    }
  } else {
    sizes.assign(static_cast<size_t>(size), 1);
    squeeze_each = attr_int_or(*node.attrs, "keepdims", 1) == 0;
  }
  Sequence out;
  int64_t start = 0;
  for (int64_t n : sizes) {
    if (n < 0 || start + n > size) fail(NNP_INVALID_ARGUMENT, op, ": split does not fit the axis");
    TensorRef piece = slice(*x, static_cast<int32_t>(axis), start, start + n, 1);
    out.push_back(squeeze_each ? pick(*x, static_cast<int32_t>(axis), start) : piece);
    start += n;
  }
  if (start != size) fail(NNP_INVALID_ARGUMENT, op, ": split does not add up to the axis");
  set_output(node, values, 0, sequence_value(std::move(out)));
}

}  // namespace

bool is_control_op(const std::string& op_type) { return op_type == "If" || op_type == "Loop" || op_type == "Scan"; }

bool is_sequence_op(const std::string& op_type) {
  static const char* const kOps[] = {"SequenceEmpty",  "SequenceConstruct", "SequenceInsert",     "SequenceAt",
                                     "SequenceErase",  "SequenceLength",    "SplitToSequence", "ConcatFromSequence"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* op) { return op_type == op; });
}

void run_control(const GraphNode& node, std::vector<GraphValue>& values) {
  if (node.op_type == "If") return run_if(node, values);
  if (node.op_type == "Loop") return run_loop(node, values);
  run_scan(node, values);
}

void run_sequence_op(const GraphNode& node, std::vector<GraphValue>& values) {
  const std::string& op = node.op_type;
  if (op == "SequenceEmpty") return set_output(node, values, 0, sequence_value({}));
  if (op == "SequenceConstruct") {
    Sequence s;
    for (size_t i = 0; i < node.inputs.size(); ++i) s.push_back(tensor_of(input(node, values, i), op));
    return set_output(node, values, 0, sequence_value(std::move(s)));
  }
  if (op == "SplitToSequence") return split_to_sequence(node, values);
  const Sequence& s = sequence_of(input(node, values, 0), op);
  if (op == "SequenceLength")
    return set_output(node, values, 0, GraphValue{scalar_tensor(static_cast<double>(s.size()), NNP_I64), nullptr});
  if (op == "SequenceAt")
    return set_output(node, values, 0,
                      GraphValue{s[position(tensor_of(input(node, values, 1), op), s.size(), false, op)], nullptr});
  if (op == "SequenceInsert") {
    Sequence out = s;
    const size_t at = has_input(node, 2) ? position(tensor_of(input(node, values, 2), op), s.size(), true, op) : s.size();
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), tensor_of(input(node, values, 1), op));
    return set_output(node, values, 0, sequence_value(std::move(out)));
  }
  if (op == "SequenceErase") {
    if (s.empty()) fail(NNP_INVALID_ARGUMENT, op, ": the sequence is empty");
    Sequence out = s;
    const size_t at = has_input(node, 1) ? position(tensor_of(input(node, values, 1), op), s.size(), false, op) : s.size() - 1;
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(at));
    return set_output(node, values, 0, sequence_value(std::move(out)));
  }
  if (op == "ConcatFromSequence") {
    if (s.empty()) fail(NNP_INVALID_ARGUMENT, op, ": the sequence is empty");
    const bool new_axis = attr_int_or(*node.attrs, "new_axis", 0) != 0;
    int64_t axis = attr_int_or(*node.attrs, "axis", 0);
    const int64_t rank = s[0]->shape.ndim + (new_axis ? 1 : 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) fail(NNP_INVALID_ARGUMENT, op, ": axis is out of range");
    if (new_axis) return set_output(node, values, 0, GraphValue{stacked(s, axis, op), nullptr});
    return set_output(node, values, 0, GraphValue{joined(s, axis), nullptr});
  }
}

}  // namespace nnp::core::onnx
