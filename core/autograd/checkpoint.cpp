#include "checkpoint.hpp"

#include <algorithm>
#include <utility>

#include "../autocast/autocast.hpp"
#include "../error.hpp"
#include "../random_state.hpp"
#include "../shape.hpp"
#include "engine.hpp"
#include "grad_math.hpp"
#include "grad_mode.hpp"
#include "record.hpp"
#include "tensor_autograd.hpp"

namespace nnp::core::autograd {
namespace {

const char* const kName = "CheckpointFunctionBackward";

// Leaves sharing the inputs' data, requiring grad as they do: the segment's
// graph starts at them instead of running into the graph before it.
std::vector<TensorRef> detached_inputs(const std::vector<TensorRef>& inputs) {
  std::vector<TensorRef> out;
  out.reserve(inputs.size());
  for (const TensorRef& t : inputs) {
    TensorRef d = detach(*t);
    if (requires_grad(*t)) set_requires_grad(*d, true);
    out.push_back(std::move(d));
  }
  return out;
}

// The generators the segment may draw from: the host's and the inputs'
// devices' (PyTorch's CPU state and its inputs' CUDA devices).
struct RngStates {
  std::vector<std::pair<nnp_device, RngState>> states;
  static RngStates of(const std::vector<TensorRef>& inputs) {
    RngStates s;
    auto add = [&](nnp_device d) {
      for (const auto& [known, state] : s.states)
        if (known.backend == d.backend && known.index == d.index) return;
      s.states.emplace_back(d, device_rng_state(d));
    };
    add(host_rng_device());
    for (const TensorRef& t : inputs) add(t->device);
    return s;
  }
  void apply() const {
    for (const auto& [device, state] : states) set_device_rng_state(device, state);
  }
};

class CheckpointNode : public Node {
 public:
  CheckpointNode(CheckpointFunction fn, std::vector<TensorRef> inputs, bool preserve_rng_state)
      : fn_(std::move(fn)),
        preserve_rng_state_(preserve_rng_state),
        rng_(RngStates::of(inputs)),
        autocast_(autocast::snapshot()) {
    for (TensorRef& t : inputs) saved_.emplace_back(std::move(t));
  }
  const char* name() const override { return kName; }
  void release_saved() override {
    saved_.clear();
    fn_ = nullptr;
  }

  // Edges: first the inputs that require grad (input_edges_ of them, in
  // order), then the segment's other ways out.
  void connect(const std::vector<Edge>& input_edges, std::vector<int32_t> differentiable_inputs,
               const std::vector<Edge>& exits) {
    differentiable_inputs_ = std::move(differentiable_inputs);
    for (const Edge& e : input_edges) next_edges.push_back(e);
    for (const Edge& e : exits) next_edges.push_back(e);
  }
  void set_outputs(std::vector<int32_t> differentiable_outputs, int32_t output_count) {
    differentiable_outputs_ = std::move(differentiable_outputs);
    output_count_ = output_count;
  }

  Grads apply(Grads& grads) override {
    if (!fn_)
      fail(NNP_INVALID_ARGUMENT, "backward: trying to go through ", kName,
           " a second time, but its saved inputs were freed after the first backward; pass retain_graph "
           "to the first call if you need to go backward twice");
    std::vector<TensorRef> inputs;
    for (const math::SavedTensor& s : saved_) inputs.push_back(s.values());  // checked: not written since
    std::vector<TensorRef> detached = detached_inputs(inputs);

    // The forward again, as it ran: same generators, same autocast state.
    std::vector<TensorRef> outputs;
    {
      const RngStates now = RngStates::of(inputs);
      if (preserve_rng_state_) rng_.apply();
      struct PutBack {
        const RngStates& now;
        bool active;
        ~PutBack() {
          if (active) now.apply();
        }
      } put_back{now, preserve_rng_state_};
      autocast::Restore casts(autocast_);
      GradModeGuard grad_on(true);
      outputs = fn_(detached);
    }
    if (static_cast<int32_t>(outputs.size()) != output_count_)
      fail(NNP_INVALID_ARGUMENT, "checkpoint: the function gave ", output_count_, " results in forward but ",
           outputs.size(), " when recomputed in backward; it must compute the same thing both times");

    // Backward through the new graph, stopping where it leaves the segment.
    std::vector<Node*> stops;
    std::vector<std::shared_ptr<Node>> held;
    for (int32_t i : differentiable_inputs_) {
      held.push_back(gradient_edge(*detached[static_cast<size_t>(i)]).node);
      stops.push_back(held.back().get());
    }
    const size_t first_exit = differentiable_inputs_.size();
    for (size_t e = first_exit; e < next_edges.size(); ++e)
      if (std::find(stops.begin(), stops.end(), next_edges[e].node.get()) == stops.end())
        stops.push_back(next_edges[e].node.get());
    std::vector<TensorRef> roots, root_grads;
    for (size_t k = 0; k < differentiable_outputs_.size(); ++k) {
      const TensorRef& out = outputs[static_cast<size_t>(differentiable_outputs_[k])];
      if (!requires_grad(*out) || out->shape != outputs_meta(k).shape)
        fail(NNP_INVALID_ARGUMENT, "checkpoint: result ", differentiable_outputs_[k],
             " of the recomputed forward differs from the forward's (its shape or whether it requires grad); "
             "the function must compute the same thing both times");
      roots.push_back(out);
      root_grads.push_back(grads[k]);
    }
    std::vector<Grads> captured = backward_until(roots, root_grads, stops);

    Grads result(next_edges.size());
    auto captured_at = [&](Node* node, uint32_t input_nr) -> TensorRef {
      const size_t at = static_cast<size_t>(std::find(stops.begin(), stops.end(), node) - stops.begin());
      return at < captured.size() && input_nr < captured[at].size() ? captured[at][input_nr] : TensorRef();
    };
    for (size_t i = 0; i < first_exit; ++i) result[i] = captured_at(stops[i], 0);
    for (size_t e = first_exit; e < next_edges.size(); ++e)
      result[e] = captured_at(next_edges[e].node.get(), next_edges[e].input_nr);
    return result;
  }

 private:
  const OutputMeta& outputs_meta(size_t k) const { return outputs[k]; }

  CheckpointFunction fn_;
  bool preserve_rng_state_;
  RngStates rng_;
  autocast::Snapshot autocast_;
  std::vector<math::SavedTensor> saved_;
  std::vector<int32_t> differentiable_inputs_;
  std::vector<int32_t> differentiable_outputs_;
  int32_t output_count_ = 0;
};

// The edges by which the graph recorded since first_sequence_nr (the
// segment's) leaves it, in the order a walk from the results meets them.
std::vector<Edge> segment_exits(const std::vector<TensorRef>& results, uint64_t first_sequence_nr,
                                const std::vector<Node*>& input_accumulators) {
  auto inside = [&](const Node* n) {
    return n->sequence_nr >= first_sequence_nr && dynamic_cast<const AccumulateGrad*>(n) == nullptr &&
           n->sequence_nr != UINT64_MAX;
  };
  std::vector<Edge> exits;
  std::vector<const Node*> visited;
  std::vector<Node*> stack;
  auto reach = [&](const Edge& e) {
    if (!e.node) return;
    if (!inside(e.node.get())) {
      const bool is_input =
          std::find(input_accumulators.begin(), input_accumulators.end(), e.node.get()) != input_accumulators.end();
      const bool known = std::any_of(exits.begin(), exits.end(),
                                     [&](const Edge& x) { return x.node == e.node && x.input_nr == e.input_nr; });
      if (!is_input && !known) exits.push_back(e);
      return;
    }
    if (std::find(visited.begin(), visited.end(), e.node.get()) != visited.end()) return;
    visited.push_back(e.node.get());
    stack.push_back(e.node.get());
  };
  for (const TensorRef& r : results)
    if (requires_grad(*r)) reach(gradient_edge(*r));
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_edges) reach(e);
  }
  return exits;
}

}  // namespace

std::vector<TensorRef> checkpoint(CheckpointFunction fn, const std::vector<TensorRef>& inputs,
                                  bool preserve_rng_state) {
  if (!grad_enabled()) return fn(inputs);
  auto node = std::make_shared<CheckpointNode>(fn, inputs, preserve_rng_state);

  // The forward, recorded from detached inputs, to see where its graph leads.
  const uint64_t first_sequence_nr = next_sequence_nr();
  std::vector<TensorRef> detached = detached_inputs(inputs);
  std::vector<TensorRef> results = fn(detached);
  std::vector<Node*> input_accumulators;
  std::vector<std::shared_ptr<Node>> held;
  std::vector<Edge> input_edges;
  std::vector<int32_t> differentiable_inputs;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (requires_grad(*inputs[i])) {
      held.push_back(gradient_edge(*detached[i]).node);
      input_accumulators.push_back(held.back().get());
      input_edges.push_back(gradient_edge(*inputs[i]));
      differentiable_inputs.push_back(static_cast<int32_t>(i));
    }
  node->connect(input_edges, std::move(differentiable_inputs),
                segment_exits(results, first_sequence_nr, input_accumulators));
  node->sequence_nr = next_sequence_nr();

  // The results, holding their data but not the segment's graph.
  std::vector<TensorRef> out;
  std::vector<int32_t> differentiable_outputs;
  for (size_t k = 0; k < results.size(); ++k) {
    const Tensor& r = *results[k];
    if (!requires_grad(r)) {
      out.push_back(results[k]);
      continue;
    }
    TensorRef alias = make_view(r, r.shape, r.strides, r.offset);
    set_history(*alias, node, static_cast<uint32_t>(differentiable_outputs.size()));
    node->outputs.push_back({r.shape, r.dtype, r.device});
    differentiable_outputs.push_back(static_cast<int32_t>(k));
    out.push_back(std::move(alias));
  }
  node->set_outputs(std::move(differentiable_outputs), static_cast<int32_t>(results.size()));
  return out;  // results and detached go here, and the segment's graph with them
}

}  // namespace nnp::core::autograd
