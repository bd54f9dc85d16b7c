#include "module.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "../autograd/grad_mode.hpp"
#include "../autograd/node.hpp"
#include "../autograd/record.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "../capture/tape.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "parametrize.hpp"

nnp_module::nnp_module() {
  for (auto& list : hooks) list = std::make_shared<nnp::core::nn::HookList<nnp::core::nn::ModuleHookFn>>();
  for (auto& list : state_hooks) list = std::make_shared<nnp::core::nn::HookList<nnp_state_hook_fn>>();
}

nnp_module::~nnp_module() {
  if (!self_detached && vtable.destroy) vtable.destroy(self);
}

namespace nnp::core {

void retain(nnp_module* m) { m->refs.fetch_add(1, std::memory_order_relaxed); }
void release(nnp_module* m) {
  if (m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete m;
}

}  // namespace nnp::core

namespace nnp::core::nn {
namespace {

// PyTorch's rules for attribute names, with its wording.
void check_name(const Module& m, const char* kind, const char* name, const char* own_kind) {
  if (name == nullptr) fail(NNP_INVALID_ARGUMENT, kind, " name is NULL");
  std::string text = name;
  if (text.empty()) fail(NNP_INVALID_ARGUMENT, kind, " name can't be an empty string");
  if (text.find('.') != std::string::npos) fail(NNP_INVALID_ARGUMENT, kind, " name can't contain \".\", got: ", text);
  if (m.derived.find(text))
    fail(NNP_INVALID_ARGUMENT, "attribute '", text, "' of ", m.type_name, " is computed by ",
         m.derived.find(text)->kind == DerivedTensor::PRUNED ? "pruning (prune_remove it first)"
                                                             : "a parametrization (remove_parametrizations first)");
  bool clash = (m.parameters.find(text) && std::string(own_kind) != "parameter") ||
               (m.buffers.find(text) && std::string(own_kind) != "buffer") ||
               (m.children.find(text) && std::string(own_kind) != "module");
  if (clash)
    fail(NNP_INVALID_ARGUMENT, "attribute '", text, "' already exists in ", m.type_name, " as another kind (",
         m.parameters.find(text) ? "parameter"
         : m.buffers.find(text)  ? "buffer"
                                 : "module",
         "); pick another name");
}

// Splits "a.b.c" into the module path "a.b" and the last name "c".
std::pair<std::string, std::string> split_last(const std::string& path) {
  size_t dot = path.rfind('.');
  if (dot == std::string::npos) return {"", path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

// Every distinct parameter, buffer and gradient of m's tree.
void collect_tensors(const Module& m, std::vector<Tensor*>& out, std::unordered_set<const void*>& seen,
                     bool with_grads) {
  if (!seen.insert(&m).second) return;
  auto add = [&](Tensor* t) {
    if (t && seen.insert(t).second) out.push_back(t);
  };
  for (const auto& [name, t] : m.parameters) {
    add(t.get());
    if (with_grads && t && t->autograd && t->autograd->grad) add(t->autograd->grad.get());
  }
  for (const auto& [name, t] : m.buffers) add(t.get());
  // A pruned or parametrized tensor moves with its inputs (it is recomputed
  // from them at the next call anyway).
  for (const auto& [name, d] : m.derived) add(d.visible.get());
  for (const auto& [name, child] : m.children)
    if (child) collect_tensors(*child, out, seen, with_grads);
}

// Whether target is from or below m.
bool reaches(const Module& m, const Module& target) {
  if (&m == &target) return true;
  for (const auto& [name, child] : m.children)
    if (child && reaches(*child, target)) return true;
  return false;
}

}  // namespace

ModuleRef create_module(const char* type_name, const nnp_module_vtable* vtable, void* self) {
  if (type_name == nullptr || *type_name == '\0') fail(NNP_INVALID_ARGUMENT, "module_create: type name is empty");
  ModuleRef m = ModuleRef::adopt(new nnp_module());
  m->type_name = type_name;
  if (vtable) {
    if (vtable->struct_size < NNP_SIZE_THROUGH(nnp_module_vtable, forward))
      fail(NNP_INVALID_ARGUMENT, "module_create: vtable struct_size ", vtable->struct_size, " is too small");
    std::memcpy(&m->vtable, vtable, std::min(vtable->struct_size, sizeof(nnp_module_vtable)));
    m->vtable.struct_size = sizeof(nnp_module_vtable);
  }
  m->self = self;
  return m;
}

void register_parameter(Module& m, const char* name, Tensor* t, bool requires_grad) {
  check_name(m, "parameter", name, "parameter");
  if (t && !autograd::is_leaf(*t))
    fail(NNP_INVALID_ARGUMENT, "register_parameter: '", name, "' is not a leaf tensor (it was computed by ",
         autograd::grad_fn_name(*t), "); register a detached tensor, e.g. x.detach()");
  if (t && requires_grad && !is_floating(t->dtype))
    fail(NNP_DTYPE_MISMATCH, "register_parameter: '", name, "' is ", dtype_name(t->dtype),
         "; only floating-point parameters can require gradients (pass requires_grad = false)");
  if (t) autograd::set_requires_grad(*t, requires_grad);
  if (const TensorRef* old = m.parameters.find(name); old && *old) capture::note_replaced((*old)->storage);
  m.parameters.put(name, t ? TensorRef::share(t) : TensorRef());
}

void register_buffer(Module& m, const char* name, Tensor* t, bool persistent) {
  check_name(m, "buffer", name, "buffer");
  if (const TensorRef* old = m.buffers.find(name); old && *old) capture::note_replaced((*old)->storage);
  m.buffers.put(name, t ? TensorRef::share(t) : TensorRef());
  if (persistent)
    m.non_persistent.erase(name);
  else
    m.non_persistent.insert(name);
}

void register_module(Module& m, const char* name, Module* child) {
  check_name(m, "module", name, "module");
  if (child && reaches(*child, m))
    fail(NNP_INVALID_ARGUMENT, "register_module: adding '", name, "' (", child->type_name, ") to ", m.type_name,
         " would make the module tree a cycle");
  m.children.put(name, ModuleRef::share(child));
}

ModuleRef get_submodule(const Module& m, const std::string& path) {
  ModuleRef current = ModuleRef::share(&m);
  if (path.empty()) return current;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const ModuleRef* child = current->children.find(part);
    if (!child)
      fail(NNP_NOT_FOUND, "get_submodule: ", current->type_name, " has no submodule `", part, "` (path '", path, "')");
    if (!*child) fail(NNP_NOT_FOUND, "get_submodule: `", part, "` in '", path, "' holds no module (it is None)");
    current = *child;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return current;
}

namespace {

// get_parameter and get_buffer: the module path, then the named member of
// the wanted kind, with PyTorch's messages for the other cases.
TensorRef get_member(const Module& m, const std::string& path, bool parameter) {
  const char* op = parameter ? "get_parameter" : "get_buffer";
  auto [module_path, name] = split_last(path);
  ModuleRef owner = get_submodule(m, module_path);
  const auto& wanted = parameter ? owner->parameters : owner->buffers;
  const auto& other = parameter ? owner->buffers : owner->parameters;
  if (const TensorRef* t = wanted.find(name)) return *t;
  if (other.find(name) || owner->children.find(name))
    fail(NNP_NOT_FOUND, op, ": `", name, "` in '", path, "' is not a ", parameter ? "parameter" : "buffer");
  fail(NNP_NOT_FOUND, op, ": ", owner->type_name, " has no attribute `", name, "` (path '", path, "')");
}

}  // namespace

TensorRef get_tensor(const Module& m, const std::string& path) {
  auto [module_path, name] = split_last(path);
  ModuleRef owner = get_submodule(m, module_path);
  if (const TensorRef* t = owner->parameters.find(name)) return *t;
  if (const TensorRef* t = owner->buffers.find(name)) return *t;
  if (const DerivedTensor* d = owner->derived.find(name))
    return d->kind == DerivedTensor::PARAMETRIZED ? parametrized_value(*owner, name) : d->visible;
  fail(NNP_NOT_FOUND, "module_get_tensor: ", owner->type_name, " has no tensor attribute `", name, "` (path '", path,
       "')");
}

TensorRef get_parameter(const Module& m, const std::string& path) { return get_member(m, path, true); }
TensorRef get_buffer(const Module& m, const std::string& path) { return get_member(m, path, false); }

namespace {

void walk_modules(const Module& m, const std::string& prefix, std::unordered_set<const Module*>* memo, nnp_list& out) {
  if (memo && !memo->insert(&m).second) return;
  out.add(prefix, ModuleRef::share(&m));
  for (const auto& [name, child] : m.children)
    if (child) walk_modules(*child, prefix.empty() ? name : prefix + "." + name, memo, out);
}

template <typename Select>
void named_members(const Module& m, const std::string& prefix, bool recurse, bool remove_duplicate, nnp_list& out,
                   Select select) {
  nnp_list modules;
  if (recurse)
    named_modules(m, prefix, remove_duplicate, modules);
  else
    modules.add(prefix, ModuleRef::share(&m));
  std::unordered_set<const Tensor*> seen;
  for (const auto& entry : modules.entries)
    for (const auto& [name, t] : select(*entry.module)) {
      if (!t || (remove_duplicate && !seen.insert(t.get()).second)) continue;
      out.add(entry.name.empty() ? name : entry.name + "." + name, t);
    }
}

}  // namespace

void named_modules(const Module& m, const std::string& prefix, bool remove_duplicate, nnp_list& out) {
  std::unordered_set<const Module*> memo;
  walk_modules(m, prefix, remove_duplicate ? &memo : nullptr, out);
}

void named_parameters(const Module& m, const std::string& prefix, bool recurse, bool remove_duplicate, nnp_list& out) {
  named_members(
      m, prefix, recurse, remove_duplicate, out, [](const Module& x) -> const auto& { return x.parameters; });
}

void named_buffers(const Module& m, const std::string& prefix, bool recurse, bool remove_duplicate, nnp_list& out) {
  named_members(
      m, prefix, recurse, remove_duplicate, out, [](const Module& x) -> const auto& { return x.buffers; });
}

void named_children(const Module& m, nnp_list& out) {
  std::unordered_set<const Module*> memo;
  for (const auto& [name, child] : m.children)
    if (child && memo.insert(child.get()).second) out.add(name, child);
}

void apply(Module& m, nnp_status (*fn)(nnp_module*, void*), void* user_data) {
  if (fn == nullptr) fail(NNP_INVALID_ARGUMENT, "apply: fn is NULL");
  for (auto& [name, child] : m.children)
    if (child) apply(*child, fn, user_data);
  nnp_status status = fn(&m, user_data);
  if (status != NNP_OK) check_plugin_status(status, m.type_name.c_str(), "apply");
}

void train(Module& m, bool mode) {
  m.training = mode;
  for (auto& [name, child] : m.children)
    if (child) train(*child, mode);
}

void requires_grad(Module& m, bool value) {
  nnp_list params;
  named_parameters(m, "", true, true, params);
  for (auto& entry : params.entries)
    if (value && !is_floating(entry.tensor->dtype))
      fail(NNP_DTYPE_MISMATCH, "requires_grad_: parameter '", entry.name, "' is ", dtype_name(entry.tensor->dtype),
           " and cannot require gradients");
  for (auto& entry : params.entries) autograd::set_requires_grad(*entry.tensor, value);
}

void zero_grad(Module& m, bool set_to_none) {
  nnp_list params;
  named_parameters(m, "", true, true, params);
  autograd::NoGradGuard no_grad;
  for (auto& entry : params.entries) {
    TensorRef grad = autograd::grad(*entry.tensor);
    if (!grad) continue;
    if (set_to_none) {
      autograd::set_grad(*entry.tensor, nullptr);
    } else {
      TensorRef zero = full(Dims{}, 0.0, grad->dtype, grad->device);
      copy_into(*grad, *zero);
    }
  }
}

void to(Module& m, const nnp_device* device, nnp_dtype dtype) {
  if (dtype != -1) {
    check_dtype("to", dtype);
    if (!is_floating(dtype))
      fail(NNP_DTYPE_MISMATCH, "to: modules only move to floating-point dtypes, not ", dtype_name(dtype),
           " (integer buffers keep their dtype)");
  }
  std::vector<Tensor*> tensors;
  std::unordered_set<const void*> seen;
  collect_tensors(m, tensors, seen, true);
  // Convert everything first: a failure here leaves the module untouched.
  std::vector<TensorRef> converted;
  converted.reserve(tensors.size());
  {
    autograd::NoGradGuard no_grad;
    for (Tensor* t : tensors) {
      nnp_dtype target = dtype != -1 && is_floating(t->dtype) ? dtype : t->dtype;
      converted.push_back(core::to(*t, device ? *device : t->device, target));
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i)
    if (converted[i].get() != tensors[i]) replace_data(*tensors[i], *converted[i]);
}

void to_empty(Module& m, nnp_device device) {
  std::vector<Tensor*> tensors;
  std::unordered_set<const void*> seen;
  collect_tensors(m, tensors, seen, false);
  std::vector<TensorRef> fresh;
  for (Tensor* t : tensors) fresh.push_back(empty(t->shape, t->dtype, device));
  for (size_t i = 0; i < tensors.size(); ++i) {
    replace_data(*tensors[i], *fresh[i]);
    if (tensors[i]->autograd) tensors[i]->autograd->grad = TensorRef();
  }
}

void detach_self(Module& m) {
  m.self_detached = true;
  m.self = nullptr;
}

}  // namespace nnp::core::nn
