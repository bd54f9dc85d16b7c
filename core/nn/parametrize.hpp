// torch.nn.utils.parametrize: a parameter or buffer becomes the output of
// modules applied to an original, stored as PyTorch stores it
// (parametrizations.<name>.original, or original0.., and the modules "0",
// "1", .. of a ParametrizationList), computed before each call.
#pragma once

#include <string>

#include "module.hpp"

namespace nnp::core::nn {

void register_parametrization(Module& m, const std::string& name, Module& parametrization, bool unsafe);
void remove_parametrizations(Module& m, const std::string& name, bool leave_parametrized);
// name empty: any.
bool is_parametrized(const Module& m, const std::string& name);
// module.<name> = value: the originals become right_inverse(value).
void assign_parametrized(Module& m, const std::string& name, const Tensor& value);
// Computes the value of a parametrized name now (once per cached() scope)
// and binds the layer's tensor to it.
TensorRef parametrized_value(Module& m, const std::string& name);
// Every parametrized tensor of m, before its forward.
void refresh_parametrized(Module& m);

void parametrize_cache_enter();
void parametrize_cache_exit();

}  // namespace nnp::core::nn
