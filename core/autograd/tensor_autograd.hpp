// The autograd properties of a single tensor: requires_grad, .grad, leaf
// status, retain_grad, detach, hooks and backward.
#pragma once

#include <nnp/nnp.h>

#include <memory>

#include "../tensor.hpp"
#include "hook_handle.hpp"
#include "node.hpp"

namespace nnp::core::autograd {

void set_requires_grad(Tensor& t, bool value);
bool is_leaf(const Tensor& t);
TensorRef grad(const Tensor& t);               // empty when none
void set_grad(Tensor& t, const Tensor* grad);  // nullptr clears
void retain_grad(Tensor& t);
TensorRef detach(const Tensor& t);
const char* grad_fn_name(const Tensor& t);  // "" for leaves
// Runs hook on t's gradient each time it is computed; returns the handle.
nnp_hook_handle* register_hook(Tensor& t, GradHook hook);
// A hook from the C API: fn may hand back a replacement gradient; user_data
// lives as long as the hook.
nnp_hook_handle* register_hook(Tensor& t, nnp_tensor_hook_fn fn, std::shared_ptr<void> user_data);
// Runs fn on the leaf t after each accumulation into its .grad.
nnp_hook_handle* register_post_accumulate_grad_hook(Tensor& t, nnp_post_accumulate_grad_hook_fn fn,
                                                    std::shared_ptr<void> user_data);

}  // namespace nnp::core::autograd
