// The module record behind an nnp_module handle: PyTorch's nn.Module state
// (parameters, buffers, children in registration order, training flag,
// hooks) owned by the core; behaviour written outside comes in through a
// vtable.
#pragma once

#include <nnp/nnp.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "../tensor.hpp"
#include "module_ref.hpp"
#include "named_list.hpp"

namespace nnp::core::nn {
struct LayerType;

// A registered hook; user_data is released when the last holder goes.
template <typename Fn>
struct HookEntry {
  uint64_t id;
  Fn fn;
  std::shared_ptr<void> user_data;
};
template <typename Fn>
using HookList = std::vector<HookEntry<Fn>>;

// A module hook: one that sees tensors (every kind), or one that sees every
// argument and result (forward kinds, ABI 1.3). Both forms share one list, so
// they run in registration order.
struct ModuleHookFn {
  nnp_module_hook_fn tensors = nullptr;
  nnp_module_values_hook_fn values = nullptr;
};

}  // namespace nnp::core::nn

namespace nnp::core::nn {

// Named entries in insertion order (PyTorch's _parameters, _buffers and
// _modules are ordered dicts), with a hash index, so that a lookup or a
// registration costs O(1): a Sequential of 10^5 children builds in linear
// time (it was quadratic, a scan per registration).
template <typename T>
class NamedEntries {
 public:
  using Entry = std::pair<std::string, T>;
  T* find(const std::string& name) {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  const T* find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  // Replaces the value under name, or appends it.
  void put(const std::string& name, T value) {
    if (T* existing = find(name)) {
      *existing = std::move(value);
      return;
    }
    index_.emplace(name, entries_.size());
    entries_.emplace_back(name, std::move(value));
  }
  // Removes the entry under name (keeping the others' order); false when absent.
  bool erase(const std::string& name) {
    auto it = index_.find(name);
    if (it == index_.end()) return false;
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
    index_.clear();
    for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first, i);
    return true;
  }
  typename std::vector<Entry>::iterator begin() { return entries_.begin(); }
  typename std::vector<Entry>::iterator end() { return entries_.end(); }
  typename std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  typename std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// A tensor a module's forward reads under a name that is computed from
// others: pruning's `weight` (weight_orig * weight_mask) or a parametrized
// tensor (PyTorch's plain attribute and property). `visible` is the tensor
// object the layer registered under that name (its members hold it); each
// computation rebinds it to the new value (derived_tensor.hpp).
struct DerivedTensor {
  enum Kind { PRUNED, PARAMETRIZED } kind = PRUNED;
  nnp::core::TensorRef visible;
  // (storage id, version) of each input when visible was last bound.
  std::vector<std::pair<uint64_t, uint64_t>> inputs_seen;
  uint64_t cache_generation = 0;  // parametrize.cached(): the scope it was computed in
};

}  // namespace nnp::core::nn

struct nnp_module {
  template <typename T>
  using Named = nnp::core::nn::NamedEntries<T>;

  std::atomic<int32_t> refs{1};
  std::string type_name;
  // For a layer a plugin provides: "act.Swish (plugin nnplug.activations)",
  // named in its failures; "" for every other module.
  std::string plugin_origin;
  nnp_module_vtable vtable{};
  void* self = nullptr;
  bool self_detached = false;
  // For a module the layer registry created: its type and the attributes it
  // was created with (ONNX export writes them; they never change).
  const nnp::core::nn::LayerType* layer_type = nullptr;
  std::shared_ptr<const nnp_attrs> layer_attrs;
  nnp_container_kind container = -1;  // a core container, or -1
  bool training = true;
  Named<nnp::core::TensorRef> parameters;
  Named<nnp::core::TensorRef> buffers;
  std::set<std::string> non_persistent;
  Named<nnp::core::ModuleRef> children;
  Named<nnp::core::nn::DerivedTensor> derived;
  // Held by shared_ptr so hook handles can remove entries after the module
  // is gone without touching freed memory.
  std::shared_ptr<nnp::core::nn::HookList<nnp::core::nn::ModuleHookFn>> hooks[4];
  std::shared_ptr<nnp::core::nn::HookList<nnp_state_hook_fn>> state_hooks[4];

  nnp_module();
  ~nnp_module();
};

namespace nnp::core::nn {

using Module = nnp_module;

ModuleRef create_module(const char* type_name, const nnp_module_vtable* vtable, void* self);
// The object behind m.self is gone: calling m fails from now on.
void detach_self(Module& m);

void register_parameter(Module& m, const char* name, Tensor* t, bool requires_grad);
void register_buffer(Module& m, const char* name, Tensor* t, bool persistent);
void register_module(Module& m, const char* name, Module* child);

TensorRef get_parameter(const Module& m, const std::string& path);
TensorRef get_buffer(const Module& m, const std::string& path);
// getattr: a parameter, buffer, or pruned or parametrized tensor (computed now).
TensorRef get_tensor(const Module& m, const std::string& path);
ModuleRef get_submodule(const Module& m, const std::string& path);

// Pre-order, each module once when remove_duplicate.
void named_modules(const Module& m, const std::string& prefix, bool remove_duplicate, nnp_list& out);
void named_parameters(const Module& m, const std::string& prefix, bool recurse, bool remove_duplicate, nnp_list& out);
void named_buffers(const Module& m, const std::string& prefix, bool recurse, bool remove_duplicate, nnp_list& out);
void named_children(const Module& m, nnp_list& out);

void apply(Module& m, nnp_status (*fn)(nnp_module*, void*), void* user_data);
void train(Module& m, bool mode);
void requires_grad(Module& m, bool value);
void zero_grad(Module& m, bool set_to_none);
// All or nothing: every tensor is converted before any is replaced.
void to(Module& m, const nnp_device* device, nnp_dtype dtype);
void to_empty(Module& m, nnp_device device);

std::string repr(const Module& m);

}  // namespace nnp::core::nn
