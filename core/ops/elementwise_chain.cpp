// A chain of elementwise ops through the backend's optional
// elementwise_chain kernel (ABI 1.19): one pass over memory instead of one
// per op, taken only where nothing needs the ops' history (graph mode's
// plans without gradients). Where it does not apply the caller runs the ops
// one at a time, which also gives every error its usual message.
#include <algorithm>
#include <vector>

#include "../autograd/grad_mode.hpp"
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../onnx/trace.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

constexpr size_t kMaxInputs = 16, kMaxSteps = 64;

struct ElementwiseChainOp {
  const Tensor* in[kMaxInputs];
  int32_t count;
  const std::vector<nnp_elementwise_step>* steps;
  Dims shape;  // the inputs broadcast together
  dispatch::OpId id() const { return dispatch::OpId::ELEMENTWISE_CHAIN; }
  dispatch::Inputs inputs() const { return {in, count}; }
  TensorRef compute() const {
    const Tensor& first = *in[0];
    TensorRef out = make_tensor_like(shape, NNP_F32, first);
    nnp_view views[kMaxInputs];
    const nnp_view* pointers[kMaxInputs];
    for (int32_t i = 0; i < count; ++i) {
      views[i] = broadcast_view(*in[i], shape);
      pointers[i] = &views[i];
    }
    const nnp_view vo = kernel_view(*out);
    run_kernel(first, "elementwise_chain",
               first.backend().elementwise_chain()(&kernel_ctx(first), pointers, count, steps->data(),
                                                   static_cast<int32_t>(steps->size()), &vo));
    return out;
  }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_elementwise_chain(g, std::vector<const Tensor*>(in, in + count), *steps, *out);
  }
};

// The inputs' shapes broadcast together, or false where they do not.
bool broadcast_all(const std::vector<const Tensor*>& inputs, Dims& shape) {
  shape = inputs[0]->shape;
  for (const Tensor* t : inputs) {
    const Dims& d = t->shape;
    Dims out;
    out.ndim = std::max(shape.ndim, d.ndim);
    for (int32_t i = 0; i < out.ndim; ++i) {
      const int32_t ia = shape.ndim - out.ndim + i, ib = d.ndim - out.ndim + i;
      const int64_t sa = ia >= 0 ? shape.d[ia] : 1, sb = ib >= 0 ? d.d[ib] : 1;
      if (sa != sb && sa != 1 && sb != 1) return false;
      out.d[i] = sa == 1 ? sb : sa;
    }
    shape = out;
  }
  return true;
}

}  // namespace

TensorRef elementwise_chain_kernel(const std::vector<const Tensor*>& inputs,
                                   const std::vector<nnp_elementwise_step>& steps) {
  if (inputs.empty() || inputs.size() > kMaxInputs || steps.empty() || steps.size() > kMaxSteps) return {};
  const Tensor& first = *inputs[0];
  if (!first.backend().elementwise_chain()) return {};
  for (const Tensor* t : inputs)
    if (t->dtype != NNP_F32 || t->device.backend != first.device.backend || t->device.index != first.device.index)
      return {};
  if (autograd::grad_enabled())
    for (const Tensor* t : inputs)
      if (autograd::requires_grad(*t)) return {};
  const int32_t n_inputs = static_cast<int32_t>(inputs.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    const nnp_elementwise_step& st = steps[s];
    const int32_t defined = n_inputs + static_cast<int32_t>(s);  // operands a step may read
    const bool unary = st.kind == NNP_STEP_UNARY;
    if (st.a < 0 || st.a >= defined || (!unary && (st.b < 0 || st.b >= defined))) return {};
    if (unary ? !first.backend().computes_unary(static_cast<nnp_unary_op>(st.op))
              : (st.kind != NNP_STEP_BINARY || st.op < NNP_BINARY_ADD || st.op > NNP_BINARY_MINIMUM))
      return {};
  }
  ElementwiseChainOp op{};
  if (!broadcast_all(inputs, op.shape)) return {};
  int64_t numel = 1;
  for (int32_t i = 0; i < op.shape.ndim; ++i) numel *= op.shape.d[i];
  if (numel == 0) return {};
  op.count = static_cast<int32_t>(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) op.in[i] = inputs[i];
  op.steps = &steps;
  return dispatch::dispatch(op, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
