// The autograd graph: each op that records history creates a Node holding
// what its backward needs; edges lead to the nodes of its inputs.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../object_pool.hpp"
#include "../tensor.hpp"

namespace nnp::core::autograd {

struct Node;
struct AutogradMeta;

// Gradient lists are short (one to four) and made for every node a backward
// runs: their arrays come from per-thread block pools.
using Grads = std::vector<TensorRef, PoolAllocator<TensorRef>>;

struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
};

// A hook on a gradient: returns a replacement or an empty TensorRef.
using GradHook = std::function<TensorRef(const Tensor& grad)>;
// A hook on a leaf that runs once its .grad has been accumulated into.
using PostAccumulateGradHook = std::function<void(Tensor& leaf)>;

// Enough of an output to make a zero gradient for it.
struct OutputMeta {
  Dims shape;
  nnp_dtype dtype = NNP_F32;
  nnp_device device{};
};

struct Node {
  virtual ~Node() = default;
  virtual const char* name() const = 0;
  // grads holds one gradient per output (missing ones are zero-filled by
  // the engine); returns one per next edge (empty where there is none).
  virtual Grads apply(Grads& grads) = 0;
  // Drops saved tensors once backward has used them (unless retain_graph).
  virtual void release_saved() {}

  // Made for every recorded op, and short: from the block pools too.
  std::vector<Edge, PoolAllocator<Edge>> next_edges;
  std::vector<OutputMeta, PoolAllocator<OutputMeta>> outputs;
  uint64_t sequence_nr = 0;
  bool released = false;

  // Hooks of non-leaf tensors produced here, by output index, in
  // registration order; and the tensors that retain their gradient.
  std::map<uint64_t, std::pair<uint32_t, GradHook>> tensor_hooks;
  std::vector<std::pair<uint32_t, std::weak_ptr<AutogradMeta>>> retained;
  // Called with the complete output gradients before apply (may replace
  // them) and with the input gradients after (may replace them).
  std::vector<std::function<void(Grads& grad_outputs)>> pre_hooks;
  std::vector<std::function<void(Grads& grad_inputs, const Grads& grad_outputs)>> post_hooks;
};

// A node whose backward is a closure; dropping the closure drops what it saved.
class FunctionNode : public Node {
 public:
  using Backward = std::function<Grads(Grads& grads)>;
  FunctionNode(const char* name, Backward backward) : name_(name), backward_(std::move(backward)) {}
  const char* name() const override { return name_; }
  Grads apply(Grads& grads) override;
  void release_saved() override { backward_ = nullptr; }

 private:
  const char* name_;
  Backward backward_;
};

// Per-tensor autograd state, allocated only for tensors that take part.
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  TensorRef grad;
  std::shared_ptr<Node> grad_fn;  // empty for leaves
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;                              // leaves only
  std::map<uint64_t, GradHook> hooks;                                // leaves only; non-leaf hooks live on grad_fn
  std::map<uint64_t, PostAccumulateGradHook> post_accumulate_hooks;  // leaves only
  std::string name;                                                  // for messages, e.g. "weight"
};

// The node that adds incoming gradients into a leaf's .grad.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(TensorRef leaf) : leaf_(std::move(leaf)) {}
  const char* name() const override { return "AccumulateGrad"; }
  Grads apply(Grads& grads) override;
  const TensorRef& leaf() const { return leaf_; }

 private:
  TensorRef leaf_;
  std::mutex mutex_;  // backward passes on several threads may reach one leaf
};

uint64_t next_sequence_nr();
uint64_t next_hook_id();

}  // namespace nnp::core::autograd
