// SGD's step in one backend kernel (nnp_kernels.sgd_step) where the
// parameter's backend offers one: a single pass over the parameter instead
// of four elementwise ops with a new tensor each. The result is the same:
// the kernel rounds as those ops do.
#include "fused_sgd.hpp"

#include "../op_checks.hpp"
#include "../ops.hpp"
#include "../profiler/profiler.hpp"

namespace nnp::core::optim {
namespace {

// The backend has the kernel, and the parameter, its gradient and its
// buffer (if any) are views the kernel takes.
bool kernel_applies(const core::Tensor& p, const core::Tensor& g, const Tensor* buffer) {
  const nnp_kernels& kernels = p.backend().kernels();
  if (kernels.struct_size < NNP_KERNELS_SIZE_1_12 || kernels.sgd_step == nullptr) return false;
  auto matches = [&](const core::Tensor& t) {
    return t.dtype == p.dtype && t.device.backend == p.device.backend && t.device.index == p.device.index &&
           t.shape == p.shape && t.is_contiguous();
  };
  return (p.dtype == NNP_F32 || p.dtype == NNP_F64) && matches(p) && matches(g) &&
         (buffer == nullptr || matches(*buffer->get()));
}

nnp_sgd_params sgd_params(const std::map<std::string, double>& o) {
  nnp_sgd_params params{};
  params.struct_size = sizeof params;
  params.lr = o.at("lr");
  params.momentum = o.at("momentum");
  params.dampening = o.at("dampening");
  params.weight_decay = o.at("weight_decay");
  params.nesterov = o.at("nesterov") != 0;
  params.maximize = o.at("maximize") != 0;
  return params;
}

}  // namespace

bool fused_sgd(const std::map<std::string, double>& o, const Tensor& param, const Tensor& grad, const Tensor* buffer,
               Tensor* param_out, Tensor* buffer_out) {
  const core::Tensor& p = *param.get();
  const core::Tensor& g = *grad.get();
  if (!kernel_applies(p, g, buffer)) return false;
  const nnp_kernels& kernels = p.backend().kernels();
  const bool momentum = o.at("momentum") != 0;
  profiler::OpScope profile("sgd_step", {&p, &g});
  const nnp_sgd_params params = sgd_params(o);
  TensorRef new_param = make_tensor_like(p.shape, p.dtype, p);
  TensorRef new_buffer = momentum ? make_tensor_like(p.shape, p.dtype, p) : TensorRef();
  nnp_view vp = kernel_view(p), vg = kernel_view(g), vo = kernel_view(*new_param), vb{}, vbo{};
  if (buffer) vb = kernel_view(*buffer->get());
  if (momentum) vbo = kernel_view(*new_buffer);
  run_kernel(
      p, "sgd_step",
      kernels.sgd_step(&kernel_ctx(p), &params, &vp, &vg, buffer ? &vb : nullptr, &vo, momentum ? &vbo : nullptr));
  *param_out = Tensor::adopt(new_param.take());
  if (momentum) *buffer_out = Tensor::adopt(new_buffer.take());
  return true;
}

bool sgd_in_place_applies(const std::map<std::string, double>& o, const Tensor& param, const Tensor& grad,
                          const Tensor* buffer) {
  const core::Tensor& p = *param.get();
  if ((p.backend().table().flags & NNP_BACKEND_SGD_IN_PLACE) == 0) return false;
  // With momentum, the first step creates the buffer: new memory.
  if ((o.at("momentum") != 0) != (buffer != nullptr)) return false;
  // The kernel's outputs may be its inputs themselves but may overlap them
  // in no other way: a gradient or buffer that shares the parameter's
  // memory takes the new-memory path. (A parameter that shares its memory
  // with other views is written through it, as copy_ would.)
  const core::Tensor& g = *grad.get();
  const Storage* b = buffer ? buffer->get()->storage : nullptr;
  if (g.storage == p.storage || b == p.storage || b == g.storage) return false;
  return kernel_applies(p, g, buffer);
}

void sgd_in_place(const std::map<std::string, double>& o, Tensor& param, const Tensor& grad, Tensor* buffer) {
  core::Tensor& p = *param.get();
  const core::Tensor& g = *grad.get();
  profiler::OpScope profile("sgd_step", {&p, &g});
  const nnp_sgd_params params = sgd_params(o);
  nnp_view vp = kernel_view(p), vg = kernel_view(g), vb{};
  if (buffer) vb = kernel_view(*buffer->get());
  const nnp_kernels& kernels = p.backend().kernels();
  run_kernel(p, "sgd_step (in place)",
             kernels.sgd_step(&kernel_ctx(p), &params, &vp, &vg, buffer ? &vb : nullptr, &vp, buffer ? &vb : nullptr));
  // As any in-place write: a graph that saved the parameter before the
  // step refuses to use it in backward.
  p.storage->version.fetch_add(1, std::memory_order_relaxed);
  if (buffer) buffer->get()->storage->version.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace nnp::core::optim
