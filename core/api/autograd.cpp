// Adapters: gradients, grad mode, tensor hooks, custom autograd functions and
// activation checkpointing.
#include <vector>

#include "../autograd/checkpoint.hpp"
#include "../autograd/custom_function.hpp"
#include "../autograd/engine.hpp"
#include "../autograd/grad_mode.hpp"
#include "../autograd/hook_handle.hpp"
#include "../autograd/record.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "arguments.hpp"
#include "caller_function.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status set_requires_grad(nnp_tensor* t, int32_t value) {
  return guard([&] { autograd::set_requires_grad(in_arg(t, "set_requires_grad", "t"), value != 0); });
}
int32_t requires_grad(const nnp_tensor* t) { return t && autograd::requires_grad(*t) ? 1 : 0; }
int32_t is_leaf(const nnp_tensor* t) { return !t || autograd::is_leaf(*t) ? 1 : 0; }
nnp_status grad(const nnp_tensor* t, nnp_tensor** out) {
  return handle_out(out, "grad", [&] { return autograd::grad(tensor_arg(t, "grad")); });
}
nnp_status set_grad(nnp_tensor* t, const nnp_tensor* grad) {
  return guard([&] { autograd::set_grad(in_arg(t, "set_grad", "t"), grad); });
}
nnp_status retain_grad(nnp_tensor* t) {
  return guard([&] { autograd::retain_grad(in_arg(t, "retain_grad", "t")); });
}
nnp_status detach(const nnp_tensor* t, nnp_tensor** out) {
  return handle_out(out, "detach", [&] { return autograd::detach(tensor_arg(t, "detach")); });
}
const char* grad_fn_name(const nnp_tensor* t) { return t ? autograd::grad_fn_name(*t) : ""; }
nnp_status backward(const nnp_tensor* t, const nnp_tensor* grad, int32_t retain_graph) {
  return guard([&] {
    std::vector<TensorRef> roots{TensorRef::share(&tensor_arg(t, "backward"))};
    std::vector<TensorRef> grads{grad ? TensorRef::share(grad) : TensorRef()};
    autograd::backward(roots, std::move(grads), retain_graph != 0);
  });
}
int32_t set_grad_enabled(int32_t enabled) {
  bool previous = autograd::grad_enabled();
  autograd::set_grad_enabled(enabled != 0);
  return previous ? 1 : 0;
}
int32_t is_grad_enabled() { return autograd::grad_enabled() ? 1 : 0; }
nnp_status register_tensor_hook(nnp_tensor* t, nnp_tensor_hook_fn fn, void* user_data, void (*release_fn)(void*),
                                nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, "register_tensor_hook");
    handle =
        autograd::register_hook(in_arg(t, "register_tensor_hook", "t"), in_arg(fn, "register_tensor_hook", "fn"), data);
  });
}
nnp_status register_post_accumulate_grad_hook(nnp_tensor* t, nnp_post_accumulate_grad_hook_fn fn, void* user_data,
                                              void (*release_fn)(void*), nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  const char* op = "register_post_accumulate_grad_hook";
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, op);
    handle = autograd::register_post_accumulate_grad_hook(in_arg(t, op, "t"), in_arg(fn, op, "fn"), data);
  });
}
nnp_status autograd_queue_callback(nnp_autograd_callback_fn fn, void* user_data, void (*release_fn)(void*)) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_autograd_callback_fn callback = in_arg(fn, "autograd_queue_callback", "fn");
    autograd::queue_callback([callback, data] {
      const nnp_status status = callback(data.get());
      if (status != NNP_OK) check_plugin_status(status, "autograd callback", "queued autograd callback");
    });
  });
}
void hook_remove(nnp_hook_handle* handle) {
  if (handle) handle->remove();
}
void hook_release(nnp_hook_handle* handle) {
  if (handle) release(handle);
}
nnp_status function_apply(const nnp_function* fn, void* user_data, const nnp_tensor* const* inputs, int32_t n_inputs,
                          nnp_tensor** outputs, int32_t n_outputs) {
  return guard([&] {
    out_arg(outputs, "function_apply", "outputs");
    for (int32_t i = 0; i < n_outputs; ++i) outputs[i] = nullptr;
    std::vector<TensorRef> results =
        autograd::apply_function(in_arg(fn, "function_apply", "fn"), user_data, inputs, n_inputs, n_outputs);
    for (int32_t i = 0; i < n_outputs; ++i) outputs[i] = results[static_cast<size_t>(i)].take();
  });
}
nnp_status function_save(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count) {
  return guard([&] { autograd::save_for_backward(ctx, tensors, count); });
}
int32_t function_saved_count(const nnp_function_ctx* ctx) { return autograd::saved_count(ctx); }
nnp_status function_saved(const nnp_function_ctx* ctx, int32_t i, nnp_tensor** out) {
  return handle_out(out, "function_saved", [&] { return autograd::saved(ctx, i); });
}

nnp_status checkpoint(CallerFn fn, void* user, void (*release_user)(void*), const nnp_tensor* const* inputs,
                      int32_t n_inputs, int32_t preserve_rng_state, nnp_tensor** outputs, int32_t capacity,
                      int32_t* n_outputs) {
  const char* op = "checkpoint";
  std::shared_ptr<void> owned = owned_user_data(user, release_user);  // released whatever happens, once
  return guard([&] {
    int32_t& count = out_arg(n_outputs, op, "n_outputs");
    count = 0;
    in_arg(fn, op, "fn");
    if (n_inputs < 0 || n_inputs > 4096) fail(NNP_INVALID_ARGUMENT, op, ": n_inputs is ", n_inputs, " (0 to 4096)");
    if (n_inputs > 0) in_arg(inputs, op, "inputs");
    if (capacity > 0) in_arg(outputs, op, "outputs");
    std::vector<TensorRef> in;
    for (int32_t i = 0; i < n_inputs; ++i) in.push_back(TensorRef::share(&tensor_arg(inputs[i], op, "inputs")));
    std::vector<TensorRef> results =
        autograd::checkpoint(caller_function(fn, std::move(owned), "checkpoint"), in, preserve_rng_state != 0);
    if (results.size() > static_cast<size_t>(capacity < 0 ? 0 : capacity))
      fail(NNP_INVALID_ARGUMENT, op, ": the function gave ", results.size(), " results; outputs has room for ",
           capacity);
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = results[i].take();
    count = static_cast<int32_t>(results.size());
  });
}

}  // namespace nnp::core::api
