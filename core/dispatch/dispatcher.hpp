// The one path from an op call to its kernel (DESIGN §10). dispatch() runs
// the interposed layers in a fixed order around the op's own compute:
//   1. profiler: one event per call, named from the op table, with its inputs;
//   2. autocast: inside an autocast scope, a public call's floating inputs
//                cast as the op's list says (the casts are ops of their own,
//                inside the call's profile event);
//   3. tracer:   during an ONNX export, the outermost public call is written
//                as the op's ONNX form (or the export is refused naming it);
//   4. autograd: a public call whose inputs require grad records the op's
//                backward node;
//   5. compute:  the backend kernel, or the composition of other ops.
// An op is a small struct (its operands and attributes) with
//   OpId id() const;  Inputs inputs() const;  R compute() const;
// and, where its table entry says it has them,
//   void lower(nnp_onnx_graph&, const R&) const;   (trace form NODES)
//   void differentiate(R&) const;                  (a backward node)
// and a view op says so (static constexpr bool is_view = true).
// Layers cost one relaxed load each when their feature is off.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "../autocast/autocast.hpp"
#include "../autograd/record.hpp"
#include "../autograd/views.hpp"
#include "../onnx/trace.hpp"
#include "../profiler/profiler.hpp"
#include "op_table.hpp"

namespace nnp::core::dispatch {

// The tensors an op reads, for the profiler's shapes and autograd's
// should-record test; entries may be null (an absent bias).
struct Inputs {
  const Tensor* const* data;
  int32_t count;
};

// Who calls: the API, layers and functionals (PUBLIC: every layer), or the
// core itself inside another op or a backward formula (INTERNAL: the
// profiler only, since the outer op traces and records for the whole).
enum class Face { PUBLIC, INTERNAL };

class ProfileLayer {
 public:
  ProfileLayer(const OpSchema& op, Inputs inputs) {
    if (profiler::active()) open(op, inputs);
  }
  ~ProfileLayer() {
    if (token_.index >= 0) profiler::end(token_);
  }
  ProfileLayer(const ProfileLayer&) = delete;
  ProfileLayer& operator=(const ProfileLayer&) = delete;

 private:
  void open(const OpSchema& op, Inputs inputs);
  profiler::Token token_;
};

class TraceLayer {
 public:
  TraceLayer(const OpSchema& op, Face face) {
    if (face == Face::PUBLIC && onnx::tracing()) enter(op);
  }
  ~TraceLayer() {
    if (entered_) onnx::leave_op();
  }
  // The graph to write this call into: set for the outermost op only.
  nnp_onnx_graph* graph() const { return graph_; }
  // Writes the call's ONNX form with out as its result.
  template <typename Op, typename Result>
  void write(const Op& op, const Result& out) const;
  TraceLayer(const TraceLayer&) = delete;
  TraceLayer& operator=(const TraceLayer&) = delete;

 private:
  void enter(const OpSchema& op);
  void name_constant(const Tensor& out) const;
  const OpSchema* op_ = nullptr;
  nnp_onnx_graph* graph_ = nullptr;
  bool entered_ = false;
};

class AutogradLayer {
 public:
  static bool records(const OpSchema& op, Face face, Inputs inputs) {
    if (face != Face::PUBLIC || op.backward == nullptr || !autograd::grad_enabled()) return false;
    for (int32_t i = 0; i < inputs.count; ++i)
      if (inputs.data[i] && autograd::requires_grad(*inputs.data[i])) return true;
    return false;
  }
};

// Casts a public op's floating inputs as PyTorch 1.13's autocast lists say
// (autocast/autocast.hpp) while a scope enables it for their device type.
// The op computes on the casts with autocast suspended, so the ops it is
// made of run on what they are given.
class AutocastLayer {
 public:
  static constexpr int32_t kMaxInputs = 8;  // more take a vector
  enum Outcome { UNLISTED, UNCHANGED, CAST };
  static Outcome cast(OpId op, Inputs inputs, TensorRef* casts);
};

namespace detail {
template <typename Op, typename = void>
struct has_input_array : std::false_type {};
template <typename Op>
struct has_input_array<Op, std::void_t<decltype(std::declval<Op&>().in[0] = nullptr)>> : std::true_type {};
template <typename Op, typename = void>
struct has_tensor_list : std::false_type {};
template <typename Op>
struct has_tensor_list<Op, std::void_t<decltype(std::declval<Op&>().tensors = nullptr)>> : std::true_type {};
template <typename Op, typename = void>
struct has_lower : std::false_type {};
template <typename Op>
struct has_lower<Op, std::void_t<decltype(&Op::lower)>> : std::true_type {};
template <typename Op, typename = void>
struct is_view : std::false_type {};
template <typename Op>
struct is_view<Op, std::void_t<decltype(Op::is_view)>> : std::bool_constant<Op::is_view> {};
template <typename Op, typename = void>
struct has_differentiate : std::false_type {};
template <typename Op>
struct has_differentiate<Op, std::void_t<decltype(&Op::differentiate)>> : std::true_type {};
// Tags the nodes written while it lives with the op's name (NodeProto.doc_string).
class NodeTag {
 public:
  NodeTag(nnp_onnx_graph& g, const char* op);
  ~NodeTag();
  NodeTag(const NodeTag&) = delete;
  NodeTag& operator=(const NodeTag&) = delete;

 private:
  nnp_onnx_graph& g_;
  const char* outer_;
};
}  // namespace detail

template <typename Op, typename Result>
void TraceLayer::write(const Op& op, const Result& out) const {
  if (op_->trace == TraceForm::CONSTANT) {
    if constexpr (std::is_same_v<Result, TensorRef>) name_constant(*out);
    return;
  }
  if constexpr (detail::has_lower<Op>::value) {
    detail::NodeTag tag(*graph_, op_->name);
    op.lower(*graph_, out);
  }
}

// The layers below autocast: tracer, autograd, compute.
template <typename Op>
auto traced_compute(const Op& op, const OpSchema& s, Face face) -> decltype(op.compute()) {
  using Result = decltype(op.compute());
  const Inputs inputs = op.inputs();
  TraceLayer trace(s, face);
  if constexpr (std::is_void_v<Result>) {
    op.compute();
  } else {
    Result out = op.compute();
    if (trace.graph()) trace.write(op, out);
    if constexpr (detail::is_view<Op>::value)  // differentiable views (autograd/views.hpp)
      if (face == Face::PUBLIC) autograd::track_view(*out, *inputs.data[0]);
    if constexpr (detail::has_differentiate<Op>::value)
      if (AutogradLayer::records(s, face, inputs)) op.differentiate(out);
    return out;
  }
}

// The autocast layer's part of dispatch(): the op again on its casts, with
// autocast suspended, or nothing when the op is in no list.
template <typename Op>
auto autocast_compute(const Op& op, const OpSchema& s, Face face) -> std::optional<decltype(op.compute())> {
  const Inputs inputs = op.inputs();
  TensorRef few[AutocastLayer::kMaxInputs];
  std::vector<TensorRef> many;
  if (inputs.count > AutocastLayer::kMaxInputs) many.resize(static_cast<size_t>(inputs.count));
  TensorRef* casts = many.empty() ? few : many.data();
  const AutocastLayer::Outcome outcome = AutocastLayer::cast(op.id(), inputs, casts);
  if (outcome == AutocastLayer::UNLISTED) return std::nullopt;
  autocast::Suspend inner_calls_run_as_given;
  if (outcome == AutocastLayer::UNCHANGED) return traced_compute(op, s, face);
  Op cast_op = op;
  std::vector<const Tensor*> list;
  if constexpr (detail::has_input_array<Op>::value) {
    for (int32_t i = 0; i < inputs.count; ++i)
      if (casts[i]) cast_op.in[i] = casts[i].get();
  } else {  // a list of tensors (cat)
    list.assign(inputs.data, inputs.data + inputs.count);
    for (int32_t i = 0; i < inputs.count; ++i)
      if (casts[i]) list[static_cast<size_t>(i)] = casts[i].get();
    cast_op.tensors = list.data();
  }
  return traced_compute(cast_op, s, face);
}

template <typename Op>
auto dispatch(const Op& op, Face face) -> decltype(op.compute()) {
  const OpSchema& s = schema(op.id());
  ProfileLayer profile(s, op.inputs());
  if constexpr (!std::is_void_v<decltype(op.compute())> &&  // in-place writes keep their destination's dtype
                (detail::has_input_array<Op>::value || detail::has_tensor_list<Op>::value)) {
    if (face == Face::PUBLIC && autocast::active()) {
      if (auto out = autocast_compute(op, s, face)) return std::move(*out);
    }
  }
  return traced_compute(op, s, face);
}

}  // namespace nnp::core::dispatch
