// SGD's step in one backend kernel (nnp_kernels.sgd_step) where the
// parameter's backend offers one: a single pass over the parameter instead
// of four elementwise ops with a new tensor each. The result is the same:
// the kernel rounds as those ops do.
#include "fused_sgd.hpp"

#include "../op_checks.hpp"
#include "../ops.hpp"
#include "../dispatch/dispatcher.hpp"

namespace nnp::core::optim {
namespace {

// The backend has the kernel, and the parameter, its gradient and its
// buffer (if any) are views the kernel takes.
bool kernel_applies(const core::Tensor& p, const core::Tensor& g, const core::Tensor* buffer) {
  if (!p.backend().sgd_step()) return false;
  auto matches = [&](const core::Tensor& t) {
    return t.dtype == p.dtype && t.device.backend == p.device.backend && t.device.index == p.device.index &&
           t.shape == p.shape && t.is_contiguous();
  };
  return (p.dtype == NNP_F32 || p.dtype == NNP_F64) && matches(p) && matches(g) &&
         (buffer == nullptr || matches(*buffer));
}

// One step: param_out and buffer_out (null without momentum) may be param
// and buffer themselves (the in-place form).
struct SgdStepOp {
  const core::Tensor* in[3];  // param, grad, buffer (may be null)
  const nnp_sgd_params& params;
  const core::Tensor* param_out;
  const core::Tensor* buffer_out;
  const char* what;
  dispatch::OpId id() const { return dispatch::OpId::SGD_STEP; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  void compute() const {
    const core::Tensor& p = *in[0];
    nnp_view vp = kernel_view(p), vg = kernel_view(*in[1]), vo = kernel_view(*param_out), vb{}, vbo{};
    if (in[2]) vb = kernel_view(*in[2]);
    if (buffer_out) vbo = kernel_view(*buffer_out);
    run_kernel(p, what,
               p.backend().sgd_step()(&kernel_ctx(p), &params, &vp, &vg, in[2] ? &vb : nullptr, &vo,
                                      buffer_out ? &vbo : nullptr));
  }
};

}  // namespace

void fused_sgd(const nnp_sgd_params& params, const Tensor& p, const Tensor& g, const Tensor* buffer,
               TensorRef* param_out, TensorRef* buffer_out) {
  *param_out = TensorRef();
  if (!kernel_applies(p, g, buffer)) return;
  const bool momentum = params.momentum != 0;
  TensorRef new_param = make_tensor_like(p.shape, p.dtype, p);
  TensorRef new_buffer = momentum ? make_tensor_like(p.shape, p.dtype, p) : TensorRef();
  dispatch::dispatch(SgdStepOp{{&p, &g, buffer}, params, new_param.get(), new_buffer.get(), "sgd_step"},
                     dispatch::Face::PUBLIC);
  *param_out = std::move(new_param);
  if (momentum) *buffer_out = std::move(new_buffer);
}

bool sgd_in_place_applies(const nnp_sgd_params& params, const Tensor& p, const Tensor& g, const Tensor* buffer) {
  if ((p.backend().table().flags & NNP_BACKEND_SGD_IN_PLACE) == 0) return false;
  // With momentum, the first step creates the buffer: new memory.
  if ((params.momentum != 0) != (buffer != nullptr)) return false;
  // The kernel's outputs may be its inputs themselves but may overlap them
  // in no other way: a gradient or buffer that shares the parameter's
  // memory takes the new-memory path. (A parameter that shares its memory
  // with other views is written through it, as copy_ would.)
  const Storage* b = buffer ? buffer->storage : nullptr;
  if (g.storage == p.storage || b == p.storage || b == g.storage) return false;
  return kernel_applies(p, g, buffer);
}

void sgd_in_place(const nnp_sgd_params& params, Tensor& p, const Tensor& g, Tensor* buffer) {
  dispatch::dispatch(SgdStepOp{{&p, &g, buffer}, params, &p, buffer, "sgd_step (in place)"}, dispatch::Face::PUBLIC);
  // As any in-place write: a graph that saved the parameter before the
  // step refuses to use it in backward.
  p.storage->version.fetch_add(1, std::memory_order_relaxed);
  if (buffer) buffer->storage->version.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace nnp::core::optim
