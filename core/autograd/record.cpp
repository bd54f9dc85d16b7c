#include "record.hpp"

#include <atomic>
#include <mutex>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "../shape.hpp"
#include "grad_math.hpp"

namespace nnp::core::autograd {

uint64_t next_sequence_nr() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

uint64_t next_hook_id() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

namespace {
// The backward running on this thread, for the saved-tensor check's message.
thread_local const char* running_backward = nullptr;
}  // namespace

RunningBackward::RunningBackward(const char* name) : outer_(running_backward) { running_backward = name; }
RunningBackward::~RunningBackward() { running_backward = outer_; }

Grads FunctionNode::apply(Grads& grads) {
  if (!backward_)
    fail(NNP_INVALID_ARGUMENT, "backward: trying to go through ", name_,
         " a second time, but its saved tensors were freed after the first backward; pass retain_graph "
         "to the first call if you need to go backward twice");
  RunningBackward running(name_);
  return backward_(grads);
}

void math::SavedTensor::modified() const {
  const bool replaced = t_->storage->id != storage_id_;
  fail(NNP_INVALID_ARGUMENT,
       "one of the variables needed for gradient computation has been modified by an inplace operation: [",
       dtype_name(t_->dtype), " ", format_dims(t_->shape), "], needed by ",
       running_backward ? running_backward : "backward",
       replaced ? ", had its data replaced (by an optimizer step or a move)"
                : ", is at version " + std::to_string(t_->storage->version.load()) + "; expected version " +
                      std::to_string(version_) + " instead",
       ". Hint: clone() the tensor before writing to it in place, or write to it after backward");
}

AutogradMeta& meta_of(Tensor& t) {
  if (!t.autograd) t.autograd = std::allocate_shared<AutogradMeta>(PoolAllocator<AutogradMeta>());
  return *t.autograd;
}

Edge gradient_edge(const Tensor& t) {
  if (!requires_grad(t)) return {};
  AutogradMeta& meta = *t.autograd;
  if (meta.grad_fn) return {meta.grad_fn, meta.output_nr};
  // Threads calling one module at once share its parameters: one of them
  // creates a leaf's accumulator, the others must see that one.
  static std::mutex accumulator_mutex;
  std::lock_guard<std::mutex> lock(accumulator_mutex);
  std::shared_ptr<Node> accumulator = meta.grad_accumulator.lock();
  if (!accumulator) {
    accumulator = std::make_shared<AccumulateGrad>(TensorRef::share(&t));
    accumulator->sequence_nr = UINT64_MAX;  // leaves run last among ready nodes
    meta.grad_accumulator = accumulator;
  }
  return {accumulator, 0};
}

void set_history(Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  AutogradMeta& meta = meta_of(out);
  meta.requires_grad = true;
  meta.grad_fn = node;
  meta.output_nr = output_nr;
}

void attach(const std::shared_ptr<Node>& node, std::initializer_list<const Tensor*> inputs,
            std::initializer_list<Tensor*> outputs) {
  node->sequence_nr = next_sequence_nr();
  node->next_edges.reserve(inputs.size());
  for (const Tensor* input : inputs) node->next_edges.push_back(input ? gradient_edge(*input) : Edge{});
  uint32_t index = 0;
  for (Tensor* out : outputs) {
    node->outputs.push_back(OutputMeta{out->shape, out->dtype, out->device});
    set_history(*out, node, index++);
  }
}

TensorRef sum_to(const TensorRef& grad, const Dims& shape) {
  if (grad->shape == shape) return grad;
  const int32_t lead = grad->shape.ndim - shape.ndim;
  int32_t dims[NNP_MAX_DIMS];
  int32_t count = 0;
  for (int32_t i = 0; i < grad->shape.ndim; ++i)
    if (i < lead || (shape.d[i - lead] == 1 && grad->shape.d[i] != 1)) dims[count++] = i;
  TensorRef summed = count ? reduce(NNP_REDUCE_SUM, *grad, dims, count, true, 0) : grad;
  return reshape(*summed, shape.d, shape.ndim);
}

}  // namespace nnp::core::autograd
