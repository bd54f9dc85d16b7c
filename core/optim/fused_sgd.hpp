// torch.optim.SGD's step through the backend's optional sgd_step kernel.
#pragma once

#include <map>
#include <string>

#include "algorithms.hpp"

namespace nnp::core::optim {

// Computes the new parameter (and, with momentum, the new buffer; buffer is
// NULL on the first step) into new tensors and returns true, or returns
// false, computing nothing, where the kernel does not apply: the backend has
// none, or the dtype (f32 and f64 only), device or layout does not suit it.
bool fused_sgd(const std::map<std::string, double>& options, const Tensor& param, const Tensor& grad,
               const Tensor* buffer, Tensor* param_out, Tensor* buffer_out);

// Whether the backend steps this parameter in place
// (NNP_BACKEND_SGD_IN_PLACE): the kernel applies, and with momentum the
// buffer already exists.
bool sgd_in_place_applies(const std::map<std::string, double>& options, const Tensor& param, const Tensor& grad,
                          const Tensor* buffer);
// Steps param (and the buffer) in place, where sgd_in_place_applies. The
// backend promises not to fail; a step calls it after everything that can.
void sgd_in_place(const std::map<std::string, double>& options, Tensor& param, const Tensor& grad, Tensor* buffer);

}  // namespace nnp::core::optim
