#include "state_dict.hpp"

#include <unordered_map>

#include "../autograd/grad_mode.hpp"
#include "../autograd/node.hpp"
#include "../autograd/record.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../io/safetensors.hpp"
#include "../ops.hpp"
#include "module_call.hpp"

namespace nnp::core::nn {
namespace {

const char* kExtraState = "_extra_state";

// Returns whether any hook ran (it may have edited the lists).
bool run_state_hooks(Module& m, nnp_state_hook_kind kind, nnp_list* a, nnp_list* b, const std::string& prefix) {
  HookList<nnp_state_hook_fn> hooks = hooks_to_run(*m.state_hooks[kind]);
  for (const auto& hook : hooks) {
    nnp_status status = hook.fn(&m, a, b, prefix.c_str(), hook.user_data.get());
    if (status != NNP_OK) check_plugin_status(status, m.type_name.c_str(), "state dict hook");
  }
  return !hooks.empty();
}

// The incoming state by key: one lookup per key instead of a scan of the
// whole list (10^5 keys took minutes). A name given twice is refused: one of
// two tensors would otherwise be loaded silently.
class StateIndex {
 public:
  explicit StateIndex(const nnp_list& state) { rebuild(state); }
  void rebuild(const nnp_list& state) {
    at_.clear();
    at_.reserve(state.entries.size());
    for (size_t i = 0; i < state.entries.size(); ++i)
      if (!at_.emplace(state.entries[i].name, static_cast<int32_t>(i)).second)
        fail(NNP_INVALID_ARGUMENT, "load_state_dict: the state dict names '", state.entries[i].name,
             "' twice; nothing was loaded");
  }
  int32_t find(const std::string& key) const {
    auto it = at_.find(key);
    return it == at_.end() ? -1 : it->second;
  }

 private:
  std::unordered_map<std::string, int32_t> at_;
};

// A module has extra state when its get_extra_state gives a tensor.
TensorRef extra_state_of(Module& m) {
  if (!m.vtable.get_extra_state || m.self_detached) return TensorRef();
  nnp_tensor* extra = nullptr;
  nnp_status status = m.vtable.get_extra_state(m.self, &extra);
  TensorRef owned = TensorRef::adopt(extra);
  if (status != NNP_OK) check_plugin_status(status, m.type_name.c_str(), "get_extra_state");
  return owned;
}
bool has_extra_state(Module& m) { return static_cast<bool>(extra_state_of(m)); }

// One tensor of the module that a state dict entry will overwrite.
struct Planned {
  Module* owner;
  bool parameter;
  std::string name;
  TensorRef target;
  TensorRef source;  // already on the target's device
};

struct LoadPlan {
  std::vector<Planned> copies;
  std::vector<std::pair<Module*, TensorRef>> extra_states;
  std::set<std::string> expected;
  bool assign = false;
};

void plan_module(Module& m, const std::string& prefix, nnp_list& state, StateIndex& index, LoadPlan& plan,
                 nnp_list& missing) {
  if (run_state_hooks(m, NNP_LOAD_STATE_DICT_PRE, &state, nullptr, prefix)) index.rebuild(state);
  auto plan_entry = [&](const std::string& name, const TensorRef& target, bool parameter) {
    if (!target) return;
    std::string key = prefix + name;
    plan.expected.insert(key);
    int32_t at = index.find(key);
    if (at < 0) {
      missing.add(key, TensorRef());
      return;
    }
    const TensorRef& source = state.entries[static_cast<size_t>(at)].tensor;
    if (!source) fail(NNP_INVALID_ARGUMENT, "load_state_dict: entry '", key, "' holds no tensor");
    if (source->shape != target->shape)
      fail(NNP_SHAPE_MISMATCH, "load_state_dict: size mismatch for ", key, ": copying a tensor with shape ",
           format_dims(source->shape), " from the checkpoint, the shape in the current model is ",
           format_dims(target->shape), "; nothing was loaded");
    // One floating dtype into another converts, as PyTorch's copy_ does (an
    // f64 checkpoint loads into an f32 model); integers and floats do not mix.
    if (source->dtype != target->dtype && !(is_floating(source->dtype) && is_floating(target->dtype)))
      fail(NNP_DTYPE_MISMATCH, "load_state_dict: dtype mismatch for ", key, ": the checkpoint has ",
           dtype_name(source->dtype), ", the current model has ", dtype_name(target->dtype),
           "; convert the module (to(dtype)) or the checkpoint; nothing was loaded");
    TensorRef staged = core::to(*source, target->device, target->dtype);
    // A private copy the target can adopt (assign takes the caller's tensor).
    if (!plan.assign && staged->storage == source->storage) staged = clone(*staged);
    plan.copies.push_back(Planned{&m, parameter, name, target, staged});
  };
  for (auto& [name, t] : m.parameters) plan_entry(name, t, true);
  for (auto& [name, t] : m.buffers)
    if (!m.non_persistent.count(name)) plan_entry(name, t, false);
  if (m.vtable.set_extra_state && has_extra_state(m)) {
    std::string key = prefix + kExtraState;
    plan.expected.insert(key);
    int32_t at = index.find(key);
    if (at < 0)
      missing.add(key, TensorRef());
    else
      plan.extra_states.emplace_back(&m, state.entries[static_cast<size_t>(at)].tensor);
  }
  for (auto& [name, child] : m.children)
    if (child) plan_module(*child, prefix + name + ".", state, index, plan, missing);
}

template <typename T>
T* find_slot(nnp_module::Named<T>& list, const std::string& name) {
  for (auto& [key, value] : list)
    if (key == name) return &value;
  return nullptr;
}

void run_load_post_hooks(Module& m, const std::string& prefix, nnp_list& missing, nnp_list& unexpected) {
  for (auto& [name, child] : m.children)
    if (child) run_load_post_hooks(*child, prefix + name + ".", missing, unexpected);
  run_state_hooks(m, NNP_LOAD_STATE_DICT_POST, &missing, &unexpected, prefix);
}

std::string key_list(const nnp_list& list) {
  std::string text;
  for (const auto& e : list.entries) text += (text.empty() ? "\"" : ", \"") + e.name + "\"";
  return text;
}

}  // namespace

void state_dict(Module& m, const std::string& prefix, bool keep_vars, nnp_list& out) {
  run_state_hooks(m, NNP_STATE_DICT_PRE, nullptr, nullptr, prefix);
  for (const auto& [name, t] : m.parameters)
    if (t) out.add(prefix + name, keep_vars ? t : autograd::detach(*t));
  for (const auto& [name, t] : m.buffers)
    if (t && !m.non_persistent.count(name)) out.add(prefix + name, keep_vars ? t : autograd::detach(*t));
  if (TensorRef extra = extra_state_of(m)) out.add(prefix + kExtraState, extra);
  for (const auto& [name, child] : m.children)
    if (child) state_dict(*child, prefix + name + ".", keep_vars, out);
  run_state_hooks(m, NNP_STATE_DICT_POST, &out, nullptr, prefix);
}

void load_state_dict(Module& m, const nnp_list& given, bool strict, bool assign, nnp_list& missing,
                     nnp_list& unexpected) {
  nnp_list state = given;  // pre-hooks may edit their copy
  LoadPlan plan;
  plan.assign = assign;
  StateIndex index(state);
  plan_module(m, "", state, index, plan, missing);
  for (const auto& entry : state.entries)
    if (!plan.expected.count(entry.name)) unexpected.add(entry.name, TensorRef());
  if (strict && (!missing.entries.empty() || !unexpected.entries.empty()))
    fail(NNP_NOT_FOUND, "load_state_dict: error(s) in loading the state dict for ", m.type_name, ":",
         missing.entries.empty() ? "" : " missing key(s): " + key_list(missing) + ".",
         unexpected.entries.empty() ? "" : " unexpected key(s): " + key_list(unexpected) + ".",
         " Nothing was loaded; pass strict = false to load the matching keys only");

  // Everything is checked and staged on the right devices: apply. Targets
  // adopt their staged copy's storage, which cannot fail; only those another
  // view shares are copied into, and those first, so a failure there changes
  // nothing else.
  autograd::NoGradGuard no_grad;
  if (!assign) {
    for (Planned& p : plan.copies)
      if (!can_adopt(*p.target, *p.source)) copy_into(*p.target, *p.source);
    for (Planned& p : plan.copies) {
      if (can_adopt(*p.target, *p.source)) replace_data(*p.target, *p.source);
      p.source = TensorRef();  // a later key for the same (tied) tensor adopts too: the last one wins
    }
  }
  for (Planned& p : plan.copies) {
    if (!assign) continue;
    // assign: the module takes the checkpoint's tensor, keeping requires_grad.
    TensorRef fresh = p.source.get() == p.target.get() ? p.source : autograd::detach(*p.source);
    if (p.parameter) autograd::set_requires_grad(*fresh, autograd::requires_grad(*p.target));
    TensorRef* slot = p.parameter ? find_slot(p.owner->parameters, p.name) : find_slot(p.owner->buffers, p.name);
    if (slot) *slot = fresh;
  }
  for (auto& [owner, extra] : plan.extra_states) {
    nnp_status status = owner->vtable.set_extra_state(owner->self, extra.get());
    if (status != NNP_OK) check_plugin_status(status, owner->type_name.c_str(), "set_extra_state");
  }
  run_load_post_hooks(m, "", missing, unexpected);
}

nnp_hook_handle* register_state_hook(Module& m, nnp_state_hook_kind kind, nnp_state_hook_fn fn,
                                     std::shared_ptr<void> user_data) {
  if (kind < NNP_STATE_DICT_PRE || kind > NNP_LOAD_STATE_DICT_POST)
    fail(NNP_INVALID_ARGUMENT, "register_state_hook: unknown kind ", kind);
  if (fn == nullptr) fail(NNP_INVALID_ARGUMENT, "register_state_hook: fn is NULL");
  return add_hook(m.state_hooks[kind], fn, std::move(user_data), false);
}

IncompatibleKeys load_state_dict(Module& m, const nnp_list& state, bool strict, bool assign) {
  IncompatibleKeys keys;
  load_state_dict(m, state, strict, assign, *keys.missing, *keys.unexpected);
  return keys;
}

void save(Module& m, const std::string& path) {
  nnp_list state;
  state_dict(m, "", false, state);
  io::save_safetensors(state, path, {{"format", "pt"}, {"nnplug", NNP_VERSION_STRING}});
}

IncompatibleKeys load(Module& m, const std::string& path, bool strict) {
  nnp_list state;
  io::load_safetensors(path, parse_device("cpu"), state, nullptr);
  return load_state_dict(m, state, strict, false);
}

}  // namespace nnp::core::nn
