// nn.hpp - PyTorch's nn.Module in C++ over the C table (included by nnp.hpp).
//
//   struct MyLinear : nnp::nn::Module {
//     nnp::Tensor weight, bias;
//     MyLinear(int64_t in, int64_t out) : Module("MyLinear") {
//       weight = register_parameter("weight", nnp::randn({in, out}));
//       bias = register_parameter("bias", nnp::randn({out}));
//     }
//     nnp::Tensor forward(const nnp::Tensor& x) override { return x.matmul(weight) + bias; }
//   };
//   auto m = nnp::nn::make<MyLinear>(4, 3);   // the core owns the object
//   nnp::Tensor y = (*m)(x);                   // runs the hooks, then forward
//
// forward may take more than tensors and give several results, as PyTorch's
// forward(x, act): declare one forward with its own parameters (Tensor,
// integers, floats, bool, std::string, std::optional of these, nnp::Value)
// and make the module with nnp::nn::make; `Tensor y = (*net)(x, "relu")`
// runs the hooks, which see every argument. A forward of one tensor giving
// several results takes it by value (std::tuple<Tensor, Tensor>
// forward(Tensor x)): forward(const Tensor&) is Module's virtual.
//
// The core owns the module tree; this header turns a subclass into a C
// vtable whose trampolines call the virtual functions, so no C++ type or
// exception crosses the ABI.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <nnp/detail/format.hpp>
#include <nnp/detail/typed_forward.hpp>
#include <nnp/layer_type.hpp>
#include <nnp/tensor.hpp>
#include <nnp/value.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace nnp {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StateDict = NamedTensors;

namespace detail {

struct ListTraits {
  static void release(nnp_list* l) { api().list_release(l); }
};
struct ModuleTraits {
  static void retain(nnp_module* m) { api().module_retain(m); }
  static void release(nnp_module* m) { api().module_release(m); }
};
struct AttrsTraits {
  static void release(nnp_attrs* a) { api().attrs_release(a); }
};

// Owns an nnp_list for the duration of a call.
class List : public Handle<nnp_list, ListTraits> {
 public:
  List() { check(api().list_create(out())); }
  explicit List(nnp_list* adopted) : Handle(adopted) {}
  using Handle::out;
  int32_t size() const { return api().list_size(get()); }
  std::string name(int32_t i) const { return api().list_name(get(), i); }
  Tensor tensor(int32_t i) const { return Tensor::borrow(api().list_tensor(get(), i)); }
  nnp_module* module(int32_t i) const { return api().list_module(get(), i); }
  NamedTensors tensors() const {
    NamedTensors out;
    for (int32_t i = 0; i < size(); ++i) out.emplace_back(name(i), tensor(i));
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (int32_t i = 0; i < size(); ++i) out.push_back(name(i));
    return out;
  }
  static List of(const NamedTensors& entries) {
    List list;
    for (const auto& [name, t] : entries) check(api().list_append_tensor(list.get(), name.c_str(), t.get()));
    return list;
  }
};

}  // namespace detail

// Named tensors to a safetensors file, and back.
inline void save_safetensors(const NamedTensors& tensors, const std::string& path,
                             const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  detail::List list = detail::List::of(tensors);
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : metadata) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  check(
      api().save_safetensors(list.get(), path.c_str(), keys.data(), values.data(), static_cast<int32_t>(keys.size())));
}
inline NamedTensors load_safetensors(const std::string& path, const Device& device = Device::cpu()) {
  detail::List list(nullptr);
  check(api().load_safetensors(path.c_str(), device.raw(), list.out()));
  return list.tensors();
}
// One array to and from NumPy's .npy format (numpy.save / numpy.load).
inline void save_npy(const Tensor& t, const std::string& path) { check(api().npy_save(t.get(), path.c_str())); }
inline Tensor load_npy(const std::string& path, const Device& device = Device::cpu()) {
  return Tensor::call(api().npy_load, path.c_str(), device.raw());
}
inline std::string safetensors_metadata(const std::string& path, const std::string& key) {
  return detail::query_string(
      [&](char* buf, size_t size, size_t* needed) {
        return api().safetensors_metadata(path.c_str(), key.c_str(), buf, size, needed);
      },
      check);
}

// Every __metadata__ entry of a safetensors file, from one read of its
// header (no tensor is read).
inline std::map<std::string, std::string> safetensors_metadata(const std::string& path) {
  detail::List list(nullptr);
  check(api().safetensors_metadata_all(path.c_str(), list.out()));
  std::map<std::string, std::string> out;
  for (int32_t i = 0; i < api().list_size(list.get()); ++i)
    out.emplace(api().list_name(list.get(), i), api().list_string(list.get(), i));
  return out;
}

namespace nn {

class ModuleHandle;

struct IncompatibleKeys {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

// Hook signatures (PyTorch's, with a handle to the module).
using ForwardPreHook = std::function<std::optional<std::vector<Tensor>>(ModuleHandle&, const std::vector<Tensor>&)>;
using ForwardHook = std::function<Tensor(ModuleHandle&, const std::vector<Tensor>&, const Tensor&)>;
// Forward hooks that see every argument and result, not only tensors.
using ForwardPreHookWithValues =
    std::function<std::optional<std::vector<Value>>(ModuleHandle&, const std::vector<Value>& args)>;
using ForwardHookWithValues = std::function<std::optional<std::vector<Value>>(
    ModuleHandle&, const std::vector<Value>& args, const std::vector<Value>& outputs)>;

// What a call with values gives: every result of forward. One tensor result
// converts to Tensor (Tensor y = (*net)(x, "relu")).
class Outputs : public std::vector<Value> {
 public:
  Outputs() = default;
  explicit Outputs(std::vector<Value> values) : std::vector<Value>(std::move(values)) {}
  operator Tensor() const {  // NOLINT: implicit by design
    if (size() != 1 || !front().isTensor())
      throw Error(NNP_INVALID_ARGUMENT, "forward gave " + std::to_string(size()) +
                                            " results where one tensor was expected; read them with [i]");
    return front().toTensor();
  }
  Tensor tensor(size_t i) const { return at(i).toTensor(); }
};

using BackwardPreHook = std::function<std::optional<std::vector<Tensor>>(ModuleHandle&, const std::vector<Tensor>&)>;
using BackwardHook = std::function<std::optional<std::vector<Tensor>>(ModuleHandle&, const std::vector<Tensor>&,
                                                                      const std::vector<Tensor>&)>;

// Every nn.Module method, for any class that can give its nnp_module*.
template <typename Derived>
class ModuleApi {
 public:
  std::string type_name() const { return api().module_type_name(h()); }

  // -- traversal --
  NamedTensors named_parameters(bool recurse = true, const std::string& prefix = "",
                                bool remove_duplicate = true) const {
    detail::List list(nullptr);
    check(api().named_parameters(h(), prefix.c_str(), recurse, remove_duplicate, list.out()));
    return list.tensors();
  }
  std::vector<Tensor> parameters(bool recurse = true) const { return values(named_parameters(recurse)); }
  NamedTensors named_buffers(bool recurse = true, const std::string& prefix = "", bool remove_duplicate = true) const {
    detail::List list(nullptr);
    check(api().named_buffers(h(), prefix.c_str(), recurse, remove_duplicate, list.out()));
    return list.tensors();
  }
  std::vector<Tensor> buffers(bool recurse = true) const { return values(named_buffers(recurse)); }
  std::vector<std::pair<std::string, ModuleHandle>> named_children() const;
  std::vector<ModuleHandle> children() const;
  std::vector<std::pair<std::string, ModuleHandle>> named_modules(const std::string& prefix = "",
                                                                  bool remove_duplicate = true) const;
  std::vector<ModuleHandle> modules() const;
  ModuleHandle get_submodule(const std::string& path) const;
  Tensor get_parameter(const std::string& path) const {
    return Tensor::call(api().get_parameter, static_cast<const nnp_module*>(h()), path.c_str());
  }
  Tensor get_buffer(const std::string& path) const {
    return Tensor::call(api().get_buffer, static_cast<const nnp_module*>(h()), path.c_str());
  }
  // getattr(module, path): a parameter, a buffer, or a tensor that pruning or
  // a parametrization computes (a parametrized one is computed now). ABI 1.6.
  Tensor get_tensor(const std::string& path) const { return Tensor::call(api().module_get_tensor, h(), path.c_str()); }
  // fn on every submodule (children first), then on this module.
  void apply(const std::function<void(ModuleHandle&)>& fn);

  // -- modes and conversion --
  void train(bool mode = true) { check(api().module_train(h(), mode)); }
  void eval() { train(false); }
  bool is_training() const { return api().module_is_training(h()) != 0; }
  void requires_grad_(bool value = true) { check(api().module_requires_grad(h(), value)); }
  void zero_grad(bool set_to_none = true) { check(api().module_zero_grad(h(), set_to_none)); }
  void to(const Device& device) {
    nnp_device raw = device.raw();
    check(api().module_to(h(), &raw, -1));
  }
  void to(Dtype dtype) { check(api().module_to(h(), nullptr, static_cast<nnp_dtype>(dtype))); }
  void to(const Device& device, Dtype dtype) {
    nnp_device raw = device.raw();
    check(api().module_to(h(), &raw, static_cast<nnp_dtype>(dtype)));
  }
  void to_empty(const Device& device) { check(api().module_to_empty(h(), device.raw())); }
  void cpu() { to(Device("cpu")); }
  void cuda(int32_t index = 0) { to(Device("cuda:" + std::to_string(index))); }
  void to_float() { to(Dtype::f32); }
  void to_double() { to(Dtype::f64); }
  void half() { to(Dtype::f16); }
  void bfloat16() { to(Dtype::bf16); }

  // -- calling --
  Tensor operator()(const Tensor& input) { return call({input}); }
  Tensor call(const std::vector<Tensor>& inputs) {
    std::vector<const nnp_tensor*> raw = detail::raw_all(inputs);
    return Tensor::call(api().module_call, h(), static_cast<const nnp_tensor* const*>(raw.data()),
                        static_cast<int32_t>(raw.size()));
  }
  // module(x, "relu", 3): any values (a forward with its own parameters).
  template <typename... A, typename = std::enable_if_t<detail::calls_with_values<A...>>>
  Outputs operator()(A&&... args) {
    return call_values({Value(std::forward<A>(args))...});
  }
  Outputs call_values(const std::vector<Value>& args) {
    detail::List given(detail::to_list(args));
    detail::List results(nullptr);
    check(api().module_call_values(h(), given.get(), results.out()));
    return Outputs(detail::values_of(results.get()));
  }

  // -- hooks --
  HookHandle register_forward_pre_hook(ForwardPreHook hook, bool prepend = false);
  HookHandle register_forward_hook(ForwardHook hook, bool prepend = false);
  HookHandle register_forward_pre_hook(ForwardPreHookWithValues hook, bool prepend = false);
  HookHandle register_forward_hook(ForwardHookWithValues hook, bool prepend = false);
  HookHandle register_full_backward_pre_hook(BackwardPreHook hook, bool prepend = false);
  HookHandle register_full_backward_hook(BackwardHook hook, bool prepend = false);

  // -- state --
  StateDict state_dict(const std::string& prefix = "", bool keep_vars = false) const {
    detail::List list(nullptr);
    check(api().state_dict(h(), prefix.c_str(), keep_vars, list.out()));
    return list.tensors();
  }
  IncompatibleKeys load_state_dict(const StateDict& state, bool strict = true, bool assign = false) {
    detail::List incoming = detail::List::of(state);
    nnp_list* missing = nullptr;
    nnp_list* unexpected = nullptr;
    check(api().load_state_dict(h(), incoming.get(), strict, assign, &missing, &unexpected));
    detail::List m(missing), u(unexpected);
    return IncompatibleKeys{m.names(), u.names()};
  }

  // The state dict to a safetensors file (atomic), and back (all or nothing).
  void save(const std::string& path) { check(api().module_save(h(), path.c_str())); }
  IncompatibleKeys load(const std::string& path, bool strict = true) {
    nnp_list* missing = nullptr;
    nnp_list* unexpected = nullptr;
    check(api().module_load(h(), path.c_str(), strict, &missing, &unexpected));
    detail::List m(missing), u(unexpected);
    return IncompatibleKeys{m.names(), u.names()};
  }

  std::string repr() const {
    return detail::query_string(
        [&](char* buf, size_t size, size_t* needed) { return api().module_repr(h(), buf, size, needed); }, check);
  }

 protected:
  nnp_module* h() const { return static_cast<const Derived*>(this)->handle(); }
  static std::vector<Tensor> values(const NamedTensors& named) {
    std::vector<Tensor> out;
    for (const auto& entry : named) out.push_back(entry.second);
    return out;
  }
};

// An owning reference to any core module (a subclass's, a container, or one
// found by traversal).
class ModuleHandle : public ModuleApi<ModuleHandle>, public detail::Handle<nnp_module, detail::ModuleTraits> {
 public:
  ModuleHandle() = default;
  static ModuleHandle adopt(nnp_module* m) { return ModuleHandle(m); }
  static ModuleHandle borrow(nnp_module* m) {
    if (m) api().module_retain(m);
    return ModuleHandle(m);
  }
  // From any module object that exposes handle() (shares it).
  template <typename M, typename = decltype(std::declval<M&>().handle())>
  ModuleHandle(const std::shared_ptr<M>& module)  // NOLINT: implicit by design
      : ModuleHandle(borrow(module ? module->handle() : nullptr)) {}
  // From a typed layer's holder (nnp/module_holder.hpp; shares it).
  template <typename H, typename = decltype(std::declval<const H&>().ptr()->handle()), typename = void>
  ModuleHandle(const H& holder)  // NOLINT: implicit by design
      : ModuleHandle(borrow(holder.ptr() ? holder.ptr()->handle() : nullptr)) {}
  nnp_module* handle() const { return get(); }
  bool operator==(const ModuleHandle& other) const { return get() == other.get(); }

 private:
  explicit ModuleHandle(nnp_module* m) : Handle(m) {}
};

// Subclass this and override forward.
class Module : public ModuleApi<Module> {
 public:
  explicit Module(const std::string& type_name) {
    nnp_module_vtable vtable{};
    vtable.struct_size = sizeof(vtable);
    vtable.forward = &Module::forward_trampoline;
    vtable.extra_repr = &Module::extra_repr_trampoline;
    vtable.destroy = &Module::destroy_trampoline;
    vtable.get_extra_state = &Module::get_extra_state_trampoline;
    vtable.set_extra_state = &Module::set_extra_state_trampoline;
    vtable.forward_values = &Module::forward_values_trampoline;
    vtable.right_inverse = &Module::right_inverse_trampoline;
    check(api().module_create(type_name.c_str(), &vtable, this, &handle_));
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  virtual ~Module() {
    if (core_destroying_ || handle_ == nullptr) return;
    // Destroyed before the core module (a stack object): calls now fail cleanly.
    api().module_detach_self(handle_);
    api().module_release(handle_);
  }

  nnp_module* handle() const { return handle_; }

  // Override one of these. The first gets every input; by default it hands
  // a single input to the second.
  virtual Tensor forward(const std::vector<Tensor>& inputs) {
    if (inputs.size() != 1)
      throw Error(NNP_INVALID_ARGUMENT, type_name() + ": forward takes one input, got " +
                                            std::to_string(inputs.size()) + "; override forward(std::vector<Tensor>)");
    return forward(inputs[0]);
  }
  virtual Tensor forward(const Tensor&) { throw Error(NNP_UNIMPLEMENTED, type_name() + " does not override forward"); }
  // A call with values: by default tensors go to forward above, and a
  // module made with make() whose forward has its own parameters gets them
  // converted. Override to take the values as they come.
  virtual std::vector<Value> forward_values(const std::vector<Value>& args) {
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].isTensor())
        throw Error(NNP_INVALID_ARGUMENT, type_name() + ": forward takes tensors only, and argument " +
                                              std::to_string(i) + " is " + args[i].kindPhrase() +
                                              " (declare forward with those parameters and create the module "
                                              "with nnp::nn::make, or override forward_values)");
      tensors.push_back(args[i].toTensor());
    }
    return {forward(tensors)};
  }
  // The text inside "Type(...)" when printed.
  virtual std::string extra_repr() const { return ""; }
  // Extra state, saved in the state dict as "<prefix>_extra_state" when
  // get_extra_state returns a defined tensor.
  virtual Tensor get_extra_state() const { return Tensor(); }
  virtual void set_extra_state(const Tensor&) {}
  // Used as a parametrization (nnp/parametrize.hpp): the original(s) that
  // forward maps to value. One tensor: the original is "original"; several:
  // "original0", "original1", ... and forward receives them all. Not
  // overriding it means there is none (PyTorch's missing right_inverse).
  virtual std::vector<Tensor> right_inverse(const Tensor& value) {
    (void)value;
    throw Error(NNP_UNIMPLEMENTED, type_name() + " has no right_inverse");
  }

 protected:
  Tensor register_parameter(const std::string& name, Tensor t, bool requires_grad = true) {
    check(api().register_parameter(handle_, name.c_str(), t.get(), requires_grad));
    return t;
  }
  Tensor register_buffer(const std::string& name, Tensor t, bool persistent = true) {
    check(api().register_buffer(handle_, name.c_str(), t.get(), persistent));
    return t;
  }
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> child) {
    check(api().register_module(handle_, name.c_str(), child ? child->handle() : nullptr));
    return child;
  }
  ModuleHandle register_module(const std::string& name, ModuleHandle child) {
    check(api().register_module(handle_, name.c_str(), child.handle()));
    return child;
  }
  // A typed layer's holder (fc = register_module("fc", nnp::nn::Linear(4, 3))).
  template <typename H, typename = decltype(std::declval<const H&>().ptr()->handle())>
  H register_module(const std::string& name, H holder) {
    check(api().register_module(handle_, name.c_str(), holder.ptr() ? holder.ptr()->handle() : nullptr));
    return holder;
  }
  template <typename M>
  auto add_module(const std::string& name, M child) {
    return register_module(name, std::move(child));
  }

 private:
  template <typename M, typename... Args>
  friend std::shared_ptr<M> make(Args&&... args);

  static nnp_status forward_trampoline(void* self, nnp_module*, const nnp_tensor* const* inputs, int32_t n,
                                       nnp_tensor** output) {
    return detail::guard([&] {
      Module* module = static_cast<Module*>(self);
      std::vector<Tensor> tensors = detail::borrow_all(inputs, n);
      if (!module->typed_forward_) {
        *output = module->forward(tensors).release();
        return;
      }
      std::vector<Value> results = module->typed_forward_(std::vector<Value>(tensors.begin(), tensors.end()));
      if (results.size() != 1 || !results[0].isTensor())
        throw Error(NNP_INVALID_ARGUMENT, module->type_name() + ": forward gave " + std::to_string(results.size()) +
                                              " results where one tensor was expected; call_values({x}) gives "
                                              "every result");
      *output = Tensor(results[0].toTensor()).release();
    });
  }
  static nnp_status forward_values_trampoline(void* self, nnp_module*, const nnp_list* args, nnp_list* outputs) {
    return detail::guard([&] {
      Module* module = static_cast<Module*>(self);
      std::vector<Value> given = detail::values_of(args);
      std::vector<Value> results =
          module->typed_forward_ ? module->typed_forward_(given) : module->forward_values(given);
      detail::append_values(outputs, results);
    });
  }
  static nnp_status extra_repr_trampoline(void* self, char* buf, size_t size, size_t* needed) {
    return detail::guard([&] { detail::write_string(static_cast<Module*>(self)->extra_repr(), buf, size, needed); });
  }
  static nnp_status right_inverse_trampoline(void* self, nnp_module*, const nnp_tensor* value, nnp_list* outputs) {
    return detail::guard([&] {
      std::vector<Tensor> originals =
          static_cast<Module*>(self)->right_inverse(Tensor::borrow(const_cast<nnp_tensor*>(value)));
      detail::append_values(outputs, std::vector<Value>(originals.begin(), originals.end()));
    });
  }
  static void destroy_trampoline(void* self) {
    Module* module = static_cast<Module*>(self);
    module->core_destroying_ = true;
    if (module->owned_by_core_) delete module;
  }
  static nnp_status get_extra_state_trampoline(void* self, nnp_tensor** out) {
    return detail::guard([&] { *out = static_cast<Module*>(self)->get_extra_state().release(); });
  }
  static nnp_status set_extra_state_trampoline(void* self, const nnp_tensor* state) {
    return detail::guard(
        [&] { static_cast<Module*>(self)->set_extra_state(Tensor::borrow(const_cast<nnp_tensor*>(state))); });
  }

  nnp_module* handle_ = nullptr;
  bool owned_by_core_ = false;
  bool core_destroying_ = false;
  detail::TypedForward typed_forward_;  // set by make() for a forward with its own parameters
};

// Creates a module the core owns: the object lives while the returned
// pointer, or any parent module, refers to it.
template <typename M, typename... Args>
std::shared_ptr<M> make(Args&&... args) {
  M* object = new M(std::forward<Args>(args)...);
  object->owned_by_core_ = true;
  if constexpr (detail::has_typed_forward<M>::value)
    object->typed_forward_ = detail::typed_forward(object, &M::forward, object->type_name());
  nnp_module* handle = object->handle();
  return std::shared_ptr<M>(object, [handle](M*) { api().module_release(handle); });
}

// ---- layer attributes and the layer registry ----

// Attribute values: built to create a layer, or read inside a layer's create.
class Attrs {
 public:
  Attrs() {
    check(api().attrs_create(owned_.out()));
    attrs_ = owned_.get();
  }
  static Attrs view(const nnp_attrs* attrs) { return Attrs(const_cast<nnp_attrs*>(attrs)); }
  // Takes over a set the core handed out (module_layer_attrs).
  static Attrs adopt(nnp_attrs* owned) {
    Attrs a(owned);
    *a.owned_.out() = owned;
    return a;
  }
  Attrs(Attrs&& other) noexcept : owned_(std::move(other.owned_)), attrs_(std::exchange(other.attrs_, nullptr)) {}
  Attrs(const Attrs&) = delete;
  Attrs& operator=(const Attrs&) = delete;
  const nnp_attrs* get() const { return attrs_; }

  Attrs& set(const std::string& name, int64_t v) { return put(api().attrs_set_int(attrs_, name.c_str(), v)); }
  Attrs& set(const std::string& name, int v) { return set(name, static_cast<int64_t>(v)); }
  Attrs& set(const std::string& name, double v) { return put(api().attrs_set_float(attrs_, name.c_str(), v)); }
  Attrs& set(const std::string& name, bool v) { return put(api().attrs_set_bool(attrs_, name.c_str(), v)); }
  Attrs& set(const std::string& name, const char* v) { return put(api().attrs_set_string(attrs_, name.c_str(), v)); }
  Attrs& set(const std::string& name, const std::string& v) { return set(name, v.c_str()); }
  Attrs& set(const std::string& name, const std::vector<int64_t>& v) {
    return put(api().attrs_set_ints(attrs_, name.c_str(), v.data(), static_cast<int32_t>(v.size())));
  }
  Attrs& set(const std::string& name, const std::vector<double>& v) {
    return put(api().attrs_set_floats(attrs_, name.c_str(), v.data(), static_cast<int32_t>(v.size())));
  }
  // PyTorch's None: the layer sees `name` absent, its default not applied.
  Attrs& set(const std::string& name, std::nullopt_t) { return put(api().attrs_set_none(attrs_, name.c_str())); }
  // An optional value: set when it has one, None when not.
  template <typename T>
  Attrs& set(const std::string& name, const std::optional<T>& v) {
    return v ? set(name, *v) : set(name, std::nullopt);
  }

  bool has(const std::string& name) const { return api().attrs_has(attrs_, name.c_str()) != 0; }
  int64_t integer(const std::string& name) const {
    int64_t v = 0;
    check(api().attrs_get_int(attrs_, name.c_str(), &v));
    return v;
  }
  double real(const std::string& name) const {
    double v = 0;
    check(api().attrs_get_float(attrs_, name.c_str(), &v));
    return v;
  }
  bool boolean(const std::string& name) const {
    int32_t v = 0;
    check(api().attrs_get_bool(attrs_, name.c_str(), &v));
    return v != 0;
  }
  std::string string(const std::string& name) const {
    const char* v = nullptr;
    check(api().attrs_get_string(attrs_, name.c_str(), &v));
    return v;
  }
  // Whether `name` holds a string: an NNP_ATTR_INTS_OR_STRING attribute
  // keeps the type it was given (padding [1, 2] or "same").
  bool holds_string(const std::string& name) const {
    const char* v = nullptr;
    return api().attrs_get_string(attrs_, name.c_str(), &v) == NNP_OK;
  }
  std::vector<int64_t> integers(const std::string& name) const {
    int32_t count = 0;
    check(api().attrs_get_ints(attrs_, name.c_str(), nullptr, 0, &count));
    std::vector<int64_t> v(static_cast<size_t>(count));
    check(api().attrs_get_ints(attrs_, name.c_str(), v.data(), count, &count));
    return v;
  }
  // A list of numbers (a list of ints reads as one too).
  std::vector<double> reals(const std::string& name) const {
    int32_t count = 0;
    check(api().attrs_get_floats(attrs_, name.c_str(), nullptr, 0, &count));
    std::vector<double> v(static_cast<size_t>(count));
    check(api().attrs_get_floats(attrs_, name.c_str(), v.data(), count, &count));
    return v;
  }

 private:
  // The owning form: out() is reachable only here.
  struct Owned : detail::Handle<nnp_attrs, detail::AttrsTraits> {
    using Handle::out;
  };
  explicit Attrs(nnp_attrs* borrowed) : attrs_(borrowed) {}
  Attrs& put(nnp_status status) {
    check(status);
    return *this;
  }
  Owned owned_;                 // empty for a view
  nnp_attrs* attrs_ = nullptr;  // owned_.get(), or the viewed set
};

// The layer type and attributes the layer registry made a module with (a
// spec's entry, layer_create, onnx::load's nn.GraphModule); nullopt for a
// module made otherwise.
struct LayerSpec {
  std::string type;
  Attrs attrs;
};
inline std::optional<LayerSpec> layer_spec(const ModuleHandle& m) {
  const char* type = nullptr;
  nnp_attrs* attrs = nullptr;
  const nnp_status status = api().module_layer_attrs(m.get(), &type, &attrs);
  if (status == NNP_NOT_FOUND) return std::nullopt;
  check(status);
  return LayerSpec{type, Attrs::adopt(attrs)};
}

// Creates a layer of the registry ("nn.Linear", "acme.Swish").
inline ModuleHandle create_layer(const std::string& type, const Attrs& attrs = Attrs()) {
  nnp_module* m = nullptr;
  check(api().layer_create(type.c_str(), attrs.get(), &m));
  return ModuleHandle::adopt(m);
}

// A module tree from a JSON model spec (text, or a file).
inline ModuleHandle model_from_spec(const std::string& json) {
  nnp_module* m = nullptr;
  check(api().model_from_spec(json.c_str(), &m));
  return ModuleHandle::adopt(m);
}
inline ModuleHandle model_from_spec_file(const std::string& path) {
  nnp_module* m = nullptr;
  check(api().model_from_spec_file(path.c_str(), &m));
  return ModuleHandle::adopt(m);
}

// Makes M (constructed from Attrs) a layer type's create function.
template <typename M>
nnp_status create_layer_of(const nnp_attrs* attrs, void*, nnp_module** out) {
  return detail::guard([&] {
    std::shared_ptr<M> layer = make<M>(Attrs::view(attrs));
    api().module_retain(layer->handle());
    *out = layer->handle();
  });
}

// A layer type whose create() makes M (constructed from Attrs), to hand to
// the registry: api().register_layer_type(host, &decl.get()) from a plugin.
template <typename M>
LayerTypeDecl layer_type(const char* name, const char* doc, const std::vector<AttrDecl>& attrs = {}) {
  return LayerTypeDecl(name, doc, attrs, create_layer_of<M>);
}
// Registers layer type M from a plugin's init.
template <typename M>
void register_layer(nnp_plugin_host* host, const char* name, const char* doc, const std::vector<AttrDecl>& attrs = {}) {
  check(api().register_layer_type(host, &layer_type<M>(name, doc, attrs).get()));
}

// ---- containers ----

inline ModuleHandle make_container(nnp_container_kind kind) {
  nnp_module* m = nullptr;
  check(api().container_create(kind, &m));
  return ModuleHandle::adopt(m);
}

// Calls its modules in order, each output feeding the next.
class Sequential : public ModuleHandle {
 public:
  Sequential() : ModuleHandle(make_container(NNP_SEQUENTIAL)) {}
  Sequential(std::initializer_list<ModuleHandle> modules) : Sequential() {
    for (const ModuleHandle& m : modules) push_back(m);
  }
  void push_back(const ModuleHandle& m) {
    check(api().register_module(handle(), std::to_string(size()).c_str(), m.handle()));
  }
  int32_t size() const { return static_cast<int32_t>(named_children().size()); }
  ModuleHandle operator[](int32_t i) const { return get_submodule(std::to_string(i)); }
};

class ModuleList : public ModuleHandle {
 public:
  ModuleList() : ModuleHandle(make_container(NNP_MODULE_LIST)) {}
  ModuleList(std::initializer_list<ModuleHandle> modules) : ModuleList() {
    for (const ModuleHandle& m : modules) push_back(m);
  }
  void push_back(const ModuleHandle& m) {
    check(api().register_module(handle(), std::to_string(count_).c_str(), m.handle()));
    ++count_;
  }
  int32_t size() const { return count_; }
  ModuleHandle operator[](int32_t i) const { return get_submodule(std::to_string(i)); }

 private:
  int32_t count_ = 0;
};

class ModuleDict : public ModuleHandle {
 public:
  ModuleDict() : ModuleHandle(make_container(NNP_MODULE_DICT)) {}
  ModuleDict(std::initializer_list<std::pair<std::string, ModuleHandle>> entries) : ModuleDict() {
    for (const auto& [name, m] : entries) insert(name, m);
  }
  void insert(const std::string& name, const ModuleHandle& m) {
    check(api().register_module(handle(), name.c_str(), m.handle()));
  }
  ModuleHandle operator[](const std::string& name) const { return get_submodule(name); }
};

class ParameterList : public ModuleHandle {
 public:
  ParameterList() : ModuleHandle(make_container(NNP_PARAMETER_LIST)) {}
  Tensor append(Tensor t, bool requires_grad = true) {
    check(api().register_parameter(handle(), std::to_string(count_++).c_str(), t.get(), requires_grad));
    return t;
  }
  Tensor operator[](int32_t i) const { return get_parameter(std::to_string(i)); }
  int32_t size() const { return count_; }

 private:
  int32_t count_ = 0;
};

class ParameterDict : public ModuleHandle {
 public:
  ParameterDict() : ModuleHandle(make_container(NNP_PARAMETER_DICT)) {}
  Tensor insert(const std::string& name, Tensor t, bool requires_grad = true) {
    check(api().register_parameter(handle(), name.c_str(), t.get(), requires_grad));
    return t;
  }
  Tensor operator[](const std::string& name) const { return get_parameter(name); }
};

// ---- ModuleApi members that need ModuleHandle ----

template <typename D>
std::vector<std::pair<std::string, ModuleHandle>> ModuleApi<D>::named_children() const {
  detail::List list(nullptr);
  check(api().named_children(h(), list.out()));
  std::vector<std::pair<std::string, ModuleHandle>> out;
  for (int32_t i = 0; i < list.size(); ++i) out.emplace_back(list.name(i), ModuleHandle::borrow(list.module(i)));
  return out;
}

template <typename D>
std::vector<ModuleHandle> ModuleApi<D>::children() const {
  std::vector<ModuleHandle> out;
  for (auto& entry : named_children()) out.push_back(entry.second);
  return out;
}

template <typename D>
std::vector<std::pair<std::string, ModuleHandle>> ModuleApi<D>::named_modules(const std::string& prefix,
                                                                              bool remove_duplicate) const {
  detail::List list(nullptr);
  check(api().named_modules(h(), prefix.c_str(), remove_duplicate, list.out()));
  std::vector<std::pair<std::string, ModuleHandle>> out;
  for (int32_t i = 0; i < list.size(); ++i) out.emplace_back(list.name(i), ModuleHandle::borrow(list.module(i)));
  return out;
}

template <typename D>
std::vector<ModuleHandle> ModuleApi<D>::modules() const {
  std::vector<ModuleHandle> out;
  for (auto& entry : named_modules()) out.push_back(entry.second);
  return out;
}

template <typename D>
ModuleHandle ModuleApi<D>::get_submodule(const std::string& path) const {
  nnp_module* m = nullptr;
  check(api().get_submodule(h(), path.c_str(), &m));
  return ModuleHandle::adopt(m);
}

template <typename D>
void ModuleApi<D>::apply(const std::function<void(ModuleHandle&)>& fn) {
  auto trampoline = [](nnp_module* m, void* user_data) -> nnp_status {
    return detail::guard([&] {
      ModuleHandle handle = ModuleHandle::borrow(m);
      (*static_cast<const std::function<void(ModuleHandle&)>*>(user_data))(handle);
    });
  };
  check(api().module_apply(h(), trampoline, const_cast<std::function<void(ModuleHandle&)>*>(&fn)));
}

namespace hook_detail {

// Registers a module hook whose C++ callable lives on the heap until the
// core releases it; `adapt` turns the C arguments into the callable's.
template <typename Callable>
HookHandle register_module_hook(nnp_module* m, nnp_module_hook_kind kind, Callable callable, bool prepend,
                                nnp_module_hook_fn trampoline) {
  nnp_hook_handle* handle = nullptr;
  check(api().module_register_hook(
      m, kind, trampoline, new Callable(std::move(callable)), [](void* p) { delete static_cast<Callable*>(p); },
      prepend, &handle));
  return HookHandle(handle);
}

inline void write_replacements(const std::optional<std::vector<Tensor>>& replaced, nnp_tensor** replace, int32_t n) {
  if (!replaced) return;
  if (static_cast<int32_t>(replaced->size()) != n)
    throw Error(NNP_INVALID_ARGUMENT, "hook returned " + std::to_string(replaced->size()) + " tensors where " +
                                          std::to_string(n) + " were expected");
  for (int32_t i = 0; i < n; ++i) replace[i] = Tensor((*replaced)[static_cast<size_t>(i)]).release();
}

// Forward pre-hooks and backward pre-hooks see one list of tensors (inputs,
// or output gradients) and may replace all of them: one trampoline for both.
template <typename PreHook>
HookHandle register_pre_hook(nnp_module* m, nnp_module_hook_kind kind, PreHook hook, bool prepend) {
  return register_module_hook(
      m, kind, std::move(hook), prepend,
      [](nnp_module* module, const nnp_tensor* const* a, int32_t n_a, const nnp_tensor* const*, int32_t,
         nnp_tensor** replace, void* user_data) -> nnp_status {
        return detail::guard([&] {
          ModuleHandle handle = ModuleHandle::borrow(module);
          write_replacements((*static_cast<PreHook*>(user_data))(handle, detail::borrow_all(a, n_a)), replace, n_a);
        });
      });
}

// Registers a forward hook or pre-hook that sees values.
template <typename Callable>
HookHandle register_values_hook(nnp_module* m, nnp_module_hook_kind kind, Callable callable, bool prepend) {
  nnp_module_values_hook_fn trampoline = [](nnp_module* module, const nnp_list* args, const nnp_list* outputs,
                                            nnp_list** replace, void* user_data) -> nnp_status {
    return detail::guard([&] {
      ModuleHandle handle = ModuleHandle::borrow(module);
      std::optional<std::vector<Value>> replaced;
      if constexpr (std::is_same_v<Callable, ForwardHookWithValues>)
        replaced = (*static_cast<Callable*>(user_data))(handle, detail::values_of(args), detail::values_of(outputs));
      else
        replaced = (*static_cast<Callable*>(user_data))(handle, detail::values_of(args));
      if (replaced) *replace = detail::to_list(*replaced);
    });
  };
  nnp_hook_handle* handle = nullptr;
  check(api().module_register_values_hook(
      m, kind, trampoline, new Callable(std::move(callable)), [](void* p) { delete static_cast<Callable*>(p); },
      prepend, &handle));
  return HookHandle(handle);
}

}  // namespace hook_detail

template <typename D>
HookHandle ModuleApi<D>::register_forward_pre_hook(ForwardPreHook hook, bool prepend) {
  return hook_detail::register_pre_hook(h(), NNP_HOOK_FORWARD_PRE, std::move(hook), prepend);
}

template <typename D>
HookHandle ModuleApi<D>::register_forward_hook(ForwardHook hook, bool prepend) {
  return hook_detail::register_module_hook(
      h(), NNP_HOOK_FORWARD, std::move(hook), prepend,
      [](nnp_module* m, const nnp_tensor* const* a, int32_t n_a, const nnp_tensor* const* b, int32_t n_b,
         nnp_tensor** replace, void* user_data) -> nnp_status {
        return detail::guard([&] {
          ModuleHandle module = ModuleHandle::borrow(m);
          if (n_b != 1)
            throw Error(NNP_INVALID_ARGUMENT, module.type_name() + " gave " + std::to_string(n_b) +
                                                  " tensor results; a forward hook that sees several takes "
                                                  "std::vector<nnp::Value> (ForwardHookWithValues)");
          Tensor output = Tensor::borrow(const_cast<nnp_tensor*>(b[0]));
          replace[0] = (*static_cast<ForwardHook*>(user_data))(module, detail::borrow_all(a, n_a), output).release();
        });
      });
}

template <typename D>
HookHandle ModuleApi<D>::register_forward_pre_hook(ForwardPreHookWithValues hook, bool prepend) {
  return hook_detail::register_values_hook(h(), NNP_HOOK_FORWARD_PRE, std::move(hook), prepend);
}

template <typename D>
HookHandle ModuleApi<D>::register_forward_hook(ForwardHookWithValues hook, bool prepend) {
  return hook_detail::register_values_hook(h(), NNP_HOOK_FORWARD, std::move(hook), prepend);
}

template <typename D>
HookHandle ModuleApi<D>::register_full_backward_pre_hook(BackwardPreHook hook, bool prepend) {
  return hook_detail::register_pre_hook(h(), NNP_HOOK_BACKWARD_PRE, std::move(hook), prepend);
}

template <typename D>
HookHandle ModuleApi<D>::register_full_backward_hook(BackwardHook hook, bool prepend) {
  return hook_detail::register_module_hook(
      h(), NNP_HOOK_BACKWARD, std::move(hook), prepend,
      [](nnp_module* m, const nnp_tensor* const* a, int32_t n_a, const nnp_tensor* const* b, int32_t n_b,
         nnp_tensor** replace, void* user_data) -> nnp_status {
        return detail::guard([&] {
          ModuleHandle module = ModuleHandle::borrow(m);
          hook_detail::write_replacements(
              (*static_cast<BackwardHook*>(user_data))(module, detail::borrow_all(a, n_a), detail::borrow_all(b, n_b)),
              replace, n_a);
        });
      });
}

template <typename M, typename = decltype(std::declval<const M&>().repr())>
std::ostream& operator<<(std::ostream& out, const M& module) {
  return out << module.repr();
}

}  // namespace nn
}  // namespace nnp
