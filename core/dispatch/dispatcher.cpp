#include "dispatcher.hpp"

#include <cstring>

#include "../dtype.hpp"
#include "../onnx/onnx_graph.hpp"

namespace nnp::core::dispatch {
namespace {

// How a refusal names an op the user may never have called by that name.
const char* refusal_subject(const OpSchema& op) {
  if (std::strcmp(op.name, "random") == 0) return "random (drawing random numbers: rand, randn, randint)";
  if (std::strcmp(op.name, "copy_") == 0) return "copy_ (an in-place copy during forward)";
  if (std::strcmp(op.name, "assign") == 0) return "assign (an in-place write during forward)";
  return op.name;
}

}  // namespace

AutocastLayer::Outcome AutocastLayer::cast(OpId op, Inputs inputs, TensorRef* casts) {
  const Tensor* first = nullptr;
  for (int32_t i = 0; i < inputs.count && !first; ++i)
    if (inputs.data[i] && is_floating(inputs.data[i]->dtype)) first = inputs.data[i];
  if (!first) return UNLISTED;
  const autocast::Policy policy = autocast::policy_of(op, autocast::device_type_of(*first));
  if (policy == autocast::Policy::NONE) return UNLISTED;
  return autocast::cast_inputs(policy, op_name(op), inputs.data, inputs.count, casts) ? CAST : UNCHANGED;
}

void ProfileLayer::open(const OpSchema& op, Inputs inputs) {
  token_ = profiler::begin(NNP_PROFILE_OP, op.name);
  if (token_.index >= 0) profiler::describe_inputs(token_, inputs.data, inputs.count);
}

void TraceLayer::enter(const OpSchema& op) {
  op_ = &op;
  graph_ = onnx::enter_op();
  entered_ = true;
  if (graph_ && op.trace == TraceForm::REFUSED) onnx::refuse_op(refusal_subject(op));
}

void TraceLayer::name_constant(const Tensor& out) const {
  graph_->constant_hints[&out] = op_->name;
  graph_->keep.push_back(TensorRef::share(&out));  // no later tensor takes its address and its name
}

namespace detail {

NodeTag::NodeTag(nnp_onnx_graph& g, const char* op) : g_(g), outer_(g.tagging_op) { g.tagging_op = op; }
NodeTag::~NodeTag() { g_.tagging_op = outer_; }

}  // namespace detail

}  // namespace nnp::core::dispatch
