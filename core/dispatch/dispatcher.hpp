// The one path from an op call to its kernel (DESIGN §10). dispatch() runs
// the interposed layers in a fixed order around the op's own compute:
//   1. profiler: one event per call, named from the op table, with its inputs;
//   2. tracer:   during an ONNX export, the outermost public call is written
//                as the op's ONNX form (or the export is refused naming it);
//   3. autograd: a public call whose inputs require grad records the op's
//                backward node;
//   4. compute:  the backend kernel, or the composition of other ops.
// An op is a small struct (its operands and attributes) with
//   OpId id() const;  Inputs inputs() const;  R compute() const;
// and, where its table entry says it has them,
//   void lower(nnp_onnx_graph&, const R&) const;   (trace form NODES)
//   void differentiate(R&) const;                  (a backward node)
// and a view op says so (static constexpr bool is_view = true).
// Layers cost one relaxed load each when their feature is off.
#pragma once

#include <type_traits>
#include <utility>

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

namespace detail {
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

template <typename Op>
auto dispatch(const Op& op, Face face) -> decltype(op.compute()) {
  using Result = decltype(op.compute());
  const OpSchema& s = schema(op.id());
  const Inputs inputs = op.inputs();
  ProfileLayer profile(s, inputs);
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

}  // namespace nnp::core::dispatch
