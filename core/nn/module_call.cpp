#include "module_call.hpp"

#include <mutex>
#include <optional>

#include "../autograd/custom_function.hpp"
#include "../autograd/node.hpp"
#include "../autograd/record.hpp"
#include "../error.hpp"
#include "../onnx/trace.hpp"
#include "../profiler/profiler.hpp"
#include "parametrize.hpp"

namespace nnp::core::nn {
namespace {

uint64_t next_id() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

struct GlobalHooks {
  std::mutex mutex;  // guards every hook list, global and per module
  // Indexed by nnp_module_hook_kind.
  std::shared_ptr<HookList<ModuleHookFn>> lists[4] = {
      std::make_shared<HookList<ModuleHookFn>>(), std::make_shared<HookList<ModuleHookFn>>(),
      std::make_shared<HookList<ModuleHookFn>>(), std::make_shared<HookList<ModuleHookFn>>()};
};
GlobalHooks& global_hooks() {
  static GlobalHooks* hooks = new GlobalHooks();
  return *hooks;
}

std::vector<const nnp_tensor*> raw(const std::vector<TensorRef>& tensors) {
  std::vector<const nnp_tensor*> out;
  out.reserve(tensors.size());
  for (const TensorRef& t : tensors) out.push_back(t.get());
  return out;
}

// The tensor entries of a list (the arguments or results a tensor hook and
// autograd see), and the positions they came from, to put them back.
struct TensorEntries {
  std::vector<size_t> positions;
  std::vector<TensorRef> tensors;

  explicit TensorEntries(const nnp_list& list) {
    for (size_t i = 0; i < list.entries.size(); ++i)
      if (list.entries[i].tensor) {
        positions.push_back(i);
        tensors.push_back(list.entries[i].tensor);
      }
  }
  void put_back(nnp_list& list) const {
    for (size_t i = 0; i < positions.size(); ++i)
      if (tensors[i]) list.entries[positions[i]].tensor = tensors[i];
  }
};

// Runs one tensor hook; entries of `replace` it sets become new references.
void run_hook(Module& m, const HookEntry<ModuleHookFn>& hook, const std::vector<TensorRef>& a,
              const std::vector<TensorRef>& b, std::vector<TensorRef>& replacements) {
  std::vector<const nnp_tensor*> ra = raw(a), rb = raw(b);
  std::vector<nnp_tensor*> replace(replacements.size(), nullptr);
  nnp_status status = hook.fn.tensors(&m, ra.data(), static_cast<int32_t>(ra.size()), rb.data(),
                                      static_cast<int32_t>(rb.size()), replace.data(), hook.user_data.get());
  for (size_t i = 0; i < replace.size(); ++i)
    if (replace[i]) replacements[i] = TensorRef::adopt(replace[i]);
  if (status != NNP_OK) check_plugin_status(status, m.type_name.c_str(), "module hook");
}

// Runs one values hook; its replacement list, when it gave one, goes to *into.
void run_values_hook(Module& m, const HookEntry<ModuleHookFn>& hook, const nnp_list& args, const nnp_list* outputs,
                     nnp_list& into) {
  nnp_list* replace = nullptr;
  nnp_status status = hook.fn.values(&m, &args, outputs, &replace, hook.user_data.get());
  std::unique_ptr<nnp_list> replacement(replace);
  if (status != NNP_OK) check_plugin_status(status, m.type_name.c_str(), "module hook");
  if (!replacement) return;
  if (!outputs) check_positional(*replacement, "a forward pre-hook's replacement arguments");
  into = std::move(*replacement);
}

// Global hooks of a kind, then the module's own.
HookList<ModuleHookFn> all_hooks(const Module& m, nnp_module_hook_kind kind) {
  GlobalHooks& g = global_hooks();
  std::lock_guard<std::mutex> lock(g.mutex);
  HookList<ModuleHookFn> hooks = *g.lists[kind];
  const HookList<ModuleHookFn>& own = *m.hooks[kind];
  hooks.insert(hooks.end(), own.begin(), own.end());
  return hooks;
}

void run_forward_pre_hooks(Module& m, nnp_list& args) {
  for (const auto& hook : all_hooks(m, NNP_HOOK_FORWARD_PRE)) {
    if (hook.fn.values) {
      run_values_hook(m, hook, args, nullptr, args);
      continue;
    }
    TensorEntries inputs(args);
    std::vector<TensorRef> replaced(inputs.tensors.size());
    run_hook(m, hook, inputs.tensors, {}, replaced);
    inputs.tensors = std::move(replaced);
    inputs.put_back(args);
  }
}

void run_forward_hooks(Module& m, const nnp_list& args, nnp_list& outputs) {
  for (const auto& hook : all_hooks(m, NNP_HOOK_FORWARD)) {
    if (hook.fn.values) {
      run_values_hook(m, hook, args, &outputs, outputs);
      continue;
    }
    TensorEntries results(outputs);
    std::vector<TensorRef> replaced(results.tensors.size());
    run_hook(m, hook, TensorEntries(args).tensors, results.tensors, replaced);
    results.tensors = std::move(replaced);
    results.put_back(outputs);
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
                        autograd::Grads* replace_into) {
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
    run_backward_hooks(*keep, std::vector<TensorRef>(grads.begin(), grads.end()), *s, &grads);
  });
  // The node keeps the state alive as long as the graph lives.
  input_node->post_hooks.push_back([state](autograd::Grads&, const autograd::Grads&) {});
}

void finish_backward_hooks(Module& m, std::vector<TensorRef>& outputs, const std::shared_ptr<BackwardHookState>& state,
                           const std::shared_ptr<BackwardHookNode>& input_node, size_t n_inputs) {
  auto output_node = wrap("BackwardHookFunctionBackward", outputs);
  if (!output_node) return;
  ModuleRef keep = ModuleRef::share(&m);
  bool inputs_tracked = input_node != nullptr;
  output_node->pre_hooks.push_back([keep, state, inputs_tracked, n_inputs](autograd::Grads& grads) {
    for (const auto& hook : all_hooks(*keep, NNP_HOOK_BACKWARD_PRE)) {
      std::vector<TensorRef> replaced(grads.size());
      run_hook(*keep, hook, std::vector<TensorRef>(grads.begin(), grads.end()), {}, replaced);
      for (size_t i = 0; i < grads.size(); ++i)
        if (replaced[i]) grads[i] = std::move(replaced[i]);
    }
    state->grad_outputs.assign(grads.begin(), grads.end());
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
template nnp_hook_handle* add_hook(const std::shared_ptr<HookList<ModuleHookFn>>&, ModuleHookFn, std::shared_ptr<void>,
                                   bool);
template nnp_hook_handle* add_hook(const std::shared_ptr<HookList<nnp_state_hook_fn>>&, nnp_state_hook_fn,
                                   std::shared_ptr<void>, bool);
template HookList<nnp_state_hook_fn> hooks_to_run(const HookList<nnp_state_hook_fn>&);
template HookList<ModuleHookFn> hooks_to_run(const HookList<ModuleHookFn>&);

namespace {

void check_hook(nnp_module_hook_kind kind, const ModuleHookFn& fn, const char* op) {
  if (kind < NNP_HOOK_FORWARD_PRE || kind > NNP_HOOK_BACKWARD)
    fail(NNP_INVALID_ARGUMENT, op, ": unknown hook kind ", kind);
  if (fn.tensors == nullptr && fn.values == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": fn is NULL");
  if (fn.values && kind != NNP_HOOK_FORWARD_PRE && kind != NNP_HOOK_FORWARD)
    fail(NNP_INVALID_ARGUMENT, op, ": a values hook is a forward or forward pre-hook (kind 0 or 1), not kind ", kind,
         "; backward hooks see gradients, which are tensors: use module_register_hook");
}

// Which forward serves the call: forward for tensors (preferred by
// module_call), forward_values for anything (preferred by
// module_call_values).
bool use_tensor_forward(const Module& m, const nnp_list& args, bool tensor_call) {
  if (!m.vtable.forward) return false;
  for (const nnp_list::Entry& e : args.entries)
    if (!e.tensor) return false;
  return tensor_call || !m.vtable.forward_values;
}

nnp_list run_forward(Module& m, const nnp_list& args, bool tensor_call) {
  if (m.self_detached)
    fail(NNP_INVALID_ARGUMENT, m.type_name, ": the object that implemented this module was destroyed");
  const bool tensors = use_tensor_forward(m, args, tensor_call);
  if (!tensors && !m.vtable.forward_values) {
    if (!m.vtable.forward) fail(NNP_UNIMPLEMENTED, m.type_name, " has no forward");
    for (size_t i = 0; i < args.entries.size(); ++i)
      if (!args.entries[i].tensor)
        fail(NNP_INVALID_ARGUMENT, m.type_name, ": forward takes tensors only, and argument ", i, " is ",
             value_kind_phrase(args.entries[i].kind()),
             " (a module that takes other values implements forward_values)");
  }
  nnp_list outputs;
  const uint64_t since = last_error_serial();
  std::optional<autograd::FunctionOrigin> origin;  // only a plugin's layer has one to record
  if (!m.plugin_origin.empty()) origin.emplace(m.plugin_origin);
  nnp_status status;
  if (tensors) {
    std::vector<const nnp_tensor*> inputs;
    inputs.reserve(args.entries.size());
    for (const nnp_list::Entry& e : args.entries) inputs.push_back(e.tensor.get());
    nnp_tensor* produced = nullptr;
    status = m.vtable.forward(m.self, &m, inputs.data(), static_cast<int32_t>(inputs.size()), &produced);
    if (produced) outputs.add("", TensorRef::adopt(produced));
  } else {
    status = m.vtable.forward_values(m.self, &m, &args, &outputs);
  }
  origin.reset();
  if (status != NNP_OK) {
    try {
      check_plugin_status(status, m.type_name.c_str(), "forward", since);
    } catch (const Error& e) {
      if (m.plugin_origin.empty()) throw;
      throw Error(e.status(), str_cat(m.plugin_origin, " forward: ", e.what()));
    }
  }
  if (tensors && outputs.entries.empty()) fail(NNP_INTERNAL, m.type_name, ": forward returned no tensor");
  return outputs;
}

// The steps of a call, for tensors and values alike.
nnp_list run_call(Module& m, nnp_list args, bool tensor_call) {
  ModuleRef keep = ModuleRef::share(&m);  // hooks may drop other references
  profiler::Scope profile(
      NNP_PROFILE_MODULE, [&] { return "nn.Module: " + m.type_name; }, 0);
  run_forward_pre_hooks(m, args);
  // A parametrized tensor is computed when forward reads it (PyTorch's
  // property): after the pre-hooks.
  if (!m.derived.empty()) refresh_parametrized(m);

  const bool backward_hooks = autograd::grad_enabled() && (!all_hooks(m, NNP_HOOK_BACKWARD).empty() ||
                                                           !all_hooks(m, NNP_HOOK_BACKWARD_PRE).empty());
  std::shared_ptr<BackwardHookState> state;
  std::shared_ptr<BackwardHookNode> input_node;
  size_t tensor_inputs = 0;
  if (backward_hooks) {
    TensorEntries inputs(args);
    setup_backward_hooks(m, inputs.tensors, state, input_node);
    inputs.put_back(args);
    tensor_inputs = inputs.tensors.size();
  }

  onnx::ModuleScope lowering(m, args);  // an ONNX export writes this call as the layer's own nodes
  nnp_list outputs = run_forward(m, args, tensor_call);
  lowering.finish(outputs);
  run_forward_hooks(m, args, outputs);
  if (backward_hooks) {
    TensorEntries results(outputs);
    finish_backward_hooks(m, results.tensors, state, input_node, tensor_inputs);
    results.put_back(outputs);
  }
  return outputs;
}

}  // namespace

void check_positional(const nnp_list& args, const char* who) {
  for (size_t i = 0; i < args.entries.size(); ++i)
    if (!args.entries[i].name.empty())
      fail(NNP_INVALID_ARGUMENT, who, ": entry ", i, " is named '", args.entries[i].name,
           "'; forward takes positional arguments only (give every entry the name \"\")");
}

nnp_hook_handle* register_hook(Module& m, nnp_module_hook_kind kind, ModuleHookFn fn, std::shared_ptr<void> user_data,
                               bool prepend) {
  check_hook(kind, fn, fn.values ? "module_register_values_hook" : "module_register_hook");
  return add_hook(m.hooks[kind], fn, std::move(user_data), prepend);
}

bool calls_plainly(const Module& m) {
  if (!m.derived.empty()) return false;
  GlobalHooks& g = global_hooks();
  std::lock_guard<std::mutex> lock(g.mutex);
  for (int kind = 0; kind < 4; ++kind)
    if (!g.lists[kind]->empty() || !m.hooks[kind]->empty()) return false;
  return true;
}

nnp_hook_handle* register_global_hook(nnp_module_hook_kind kind, ModuleHookFn fn, std::shared_ptr<void> user_data) {
  check_hook(kind, fn, fn.values ? "register_global_module_values_hook" : "register_global_module_hook");
  return add_hook(global_hooks().lists[kind], fn, std::move(user_data), false);
}

TensorRef call(Module& m, const std::vector<TensorRef>& inputs) {
  nnp_list args;
  args.entries.reserve(inputs.size());
  for (const TensorRef& t : inputs) args.add("", t);
  nnp_list outputs = run_call(m, std::move(args), true);
  if (outputs.entries.size() != 1 || !outputs.entries[0].tensor) {
    std::string what = outputs.entries.empty() ? "nothing" : str_cat(outputs.entries.size(), " results");
    if (outputs.entries.size() == 1) what = value_kind_phrase(outputs.entries[0].kind());
    fail(NNP_INVALID_ARGUMENT, m.type_name, ": forward gave ", what,
         " where one tensor was expected; call it with module_call_values to get every result");
  }
  return std::move(outputs.entries[0].tensor);
}

nnp_list call_values(Module& m, nnp_list args) {
  check_positional(args, "module_call_values");
  return run_call(m, std::move(args), false);
}

}  // namespace nnp::core::nn
