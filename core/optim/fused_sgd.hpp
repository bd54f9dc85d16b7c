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

}  // namespace nnp::core::optim
