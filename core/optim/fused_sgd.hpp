// torch.optim.SGD's step through the backend's optional sgd_step kernel:
// out of place for nnp_api.sgd_step_fused (the built-in SGD's fast path),
// in place where the backend steps in place (NNP_BACKEND_SGD_IN_PLACE).
#pragma once

#include <nnp/nnp.h>

#include "../tensor.hpp"

namespace nnp::core::optim {

// The new parameter (and, with momentum, the new buffer; buffer is NULL at
// the first step) in new tensors, or an empty param_out, computing nothing,
// where the kernel does not apply: the backend has none, or the dtype (f32
// and f64 only), device or layout does not suit it.
void fused_sgd(const nnp_sgd_params& params, const Tensor& param, const Tensor& grad, const Tensor* buffer,
               TensorRef* param_out, TensorRef* buffer_out);

// Whether the backend steps this parameter in place
// (NNP_BACKEND_SGD_IN_PLACE): the kernel applies, and with momentum the
// buffer already exists.
bool sgd_in_place_applies(const nnp_sgd_params& params, const Tensor& param, const Tensor& grad, const Tensor* buffer);
// Steps param (and the buffer) in place, where sgd_in_place_applies. The
// backend promises not to fail; a step calls it after everything that can.
void sgd_in_place(const nnp_sgd_params& params, Tensor& param, const Tensor& grad, Tensor* buffer);

}  // namespace nnp::core::optim
