// nnp/parametrize.hpp - torch.nn.utils.parametrize for any module (ABI 1.6):
// a parameter or buffer becomes the output of a module applied to an
// original. Stored as PyTorch stores it, so state dicts cross both ways:
// "parametrizations.weight.original" (or original0, original1, ... when the
// parametrization's right_inverse gives several tensors) and each
// parametrization's own state under "parametrizations.weight.0.".
//
//   struct Symmetric : nnp::nn::Module {
//     Symmetric() : Module("Symmetric") {}
//     nnp::Tensor forward(const nnp::Tensor& x) override { return x.triu() + x.triu(1).t(); }
//   };
//   namespace P = nnp::nn::utils::parametrize;
//   P::register_parametrization(fc, "weight", nnp::nn::make<Symmetric>());
//   fc->weight;               // the layer's tensor: the value, computed before each call
//   fc.get_tensor("weight");  // computed now
//
// The tensor the layer holds under the name shows the value; the original
// is a new leaf (build optimizers after registering). A parametrization is
// any module; override Module::right_inverse to let
// register_parametrization initialise the original from the current value
// and set() assign one.
#pragma once

#include <nnp/nn.hpp>
#include <string>

namespace nnp::nn::utils::parametrize {

inline ModuleHandle register_parametrization(const ModuleHandle& module, const std::string& name,
                                             const ModuleHandle& parametrization, bool unsafe = false) {
  check(api().register_parametrization(module.handle(), name.c_str(), parametrization.handle(), unsafe ? 1 : 0));
  return module;
}

// leave_parametrized: `name` keeps the current value; otherwise the original.
inline ModuleHandle remove_parametrizations(const ModuleHandle& module, const std::string& name,
                                            bool leave_parametrized = true) {
  check(api().remove_parametrizations(module.handle(), name.c_str(), leave_parametrized ? 1 : 0));
  return module;
}

// On `name`, or on anything when name is empty.
inline bool is_parametrized(const ModuleHandle& module, const std::string& name = "") {
  return api().is_parametrized(module.handle(), name.empty() ? nullptr : name.c_str()) != 0;
}

// module.<name> = value: the originals become right_inverse(value).
inline void set(const ModuleHandle& module, const std::string& name, const Tensor& value) {
  check(api().parametrization_assign(module.handle(), name.c_str(), value.get()));
}

// The module's type before its first parametrization ("Linear" for "ParametrizedLinear").
inline std::string type_before_parametrizations(const ModuleHandle& module) {
  const std::string type = module.type_name();
  return is_parametrized(module) && type.rfind("Parametrized", 0) == 0 ? type.substr(12) : type;
}

// parametrize.cached(): while one lives (on any thread), each parametrized
// tensor is computed once, as PyTorch's context manager.
class cached {
 public:
  cached() { api().parametrize_cache_enter(); }
  ~cached() { api().parametrize_cache_exit(); }
  cached(const cached&) = delete;
  cached& operator=(const cached&) = delete;
};

}  // namespace nnp::nn::utils::parametrize
