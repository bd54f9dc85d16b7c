// Recording history: how a differentiable op attaches a backward node to its
// outputs, and how inputs are connected to the graph.
#pragma once

#include <initializer_list>

#include "../object_pool.hpp"
#include "grad_mode.hpp"
#include "node.hpp"

namespace nnp::core::autograd {

// Rebuilds the history of a view whose storage was written since its
// history was made (autograd/views.hpp).
void refresh_view(const Tensor& view);

inline bool requires_grad(const Tensor& t) {
  if (t.view_base &&
      t.view_version.load(std::memory_order_relaxed) != t.storage->version.load(std::memory_order_relaxed))
    refresh_view(t);
  return t.autograd && t.autograd->requires_grad;
}

// True when grad mode is on and any input requires grad.
inline bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t && requires_grad(*t)) return true;
  return false;
}

// Where t's gradient goes: its grad_fn, its leaf accumulator, or nowhere.
Edge gradient_edge(const Tensor& t);

// Gives out a new grad_fn (it becomes a non-leaf that requires grad).
void set_history(Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr);

// Connects node to inputs and outputs and records it.
void attach(const std::shared_ptr<Node>& node, std::initializer_list<const Tensor*> inputs,
            std::initializer_list<Tensor*> outputs);

// The usual case: one closure as the backward of an op with these inputs
// and outputs.
inline void record(const char* name, std::initializer_list<const Tensor*> inputs,
                   std::initializer_list<Tensor*> outputs, FunctionNode::Backward backward) {
  attach(std::allocate_shared<FunctionNode>(PoolAllocator<FunctionNode>(), name, std::move(backward)), inputs, outputs);
}

// Gradients of broadcasting ops: sums grad down to `shape` (NumPy rules).
TensorRef sum_to(const TensorRef& grad, const Dims& shape);

AutogradMeta& meta_of(Tensor& t);  // creates it on first use

// Names the backward a node runs while it runs, for the messages of the
// saved-tensor check (math::SavedTensor).
class RunningBackward {
 public:
  explicit RunningBackward(const char* name);
  ~RunningBackward();
  RunningBackward(const RunningBackward&) = delete;
  RunningBackward& operator=(const RunningBackward&) = delete;

 private:
  const char* outer_;
};

}  // namespace nnp::core::autograd
