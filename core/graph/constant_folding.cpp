#include "constant_folding.hpp"

#include <algorithm>
#include <cstring>

#include "../autograd/grad_mode.hpp"
#include "../dtype.hpp"
#include "../error.hpp"

namespace nnp::core::graph {

namespace {

// Ops whose result is not a function of their inputs alone.
bool is_random(const std::string& op_type) {
  static const char* const kRandom[] = {"Bernoulli",        "Dropout",       "Multinomial",      "RandomNormal",
                                        "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
  return std::any_of(std::begin(kRandom), std::end(kRandom), [&](const char* r) { return op_type == r; });
}

int64_t bytes_of(const Tensor& t) { return t.numel * static_cast<int64_t>(dtype_size(t.dtype)); }

// A folded result may be as large as its inputs, or this much more: an
// Expand or a ConstantOfShape of a large shape is cheaper to run than to keep.
constexpr int64_t kGrowthAllowed = int64_t{1} << 20;

}  // namespace

FoldedProgram fold_constants(const std::vector<onnx::GraphNode>& nodes,
                             const std::vector<std::pair<int32_t, TensorRef>>& known, int32_t slots) {
  autograd::NoGradGuard no_grad;  // constants carry no history
  FoldedProgram out;
  std::vector<onnx::GraphValue> values(static_cast<size_t>(slots));
  // For each known slot, the module's tensor slots its value comes from.
  std::vector<std::vector<int32_t>> origin(static_cast<size_t>(slots));
  std::vector<bool> is_constant(static_cast<size_t>(slots), false);
  for (const auto& [slot, t] : known) {
    values[static_cast<size_t>(slot)].tensor = t;
    origin[static_cast<size_t>(slot)] = {slot};
    is_constant[static_cast<size_t>(slot)] = true;
  }
  std::vector<bool> source(static_cast<size_t>(slots), false);
  for (const onnx::GraphNode& n : nodes) {
    const bool all_known = !n.inputs.empty() && std::all_of(n.inputs.begin(), n.inputs.end(), [&](int32_t s) {
      return s < 0 || is_constant[static_cast<size_t>(s)];
    });
    // nnplug's own ops ("core") are functions of their inputs but for the
    // random ones; a plugin's or the application's may not be.
    const bool foreign = n.kind == onnx::GraphNodeKind::kOp && n.op->origin != "core";
    if (!all_known || n.kind != onnx::GraphNodeKind::kOp || is_random(n.op_type) || foreign) {
      if (all_known)
        out.notes.push_back(n.op_type + ": inputs known, not folded (" +
                            (foreign                ? "an op of " + n.op->origin
                             : is_random(n.op_type) ? std::string("random")
                                                    : std::string("a layer or control flow")) +
                            ")");
      out.nodes.push_back(&n);
      continue;
    }
    int64_t in_bytes = 0;
    for (int32_t s : n.inputs)
      if (s >= 0) in_bytes += bytes_of(*values[static_cast<size_t>(s)].tensor);
    try {
      onnx::run_node(n, values);
    } catch (const Error& e) {  // left to fail at run time, where the caller sees it
      out.notes.push_back(n.op_type + ": not folded (" + e.what() + ")");
      out.nodes.push_back(&n);
      continue;
    }
    int64_t result_bytes = 0;
    for (int32_t s : n.outputs)
      if (s >= 0) result_bytes += bytes_of(*values[static_cast<size_t>(s)].tensor);
    if (result_bytes > in_bytes + kGrowthAllowed) {
      out.notes.push_back(n.op_type + ": not folded (its result, " + std::to_string(result_bytes) +
                          " bytes, is much larger than its inputs)");
      for (int32_t s : n.outputs)
        if (s >= 0) values[static_cast<size_t>(s)] = onnx::GraphValue{};
      out.nodes.push_back(&n);
      continue;
    }
    std::vector<int32_t> from;
    for (int32_t s : n.inputs)
      if (s >= 0) from.insert(from.end(), origin[static_cast<size_t>(s)].begin(), origin[static_cast<size_t>(s)].end());
    std::sort(from.begin(), from.end());
    from.erase(std::unique(from.begin(), from.end()), from.end());
    for (int32_t s : n.outputs) {
      if (s < 0) continue;
      is_constant[static_cast<size_t>(s)] = true;
      origin[static_cast<size_t>(s)] = from;
      out.constants.emplace_back(s, values[static_cast<size_t>(s)].tensor);
    }
    for (int32_t s : from) source[static_cast<size_t>(s)] = true;
    out.notes.push_back(n.op_type + ": folded");
  }
  for (int32_t s = 0; s < slots; ++s)
    if (source[static_cast<size_t>(s)]) out.sources.push_back(s);
  return out;
}

}  // namespace nnp::core::graph
