#include "module_call.hpp"

#include <mutex>
#include <optional>

#include "../autograd/custom_function.hpp"
#include "../autograd/node.hpp"
#include "../autograd/record.hpp"
#include "../error.hpp"

namespace nnp::core::nn {
namespace {

uint64_t next_id() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

struct GlobalHooks {
  std::mutex mutex;  // guards every hook list, global and per module
  // Indexed by nnp_module_hook_kind.
  std::shared_ptr<HookList<nnp_module_hook_fn>> lists[4] = {
      std::make_shared<HookList<nnp_module_hook_fn>>(), std::make_shared<HookList<nnp_module_hook_fn>>(),
      std::make_shared<HookList<nnp_module_hook_fn>>(), std::make_shared<HookList<nnp_module_hook_fn>>()};
};
GlobalHooks& global_hooks() {
  static GlobalHooks* hooks = new GlobalHooks();
  return *hooks;
}

std::vector<const nnp_tensor*> raw(const std::vector<TensorRef>& tensors) {
  std::vector<const nnp_tensor*> out;
  for (const TensorRef& t : tensors) out.push_back(t.get());
  return out;
}

// Runs one hook; entries of `replace` it sets become new references.
void run_hook(Module& m, const HookEntry<nnp_module_hook_fn>& hook, const std::vector<TensorRef>& a,
              const std::vector<TensorRef>& b, std::vector<TensorRef>& replacements) {
  std::vector<const nnp_tensor*> ra = raw(a), rb = raw(b);
  std::vector<nnp_tensor*> replace(replacements.size(), nullptr);
  nnp_status status = hook.fn(&m, ra.data(), static_cast<int32_t>(ra.size()), rb.data(),
                              static_cast<int32_t>(rb.size()), replace.data(), hook.user_data.get());
  for (size_t i = 0; i < replace.size(); ++i)
    if (replace[i]) replacements[i] = TensorRef::adopt(replace[i]);
  if (status != NNP_OK) check_plugin_status(status, m.type_name.c_str(), "module hook");
}

// Global hooks of a kind, then the module's own.
HookList<nnp_module_hook_fn> all_hooks(const Module& m, nnp_module_hook_kind kind) {
  GlobalHooks& g = global_hooks();
  std::lock_guard<std::mutex> lock(g.mutex);
  HookList<nnp_module_hook_fn> hooks = *g.lists[kind];
  const HookList<nnp_module_hook_fn>& own = *m.hooks[kind];
  hooks.insert(hooks.end(), own.begin(), own.end());
  return hooks;
}

void run_replacing(Module& m, const HookList<nnp_module_hook_fn>& hooks, std::vector<TensorRef>& tensors) {
  for (const auto& hook : hooks) {
    std::vector<TensorRef> replaced(tensors.size());
    run_hook(m, hook, tensors, {}, replaced);
    for (size_t i = 0; i < tensors.size(); ++i)
      if (replaced[i]) tensors[i] = std::move(replaced[i]);
  }
}

// Pass-through autograd node marking where a module's inputs or outputs are,
// so the module's backward hooks see the gradients there.
class BackwardHookNode : public autograd::Node {
 public:
  explicit BackwardHookNode(const char* name) : name_(name) {}
  const char* name() const override { return name_; }
  autograd::Grads apply(autograd::Grads& grads) override { return grads; }

 private:
  const char* name_;
};

// Gradients captured at the output side, read at the input side.
struct BackwardHookState {
  std::vector<TensorRef> grad_outputs;
  bool input_hooks_ran = false;
};

// Routes the tensors that require grad through one identity node.
std::shared_ptr<BackwardHookNode> wrap(const char* name, std::vector<TensorRef>& tensors) {
  std::vector<size_t> tracked;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i] && autograd::requires_grad(*tensors[i])) tracked.push_back(i);
  if (tracked.empty()) return nullptr;
  auto node = std::make_shared<BackwardHookNode>(name);
  node->sequence_nr = autograd::next_sequence_nr();
  for (size_t i : tracked) node->next_edges.push_back(autograd::gradient_edge(*tensors[i]));
  uint32_t index = 0;
  for (size_t i : tracked) {
    Tensor& original = *tensors[i];
    TensorRef alias = make_view(original, original.shape, original.strides, original.offset);
    node->outputs.push_back(autograd::OutputMeta{alias->shape, alias->dtype, alias->device});
    autograd::set_history(*alias, node, index++);
    tensors[i] = alias;
  }
  return node;
}

void run_backward_hooks(Module& m, const std::vector<TensorRef>& grad_inputs, BackwardHookState& state,
                        std::vector<TensorRef>* replace_into) {
  for (const auto& hook : all_hooks(m, NNP_HOOK_BACKWARD)) {
    std::vector<TensorRef> replaced(grad_inputs.size());
    run_hook(m, hook, grad_inputs, state.grad_outputs, replaced);
    if (!replace_into) continue;
    for (size_t i = 0; i < replaced.size(); ++i)
      if (replaced[i]) (*replace_into)[i] = std::move(replaced[i]);
  }
}

void setup_backward_hooks(Module& m, std::vector<TensorRef>& inputs, std::shared_ptr<BackwardHookState>& state,
                          std::shared_ptr<BackwardHookNode>& input_node) {
  state = std::make_shared<BackwardHookState>();
  input_node = wrap("BackwardHookFunctionBackward", inputs);
  if (!input_node) return;
  ModuleRef keep = ModuleRef::share(&m);
  std::weak_ptr<BackwardHookState> weak = state;
  input_node->pre_hooks.push_back([keep, weak](autograd::Grads& grads) {
    std::shared_ptr<BackwardHookState> s = weak.lock();
    if (!s) return;
    s->input_hooks_ran = true;
    run_backward_hooks(*keep, grads, *s, &grads);
  });
  // The node keeps the state alive as long as the graph lives.
  input_node->post_hooks.push_back([state](autograd::Grads&, const autograd::Grads&) {});
}

void finish_backward_hooks(Module& m, TensorRef& output, const std::shared_ptr<BackwardHookState>& state,
                           const std::shared_ptr<BackwardHookNode>& input_node, size_t n_inputs) {
  std::vector<TensorRef> outputs{output};
  auto output_node = wrap("BackwardHookFunctionBackward", outputs);
  if (!output_node) return;
  output = outputs[0];
  ModuleRef keep = ModuleRef::share(&m);
  bool inputs_tracked = input_node != nullptr;
  output_node->pre_hooks.push_back([keep, state, inputs_tracked, n_inputs](autograd::Grads& grads) {
    for (const auto& hook : all_hooks(*keep, NNP_HOOK_BACKWARD_PRE)) {
      std::vector<TensorRef> replaced(grads.size());
      run_hook(*keep, hook, grads, {}, replaced);
      for (size_t i = 0; i < grads.size(); ++i)
        if (replaced[i]) grads[i] = std::move(replaced[i]);
    }
    state->grad_outputs = grads;
    // No input requires grad: the backward hooks run now, with no input
    // gradients (PyTorch passes None for each).
    if (!inputs_tracked) run_backward_hooks(*keep, std::vector<TensorRef>(n_inputs), *state, nullptr);
  });
}

}  // namespace

template <typename Fn>
nnp_hook_handle* add_hook(const std::shared_ptr<HookList<Fn>>& list, Fn fn, std::shared_ptr<void> user_data,
                          bool prepend) {
  HookEntry<Fn> entry{next_id(), fn, std::move(user_data)};
  const uint64_t id = entry.id;
  std::lock_guard<std::mutex> lock(global_hooks().mutex);
  if (prepend)
    list->insert(list->begin(), std::move(entry));
  else
    list->push_back(std::move(entry));
  std::weak_ptr<HookList<Fn>> weak = list;
  return make_hook_handle([weak, id] {
    std::shared_ptr<void> released;  // the hook's data goes after the lock is given back
    {
      std::lock_guard<std::mutex> lock(global_hooks().mutex);
      if (auto alive = weak.lock())
        for (auto it = alive->begin(); it != alive->end(); ++it)
          if (it->id == id) {
            released = std::move(it->user_data);
            alive->erase(it);
            break;
          }
    }
  });
}

template <typename Fn>
HookList<Fn> hooks_to_run(const HookList<Fn>& list) {
  std::lock_guard<std::mutex> lock(global_hooks().mutex);
  return list;
}
template nnp_hook_handle* add_hook(const std::shared_ptr<HookList<nnp_module_hook_fn>>&, nnp_module_hook_fn,
                                   std::shared_ptr<void>, bool);
template nnp_hook_handle* add_hook(const std::shared_ptr<HookList<nnp_state_hook_fn>>&, nnp_state_hook_fn,
                                   std::shared_ptr<void>, bool);
template HookList<nnp_state_hook_fn> hooks_to_run(const HookList<nnp_state_hook_fn>&);

nnp_hook_handle* register_hook(Module& m, nnp_module_hook_kind kind, nnp_module_hook_fn fn,
                               std::shared_ptr<void> user_data, bool prepend) {
  if (kind < NNP_HOOK_FORWARD_PRE || kind > NNP_HOOK_BACKWARD)
    fail(NNP_INVALID_ARGUMENT, "register_hook: unknown hook kind ", kind);
  if (fn == nullptr) fail(NNP_INVALID_ARGUMENT, "register_hook: fn is NULL");
  return add_hook(m.hooks[kind], fn, std::move(user_data), prepend);
}

nnp_hook_handle* register_global_hook(nnp_module_hook_kind kind, nnp_module_hook_fn fn,
                                      std::shared_ptr<void> user_data) {
  if (kind < NNP_HOOK_FORWARD_PRE || kind > NNP_HOOK_BACKWARD)
    fail(NNP_INVALID_ARGUMENT, "register_global_module_hook: unknown hook kind ", kind);
  if (fn == nullptr) fail(NNP_INVALID_ARGUMENT, "register_global_module_hook: fn is NULL");
  return add_hook(global_hooks().lists[kind], fn, std::move(user_data), false);
}

TensorRef call(Module& m, const std::vector<TensorRef>& given) {
  ModuleRef keep = ModuleRef::share(&m);  // hooks may drop other references
  std::vector<TensorRef> inputs = given;
  run_replacing(m, all_hooks(m, NNP_HOOK_FORWARD_PRE), inputs);

  const bool backward_hooks = autograd::grad_enabled() && (!all_hooks(m, NNP_HOOK_BACKWARD).empty() ||
                                                           !all_hooks(m, NNP_HOOK_BACKWARD_PRE).empty());
  std::shared_ptr<BackwardHookState> state;
  std::shared_ptr<BackwardHookNode> input_node;
  if (backward_hooks) setup_backward_hooks(m, inputs, state, input_node);

  if (m.self_detached)
    fail(NNP_INVALID_ARGUMENT, m.type_name, ": the object that implemented this module was destroyed");
  if (!m.vtable.forward) fail(NNP_UNIMPLEMENTED, m.type_name, " has no forward");
  std::vector<const nnp_tensor*> args = raw(inputs);
  nnp_tensor* produced = nullptr;
  const uint64_t since = last_error_serial();
  std::optional<autograd::FunctionOrigin> origin;  // only a plugin's layer has one to record
  if (!m.plugin_origin.empty()) origin.emplace(m.plugin_origin);
  nnp_status status = m.vtable.forward(m.self, &m, args.data(), static_cast<int32_t>(args.size()), &produced);
  origin.reset();
  TensorRef output = TensorRef::adopt(produced);
  if (status != NNP_OK) {
    try {
      check_plugin_status(status, m.type_name.c_str(), "forward", since);
    } catch (const Error& e) {
      if (m.plugin_origin.empty()) throw;
      throw Error(e.status(), str_cat(m.plugin_origin, " forward: ", e.what()));
    }
  }
  if (!output) fail(NNP_INTERNAL, m.type_name, ": forward returned no tensor");

  for (const auto& hook : all_hooks(m, NNP_HOOK_FORWARD)) {
    std::vector<TensorRef> replaced(1);
    run_hook(m, hook, inputs, {output}, replaced);
    if (replaced[0]) output = std::move(replaced[0]);
  }
  if (backward_hooks) finish_backward_hooks(m, output, state, input_node, inputs.size());
  return output;
}

}  // namespace nnp::core::nn
