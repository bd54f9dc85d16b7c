#include "parametrize.hpp"

#include <atomic>
#include <memory>

#include "../autograd/grad_mode.hpp"
#include "../autograd/node.hpp"
#include "../autograd/record.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "containers.hpp"
#include "derived_tensor.hpp"
#include "module_call.hpp"

namespace nnp::core::nn {
namespace {

constexpr const char* kPrefix = "Parametrized";
constexpr const char* kDict = "parametrizations";

std::atomic<int64_t> cache_depth{0};
std::atomic<uint64_t> cache_generation{0};

// What PyTorch's ParametrizationList records besides its modules.
struct ListState {
  bool is_tensor = true;
  int32_t ntensors = 1;
  bool unsafe = false;
};

ListState& state_of(const Module& list) { return *static_cast<ListState*>(list.self); }

std::string dtype_text(nnp_dtype dtype) {
  const char* name = dtype_name(dtype);
  return name ? name : "unknown";
}

// The originals of a list, in order.
std::vector<TensorRef> originals(const Module& list) {
  const ListState& s = state_of(list);
  std::vector<TensorRef> out;
  for (int32_t i = 0; i < s.ntensors; ++i) {
    const std::string key = s.is_tensor ? "original" : "original" + std::to_string(i);
    const TensorRef* p = list.parameters.find(key);
    if (!p) p = list.buffers.find(key);
    if (!p || !*p) fail(NNP_INVALID_ARGUMENT, "ParametrizationList: '", key, "' is missing (was it replaced by hand?)");
    out.push_back(*p);
  }
  return out;
}

// ParametrizationList.forward: the first module takes the originals, each
// next one the previous output.
TensorRef compute(Module& list) {
  std::vector<TensorRef> x = originals(list);
  for (auto& [key, child] : list.children) {
    if (!child) continue;
    x = {call(*child, x)};
  }
  if (x.size() != 1) fail(NNP_INVALID_ARGUMENT, "ParametrizationList holds no parametrization");
  return x[0];
}

nnp_status list_forward(void*, nnp_module* m, const nnp_tensor* const*, int32_t n, nnp_tensor** output) {
  return guard([&] {
    if (n != 0) fail(NNP_INVALID_ARGUMENT, "ParametrizationList: forward takes no inputs, got ", n);
    *output = compute(*m).take();
  });
}

void destroy_list(void* self) { delete static_cast<ListState*>(self); }

ModuleRef create_list(const ListState& state) {
  nnp_module_vtable vtable{};
  vtable.struct_size = sizeof(vtable);
  vtable.forward = list_forward;
  vtable.destroy = destroy_list;
  auto* self = new ListState(state);
  try {
    return create_module("ParametrizationList", &vtable, self);
  } catch (...) {
    delete self;
    throw;
  }
}

// right_inverse of one parametrization; false when it has none.
bool right_inverse(Module& p, const TensorRef& value, std::vector<TensorRef>& out) {
  if (!p.vtable.right_inverse || p.self_detached) return false;
  nnp_list results;
  const uint64_t since = last_error_serial();
  nnp_status status = p.vtable.right_inverse(p.self, &p, value.get(), &results);
  if (status == NNP_UNIMPLEMENTED) return false;
  if (status != NNP_OK) check_plugin_status(status, p.type_name.c_str(), "right_inverse", since);
  out.clear();
  for (size_t i = 0; i < results.entries.size(); ++i) {
    if (!results.entries[i].tensor)
      fail(NNP_INVALID_ARGUMENT, p.type_name, ": 'right_inverse' must return a Tensor or a sequence of tensors; got ",
           value_kind_phrase(results.entries[i].kind()), " as element ", i);
    out.push_back(results.entries[i].tensor);
  }
  if (out.empty()) fail(NNP_INVALID_ARGUMENT, p.type_name, ": 'right_inverse' returned nothing");
  return true;
}

Module* parametrization_dict(const Module& m) {
  const ModuleRef* dict = m.children.find(kDict);
  return dict && *dict && (*dict)->container == NNP_MODULE_DICT ? dict->get() : nullptr;
}

Module& list_of(const Module& m, const std::string& name) {
  Module* dict = parametrization_dict(m);
  const ModuleRef* list = dict ? dict->children.find(name) : nullptr;
  if (!list || !*list) fail(NNP_INVALID_ARGUMENT, "Module ", m.type_name, " does not have a parametrization on ", name);
  return **list;
}

void check_same(const char* what, nnp_dtype dtype, const Dims& shape, const Tensor& z, const char* a, const char* b) {
  if (z.dtype != dtype)
    fail(NNP_INVALID_ARGUMENT, what, " may not change the dtype of the tensor, unless `unsafe` is set.\n", a,
         " dtype: ", dtype_text(dtype), "\n", b, " dtype: ", dtype_text(z.dtype));
  if (z.shape != shape)
    fail(NNP_INVALID_ARGUMENT, what, " may not change the shape of the tensor, unless `unsafe` is set.\n", a,
         " shape: ", format_dims(shape), "\n", b, " shape: ", format_dims(z.shape));
}

// A new leaf (parameter or buffer) holding t's data.
TensorRef new_leaf(const Tensor& t, bool requires_grad) {
  TensorRef leaf = autograd::detach(t);
  leaf = core::clone(*leaf);
  if (requires_grad) autograd::set_requires_grad(*leaf, true);
  return leaf;
}

void add_to_list(Module& list, const std::string& key, const TensorRef& t, bool parameter) {
  if (parameter)
    list.parameters.put(key, t);
  else
    list.buffers.put(key, t);
}

void append_parametrization(Module& m, const std::string& name, Module& p, bool unsafe) {
  Module& list = list_of(m, name);
  if (!unsafe) {
    TensorRef y = parametrized_value(m, name);
    TensorRef x = call(p, {y});
    check_same("Registering a parametrization", y->dtype, y->shape, *x, ("module." + name).c_str(),
               ("parametrization(module." + name + ")").c_str());
    std::vector<TensorRef> z;
    autograd::NoGradGuard no_grad;
    if (right_inverse(p, x, z)) {
      if (z.size() != 1)
        fail(NNP_INVALID_ARGUMENT, "parametrization.right_inverse must return a tensor; got ", z.size(), " tensors");
      check_same("parametrization.right_inverse", y->dtype, y->shape, *z[0], ("module." + name).c_str(), "returned");
    }
  }
  register_module(list, std::to_string(list.children.size()).c_str(), &p);
  state_of(list).unsafe |= unsafe;
}

void first_parametrization(Module& m, const std::string& name, Module& p, bool unsafe) {
  TensorRef* as_parameter = m.parameters.find(name);
  TensorRef* as_buffer = m.buffers.find(name);
  if (!as_parameter && !as_buffer)
    fail(NNP_INVALID_ARGUMENT, "register_parametrization: module '", m.type_name,
         "' does not have a parameter, a buffer, or a parametrized element with name '", name, "'");
  const bool parameter = as_parameter != nullptr;
  TensorRef visible = parameter ? *as_parameter : *as_buffer;
  if (!visible) fail(NNP_INVALID_ARGUMENT, "register_parametrization: '", name, "' of ", m.type_name, " is None");
  const bool persistent = !m.non_persistent.count(name);
  const Dims original_shape = visible->shape;
  const nnp_dtype original_dtype = visible->dtype;

  std::vector<TensorRef> inverse;
  bool has_inverse;
  {
    autograd::NoGradGuard no_grad;
    has_inverse = right_inverse(p, visible, inverse);
  }
  ListState state;
  state.unsafe = unsafe;
  state.is_tensor = !has_inverse || inverse.size() == 1;
  state.ntensors = state.is_tensor ? 1 : static_cast<int32_t>(inverse.size());
  if (state.is_tensor && has_inverse && inverse[0]->dtype != original_dtype)
    fail(NNP_INVALID_ARGUMENT,
         "When `right_inverse` outputs one tensor, it may not change the dtype.\noriginal.dtype: ",
         dtype_text(original_dtype), "\nright_inverse(original).dtype: ", dtype_text(inverse[0]->dtype));
  ModuleRef list = create_list(state);
  register_module(*list, "0", &p);

  // The single original keeps the layer's leaf identity (PyTorch keeps the
  // Parameter object); undone if a check below refuses.
  TensorRef single;
  if (state.is_tensor) {
    single = take_leaf_identity(*visible, "original");
    if (has_inverse) replace_data(*single, *core::clone(*inverse[0]));
    add_to_list(*list, "original", single, parameter);
  } else {
    const bool grad = autograd::requires_grad(*visible);
    for (size_t i = 0; i < inverse.size(); ++i)
      add_to_list(*list, "original" + std::to_string(i), new_leaf(*inverse[i], grad), parameter);
  }
  try {
    if (!unsafe) {
      TensorRef z = compute(*list);
      check_same("Registering a parametrization", original_dtype, original_shape, *z, "unparametrized", "parametrized");
    }
  } catch (...) {
    if (single) visible->autograd = std::move(single->autograd);
    throw;
  }
  // Commit: nothing below can be refused.
  if (parameter)
    m.parameters.erase(name);
  else
    m.buffers.erase(name);
  if (!persistent) m.non_persistent.erase(name);
  if (!parametrization_dict(m)) {
    m.type_name = kPrefix + m.type_name;
    m.children.put(kDict, create_container(NNP_MODULE_DICT));
  }
  parametrization_dict(m)->children.put(name, list);
  DerivedTensor d;
  d.kind = DerivedTensor::PARAMETRIZED;
  d.visible = visible;
  m.derived.put(name, std::move(d));
}

}  // namespace

void register_parametrization(Module& m, const std::string& name, Module& parametrization, bool unsafe) {
  train(parametrization, m.training);
  if (&parametrization == &m)
    fail(NNP_INVALID_ARGUMENT, "register_parametrization: a module cannot parametrize itself");
  if (is_parametrized(m, name))
    append_parametrization(m, name, parametrization, unsafe);
  else
    first_parametrization(m, name, parametrization, unsafe);
  parametrized_value(m, name);
}

bool is_parametrized(const Module& m, const std::string& name) {
  Module* dict = parametrization_dict(m);
  if (!dict) return false;
  return name.empty() ? !dict->children.empty() : dict->children.find(name) != nullptr;
}

TensorRef parametrized_value(Module& m, const std::string& name) {
  DerivedTensor* d = m.derived.find(name);
  if (!d || d->kind != DerivedTensor::PARAMETRIZED)
    fail(NNP_INVALID_ARGUMENT, "Module ", m.type_name, " does not have a parametrization on ", name);
  Module& list = list_of(m, name);
  const bool caching = cache_depth.load(std::memory_order_acquire) > 0;
  const uint64_t generation = cache_generation.load(std::memory_order_acquire);
  if (caching && d->cache_generation == generation) return d->visible;
  TensorRef value = compute(list);
  bind_derived(*d, value, nullptr);
  d->cache_generation = caching ? generation : 0;
  return value;
}

void refresh_parametrized(Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, d] : m.derived)
    if (d.kind == DerivedTensor::PARAMETRIZED) names.push_back(name);
  for (const std::string& name : names) parametrized_value(m, name);
}

void assign_parametrized(Module& m, const std::string& name, const Tensor& value) {
  Module& list = list_of(m, name);
  const ListState& state = state_of(list);
  autograd::NoGradGuard no_grad;
  std::vector<TensorRef> current = {TensorRef::share(&value)};
  std::vector<ModuleRef> chain;
  for (auto& [key, child] : list.children)
    if (child) chain.push_back(child);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (current.size() != 1)
      fail(NNP_INVALID_ARGUMENT, (*it)->type_name, ".right_inverse must receive one tensor; got ", current.size());
    std::vector<TensorRef> next;
    if (!right_inverse(**it, current[0], next))
      fail(NNP_INVALID_ARGUMENT, "parametrization ", (*it)->type_name, " does not implement right_inverse");
    current = std::move(next);
  }
  std::vector<TensorRef> targets = originals(list);
  if (state.is_tensor && current.size() != 1)
    fail(NNP_INVALID_ARGUMENT, "`right_inverse` should return a tensor; got ", current.size(), " tensors");
  if (!state.is_tensor && current.size() != targets.size())
    fail(NNP_INVALID_ARGUMENT, "'right_inverse' must return a sequence of tensors of length ", targets.size(), "; got ",
         current.size());
  for (size_t i = 0; i < targets.size(); ++i)
    if (current[i]->dtype != targets[i]->dtype)
      fail(NNP_INVALID_ARGUMENT, "The tensor returned by `right_inverse` has dtype ", dtype_text(current[i]->dtype),
           " while `original", state.is_tensor ? "" : std::to_string(i), "` has dtype ", dtype_text(targets[i]->dtype));
  std::vector<TensorRef> copies;
  for (const TensorRef& t : current) copies.push_back(core::clone(*t));
  for (size_t i = 0; i < targets.size(); ++i) replace_data(*targets[i], *copies[i]);
}

void remove_parametrizations(Module& m, const std::string& name, bool leave_parametrized) {
  if (!is_parametrized(m, name))
    fail(NNP_INVALID_ARGUMENT, "Module ", m.type_name, " does not have a parametrization on ", name);
  ModuleRef list = ModuleRef::share(&list_of(m, name));
  const ListState& state = state_of(*list);
  if (!state.is_tensor && !leave_parametrized)
    fail(NNP_INVALID_ARGUMENT,
         "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a "
         "sequence of tensors.");
  TensorRef visible = m.derived.find(name)->visible;
  std::vector<TensorRef> origs = originals(*list);
  const bool parameter = list->parameters.find(state.is_tensor ? "original" : "original0") != nullptr;
  TensorRef value;
  if (leave_parametrized) {
    autograd::NoGradGuard no_grad;
    value = core::clone(*parametrized_value(m, name));
  }
  // Commit.
  if (state.is_tensor) {
    restore_leaf_identity(*visible, *origs[0], value ? *value : *origs[0]);
  } else {
    replace_data(*visible, *value);
    visible->autograd.reset();
    bool grad = false;
    for (const TensorRef& o : origs) grad = grad || autograd::requires_grad(*o);
    if (grad) autograd::set_requires_grad(*visible, true);
  }
  if (visible->autograd) visible->autograd->name = name;
  m.derived.erase(name);
  Module* dict = parametrization_dict(m);
  dict->children.erase(name);
  if (parameter)
    m.parameters.put(name, visible);
  else
    m.buffers.put(name, visible);
  if (dict->children.empty()) {
    m.children.erase(kDict);
    const std::string prefix = kPrefix;
    if (m.type_name.compare(0, prefix.size(), prefix) == 0) m.type_name = m.type_name.substr(prefix.size());
  }
}

void parametrize_cache_enter() {
  if (cache_depth.fetch_add(1, std::memory_order_acq_rel) == 0)
    cache_generation.fetch_add(1, std::memory_order_acq_rel);
}

void parametrize_cache_exit() {
  int64_t depth = cache_depth.load(std::memory_order_acquire);
  while (depth > 0 && !cache_depth.compare_exchange_weak(depth, depth - 1, std::memory_order_acq_rel)) {
  }
}

}  // namespace nnp::core::nn
