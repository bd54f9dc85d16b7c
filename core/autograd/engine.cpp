#include "engine.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <queue>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"
#include "../profiler/profiler.hpp"
#include "grad_mode.hpp"
#include "record.hpp"

namespace nnp::core::autograd {
namespace {

// Gradients waiting for a node, one slot per output, summed as they arrive.
struct Pending {
  Grads grads;
  int dependencies = 0;
  bool seen = false;  // reached by the dependency count (and, once queued, not again)
};

// Each reachable node's Pending for one backward, found by address in an
// open-addressed table: a backward over a hundred small ops would otherwise
// spend more on hash-map nodes (one allocation each) than on its kernels.
class PendingTable {
 public:
  PendingTable() : slots_(64, -1) {}
  Pending& operator[](Node* node) {
    size_t at = slot_of(node);
    if (slots_[at] < 0) {
      if ((entries_.size() + 1) * 2 > slots_.size()) {
        grow();
        at = slot_of(node);
      }
      slots_[at] = static_cast<int32_t>(entries_.size());
      entries_.push_back({node, Pending{}});
    }
    return entries_[static_cast<size_t>(slots_[at])].second;
  }

 private:
  // The slot holding node, or the empty one where it would go.
  size_t slot_of(Node* node) const {
    const size_t mask = slots_.size() - 1;
    size_t at = ((reinterpret_cast<uintptr_t>(node) >> 4) * 0x9E3779B97F4A7C15ull >> 32) & mask;
    while (slots_[at] >= 0 && entries_[static_cast<size_t>(slots_[at])].first != node) at = (at + 1) & mask;
    return at;
  }
  void grow() {
    slots_.assign(slots_.size() * 2, -1);
    for (size_t i = 0; i < entries_.size(); ++i) slots_[slot_of(entries_[i].first)] = static_cast<int32_t>(i);
  }
  std::vector<int32_t> slots_;  // a power of two, at most half full
  std::deque<std::pair<Node*, Pending>> entries_;
};

void accumulate(TensorRef& slot, TensorRef grad) {
  if (!grad) return;
  slot = slot ? binary(NNP_BINARY_ADD, *slot, *grad) : std::move(grad);
}

TensorRef zeros_for(const OutputMeta& meta) { return full(meta.shape, 0.0, meta.dtype, meta.device); }

void check_grad(const TensorRef& grad, const OutputMeta& meta, const char* what) {
  if (grad->shape != meta.shape)
    fail(NNP_SHAPE_MISMATCH, "backward: ", what, " has shape ", format_dims(grad->shape), " but ",
         format_dims(meta.shape), " was expected");
  if (grad->dtype != meta.dtype)
    fail(NNP_DTYPE_MISMATCH, "backward: ", what, " is ", dtype_name(grad->dtype), " but ", dtype_name(meta.dtype),
         " was expected");
}

// Runs a node's tensor hooks and retain_grad captures on its complete
// output gradients.
void run_tensor_hooks(Node& node, Grads& grads) {
  for (auto& [id, entry] : node.tensor_hooks) {
    TensorRef& grad = grads[entry.first];
    if (!grad) continue;
    if (TensorRef replaced = entry.second(*grad)) {
      check_grad(replaced, node.outputs[entry.first], "a tensor hook's replacement gradient");
      grad = std::move(replaced);
    }
  }
  for (auto& [index, weak] : node.retained)
    if (std::shared_ptr<AutogradMeta> meta = weak.lock(); meta && grads[index]) {
      // retain_grad accumulates like a leaf's .grad does.
      meta->grad = meta->grad ? binary(NNP_BINARY_ADD, *meta->grad, *grads[index]) : clone(*grads[index]);
    }
}

}  // namespace

Grads AccumulateGrad::apply(Grads& grads) {
  TensorRef grad = std::move(grads[0]);
  if (!grad) return {};
  AutogradMeta& meta = *leaf_->autograd;
  std::vector<PostAccumulateGradHook> post_hooks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [id, hook] : meta.hooks)
      if (TensorRef replaced = hook(*grad)) grad = std::move(replaced);
    if (!meta.grad) {
      // A fresh tensor the leaf owns (never an alias of a graph tensor).
      meta.grad =
          grad->storage->refs.load() == 1 && grad->refs.load() == 1 && grad->is_contiguous() ? grad : clone(*grad);
    } else {
      meta.grad = binary(NNP_BINARY_ADD, *meta.grad, *grad);
    }
    // Copied: a hook may remove itself (or another) while they run.
    for (auto& [id, hook] : meta.post_accumulate_hooks) post_hooks.push_back(hook);
  }
  for (PostAccumulateGradHook& hook : post_hooks) hook(*leaf_);
  return {};
}

namespace {

// The callbacks queued during the backward running on this thread; a
// backward started from a hook has its own.
thread_local std::vector<FinalCallback>* queued_callbacks = nullptr;

class CallbackQueueScope {
 public:
  CallbackQueueScope() : outer_(queued_callbacks) { queued_callbacks = &queue_; }
  ~CallbackQueueScope() { queued_callbacks = outer_; }
  CallbackQueueScope(const CallbackQueueScope&) = delete;
  CallbackQueueScope& operator=(const CallbackQueueScope&) = delete;
  // In order; a callback may queue more, which run after it.
  void run_all() {
    for (size_t i = 0; i < queue_.size(); ++i) {
      FinalCallback callback = std::move(queue_[i]);
      callback();
    }
  }

 private:
  std::vector<FinalCallback> queue_;
  std::vector<FinalCallback>* outer_;
};

}  // namespace

void queue_callback(FinalCallback callback) {
  if (queued_callbacks == nullptr)
    fail(NNP_INVALID_ARGUMENT,
         "autograd_queue_callback: final callbacks can only be queued while a backward pass runs (from a hook)");
  queued_callbacks->push_back(std::move(callback));
}

namespace {

// backward, and backward_until where stops is not null: stop nodes are
// neither run nor looked past, and what reaches them is left in captured.
void run_backward(const std::vector<TensorRef>& roots, std::vector<TensorRef> grad_roots, bool retain_graph,
                  const std::vector<Node*>* stops, std::vector<Grads>* captured) {
  auto is_stop = [stops](Node* node) {
    return stops != nullptr && std::find(stops->begin(), stops->end(), node) != stops->end();
  };
  NoGradGuard no_grad;  // backward formulas do not record (no create_graph)
  CallbackQueueScope callbacks;
  PendingTable pending;
  std::vector<std::shared_ptr<Node>> root_nodes;

  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = *roots[i];
    if (!requires_grad(root))
      fail(NNP_INVALID_ARGUMENT, "backward: tensor ", i, " (shape ", format_dims(root.shape),
           ") does not require grad and has no grad_fn; set requires_grad on a leaf it was computed from");
    TensorRef& grad = grad_roots[i];
    if (!grad) {
      if (root.numel != 1)
        fail(NNP_INVALID_ARGUMENT,
             "backward: a gradient can be created implicitly only for single-element outputs, "
             "but the output has shape ",
             format_dims(root.shape), "; pass the gradient explicitly");
      grad = full(root.shape, 1.0, root.dtype, root.device);
    }
    check_same_device("backward", *grad, root);
    Edge edge = gradient_edge(root);
    if (grad->shape != root.shape)
      fail(NNP_SHAPE_MISMATCH, "backward: gradient shape ", format_dims(grad->shape), " does not match output shape ",
           format_dims(root.shape));
    if (grad->dtype != root.dtype)
      fail(NNP_DTYPE_MISMATCH, "backward: gradient dtype ", dtype_name(grad->dtype), " does not match output dtype ",
           dtype_name(root.dtype));
    Pending& p = pending[edge.node.get()];
    if (p.grads.empty()) p.grads.resize(edge.node->outputs.empty() ? 1 : edge.node->outputs.size());
    accumulate(p.grads[edge.input_nr], grad);
    root_nodes.push_back(edge.node);
  }

  // Count, for every reachable node, how many edges lead into it.
  std::vector<Node*> stack;
  for (const auto& node : root_nodes)
    if (Pending& p = pending[node.get()]; !p.seen) {
      p.seen = true;
      if (!is_stop(node.get())) stack.push_back(node.get());
    }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& edge : node->next_edges) {
      if (!edge.node) continue;
      Pending& next = pending[edge.node.get()];
      next.dependencies++;
      if (!next.seen) {
        next.seen = true;
        if (!is_stop(edge.node.get())) stack.push_back(edge.node.get());
      }
    }
  }

  // Ready nodes run newest first (highest sequence number), as PyTorch does.
  auto later = [](const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) {
    return a->sequence_nr < b->sequence_nr;
  };
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, decltype(later)> ready(later);
  for (const auto& node : root_nodes)
    if (Pending& p = pending[node.get()]; p.dependencies == 0 && p.seen && !is_stop(node.get())) {
      p.seen = false;  // queue once
      ready.push(node);
    }

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    Pending& p = pending[node.get()];
    Grads grads = std::move(p.grads);
    if (node->released)
      fail(NNP_INVALID_ARGUMENT, "backward: trying to go through ", node->name(),
           " a second time, but its saved tensors were freed after the first backward; pass retain_graph "
           "to the first call if you need to go backward twice");
    profiler::Scope profile(
        NNP_PROFILE_BACKWARD, [&] { return std::string("autograd::engine::evaluate_function: ") + node->name(); }, 0);
    if (grads.size() < node->outputs.size()) grads.resize(node->outputs.size());
    for (size_t i = 0; i < node->outputs.size(); ++i)
      if (!grads[i]) grads[i] = zeros_for(node->outputs[i]);
    run_tensor_hooks(*node, grads);
    for (auto& hook : node->pre_hooks) hook(grads);
    Grads grad_outputs_for_hooks = node->post_hooks.empty() ? Grads{} : grads;
    Grads input_grads = node->apply(grads);
    for (auto& hook : node->post_hooks) hook(input_grads, grad_outputs_for_hooks);
    if (!retain_graph && dynamic_cast<AccumulateGrad*>(node.get()) == nullptr) {
      node->release_saved();
      node->released = true;
    }
    for (size_t i = 0; i < node->next_edges.size(); ++i) {
      const Edge& edge = node->next_edges[i];
      if (!edge.node) continue;
      Pending& next = pending[edge.node.get()];
      if (next.grads.empty()) next.grads.resize(edge.node->outputs.empty() ? 1 : edge.node->outputs.size());
      if (i < input_grads.size() && input_grads[i]) accumulate(next.grads[edge.input_nr], input_grads[i]);
      if (--next.dependencies == 0 && !is_stop(edge.node.get())) ready.push(edge.node);
    }
  }
  if (captured) {
    captured->clear();
    for (Node* stop : *stops) {
      Grads grads = std::move(pending[stop].grads);
      grads.resize(stop->outputs.empty() ? 1 : stop->outputs.size());
      captured->push_back(std::move(grads));
    }
  }
  callbacks.run_all();
}

}  // namespace

void backward(const std::vector<TensorRef>& roots, std::vector<TensorRef> grad_roots, bool retain_graph) {
  run_backward(roots, std::move(grad_roots), retain_graph, nullptr, nullptr);
}

std::vector<Grads> backward_until(const std::vector<TensorRef>& roots, std::vector<TensorRef> grad_roots,
                                  const std::vector<Node*>& stops) {
  std::vector<Grads> captured;
  run_backward(roots, std::move(grad_roots), false, &stops, &captured);
  return captured;
}

}  // namespace nnp::core::autograd
