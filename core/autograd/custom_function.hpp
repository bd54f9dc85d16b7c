// Custom autograd functions defined through the C API (nnp_function).
#pragma once

#include <nnp/nnp.h>

#include <vector>

#include "../tensor.hpp"

namespace nnp::core::autograd {

std::vector<TensorRef> apply_function(const nnp_function& fn, void* user_data, const Tensor* const* inputs,
                                      int32_t n_inputs, int32_t n_outputs);
void save_for_backward(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count);
int32_t saved_count(const nnp_function_ctx* ctx);
TensorRef saved(const nnp_function_ctx* ctx, int32_t i);

}  // namespace nnp::core::autograd
