// nnp/module_holder.hpp - typed layers as libtorch writes them:
//
//   nnp::nn::Linear lin(64, 32);            // a holder: shares one LinearImpl
//   nnp::Tensor y = lin(x);                  // lin->forward(x)
//   lin->weight, lin->options.out_features() // typed fields
//   nnp::nn::Sequential seq{lin, nnp::nn::ReLU()};
//
// A typed layer is a view of a layer made by the layer registry (the same
// create() that model specs and plugins use), so there is one implementation
// per layer. A plugin offers typed holders for its own layers the same way:
//
//   struct SwishOptions { NNP_ARG(double, beta) = 1.0; };
//   struct SwishImpl : nnp::nn::Layer {
//     explicit SwishImpl(SwishOptions o = {})
//         : Layer("acme.Swish", nnp::nn::Attrs().set("beta", o.beta())), options(o) {}
//     nnp::Tensor forward(const nnp::Tensor& x) { return call({x}); }
//     SwishOptions options;
//   };
//   NNP_MODULE(Swish);
#pragma once

#include <cstddef>
#include <memory>
#include <nnp/nn.hpp>
#include <string>
#include <type_traits>
#include <utility>

namespace nnp::nn {

// The base of a typed layer's Impl: owns the registry's module and offers
// every nn.Module method on it.
class Layer : public ModuleApi<Layer> {
 public:
  Layer(const std::string& type, const Attrs& attrs) : module_(create_layer(type, attrs)) {}
  nnp_module* handle() const { return module_.handle(); }
  const ModuleHandle& module() const { return module_; }

 protected:
  // A directly registered parameter or buffer; undefined when it is
  // registered as None (a Linear without bias).
  Tensor tensor_named(const std::string& name) const {
    for (const auto& [key, value] : named_parameters(false))
      if (key == name) return value;
    for (const auto& [key, value] : named_buffers(false))
      if (key == name) return value;
    return Tensor();
  }

 private:
  ModuleHandle module_;
};

// Shares one Impl, as libtorch's ModuleHolder: copies refer to the same
// layer; `Linear fc{nullptr}` is an empty holder to assign later.
template <typename Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  // Default-constructs the Impl where it has a default constructor (ReLU r;).
  template <typename I = Impl, typename = std::enable_if_t<std::is_default_constructible_v<I>>>
  ModuleHolder() : impl_(std::make_shared<Impl>()) {}
  ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as libtorch's
  template <typename First, typename... Rest,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<First>, std::nullptr_t> &&
                                        !std::is_base_of_v<ModuleHolder, std::decay_t<First>> &&
                                        std::is_constructible_v<Impl, First&&, Rest&&...>>>
  explicit ModuleHolder(First&& first, Rest&&... rest)
      : impl_(std::make_shared<Impl>(std::forward<First>(first), std::forward<Rest>(rest)...)) {}
  explicit ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    if (!impl_)
      throw Error(NNP_INVALID_ARGUMENT, "an empty module holder was used; assign it a module before calling it");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // Calls forward with these arguments, as libtorch's holders do.
  template <typename... Args>
  auto operator()(Args&&... args) const {
    return get()->forward(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace nnp::nn

// Declares the holder `Name` of `Name##Impl`, as libtorch's TORCH_MODULE.
#define NNP_MODULE(Name)                                                                                \
  class Name : public ::nnp::nn::ModuleHolder<Name##Impl> {                                             \
   public:                                                                                              \
    using ::nnp::nn::ModuleHolder<Name##Impl>::ModuleHolder;                                            \
    /* `Name n;` where the Impl has a default constructor (ReLU r;). */                                 \
    template <typename I = Name##Impl, typename = std::enable_if_t<std::is_default_constructible_v<I>>> \
    Name() : ::nnp::nn::ModuleHolder<Name##Impl>(std::make_shared<I>()) {}                              \
  }
