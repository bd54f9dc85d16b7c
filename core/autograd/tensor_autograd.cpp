#include "tensor_autograd.hpp"

#include "../capture/tape.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../ops.hpp"
#include "record.hpp"

namespace nnp::core::autograd {

void set_requires_grad(Tensor& t, bool value) {
  if (t.autograd && t.autograd->grad_fn)
    fail(NNP_INVALID_ARGUMENT, "requires_grad: only leaf tensors can change requires_grad; this one (shape ",
         format_dims(t.shape), ") was computed by ", t.autograd->grad_fn->name(), ". Use detach() to get a leaf");
  if (value && !is_floating(t.dtype))
    fail(NNP_DTYPE_MISMATCH, "requires_grad: only floating-point tensors can require gradients, not ",
         dtype_name(t.dtype));
  if (!value && !t.autograd) return;
  meta_of(t).requires_grad = value;
}

bool is_leaf(const Tensor& t) { return !t.autograd || !t.autograd->grad_fn; }

TensorRef grad(const Tensor& t) { return t.autograd ? t.autograd->grad : TensorRef(); }

void set_grad(Tensor& t, const Tensor* grad) {
  capture::note_replaced(t.autograd && t.autograd->grad ? t.autograd->grad->storage : nullptr);
  if (grad == nullptr) {
    if (t.autograd) t.autograd->grad = TensorRef();
    return;
  }
  if (grad->shape != t.shape)
    fail(NNP_SHAPE_MISMATCH, "set_grad: gradient shape ", format_dims(grad->shape), " does not match tensor shape ",
         format_dims(t.shape));
  if (grad->dtype != t.dtype)
    fail(NNP_DTYPE_MISMATCH, "set_grad: gradient dtype ", dtype_name(grad->dtype), " does not match tensor dtype ",
         dtype_name(t.dtype));
  if (grad->device.backend != t.device.backend || grad->device.index != t.device.index)
    fail(NNP_DEVICE_MISMATCH, "set_grad: the gradient is on another device than the tensor");
  meta_of(t).grad = TensorRef::share(grad);
}

void retain_grad(Tensor& t) {
  if (!requires_grad(t))
    fail(NNP_INVALID_ARGUMENT, "retain_grad: the tensor (shape ", format_dims(t.shape),
         ") does not require grad, so it will never have one");
  AutogradMeta& meta = *t.autograd;
  if (!meta.grad_fn || meta.retains_grad) return;  // leaves keep .grad anyway
  meta.retains_grad = true;
  meta.grad_fn->retained.emplace_back(meta.output_nr, t.autograd);
}

namespace {

struct DetachOp {
  const Tensor* in[1];
  dispatch::OpId id() const { return dispatch::OpId::DETACH; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return make_view(*in[0], in[0]->shape, in[0]->strides, in[0]->offset); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_copy(g, *in[0], *out); }
};

}  // namespace

TensorRef detach(const Tensor& t) { return dispatch::dispatch(DetachOp{{&t}}, dispatch::Face::PUBLIC); }

const char* grad_fn_name(const Tensor& t) {
  return t.autograd && t.autograd->grad_fn ? t.autograd->grad_fn->name() : "";
}

nnp_hook_handle* register_hook(Tensor& t, GradHook hook) {
  if (!requires_grad(t))
    fail(NNP_INVALID_ARGUMENT, "register_hook: the tensor (shape ", format_dims(t.shape),
         ") does not require grad, so no gradient will reach the hook");
  const uint64_t id = next_hook_id();
  AutogradMeta& meta = *t.autograd;
  if (meta.grad_fn) {
    std::weak_ptr<Node> node = meta.grad_fn;
    meta.grad_fn->tensor_hooks.emplace(id, std::make_pair(meta.output_nr, std::move(hook)));
    return make_hook_handle([node, id] {
      if (std::shared_ptr<Node> alive = node.lock()) alive->tensor_hooks.erase(id);
    });
  }
  std::weak_ptr<AutogradMeta> owner = t.autograd;
  meta.hooks.emplace(id, std::move(hook));
  return make_hook_handle([owner, id] {
    if (std::shared_ptr<AutogradMeta> alive = owner.lock()) alive->hooks.erase(id);
  });
}

nnp_hook_handle* register_hook(Tensor& t, nnp_tensor_hook_fn fn, std::shared_ptr<void> user_data) {
  return register_hook(t, [fn, user_data](const Tensor& grad) {
    nnp_tensor* replacement = nullptr;
    nnp_status status = fn(&grad, &replacement, user_data.get());
    TensorRef owned = TensorRef::adopt(replacement);
    if (status != NNP_OK) check_plugin_status(status, "tensor hook", "tensor hook");
    return owned;
  });
}

nnp_hook_handle* register_post_accumulate_grad_hook(Tensor& t, nnp_post_accumulate_grad_hook_fn fn,
                                                    std::shared_ptr<void> user_data) {
  if (!requires_grad(t))
    fail(NNP_INVALID_ARGUMENT, "register_post_accumulate_grad_hook: the tensor (shape ", format_dims(t.shape),
         ") does not require grad, so no gradient will be accumulated into it");
  if (t.autograd->grad_fn)
    fail(NNP_INVALID_ARGUMENT,
         "register_post_accumulate_grad_hook: post accumulate grad hooks cannot be registered "
         "on non-leaf tensors (this one was computed by ",
         t.autograd->grad_fn->name(), "); use register_tensor_hook for a non-leaf's gradient");
  const uint64_t id = next_hook_id();
  t.autograd->post_accumulate_hooks.emplace(id, [fn, user_data](Tensor& leaf) {
    const nnp_status status = fn(&leaf, user_data.get());
    if (status != NNP_OK) check_plugin_status(status, "post-accumulate-grad hook", "post-accumulate-grad hook");
  });
  std::weak_ptr<AutogradMeta> owner = t.autograd;
  return make_hook_handle([owner, id] {
    if (std::shared_ptr<AutogradMeta> alive = owner.lock()) alive->post_accumulate_hooks.erase(id);
  });
}

}  // namespace nnp::core::autograd
