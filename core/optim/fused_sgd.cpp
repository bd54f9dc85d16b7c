// SGD's step in one backend kernel (nnp_kernels.sgd_step) where the
// parameter's backend offers one: a single pass over the parameter instead
// of four elementwise ops with a new tensor each. The result is the same:
// the kernel rounds as those ops do.
#include "fused_sgd.hpp"

#include "../op_checks.hpp"
#include "../ops.hpp"
#include "../profiler/profiler.hpp"

namespace nnp::core::optim {

bool fused_sgd(const std::map<std::string, double>& o, const Tensor& param, const Tensor& grad, const Tensor* buffer,
               Tensor* param_out, Tensor* buffer_out) {
  const core::Tensor& p = *param.get();
  const core::Tensor& g = *grad.get();
  const nnp_kernels& kernels = p.backend().kernels();
  if (kernels.struct_size < NNP_KERNELS_SIZE_1_12 || kernels.sgd_step == nullptr) return false;
  const bool momentum = o.at("momentum") != 0;
  auto matches = [&](const core::Tensor& t) {
    return t.dtype == p.dtype && t.device.backend == p.device.backend && t.device.index == p.device.index &&
           t.shape == p.shape && t.is_contiguous();
  };
  if ((p.dtype != NNP_F32 && p.dtype != NNP_F64) || !matches(p) || !matches(g) || (buffer && !matches(*buffer->get())))
    return false;
  profiler::OpScope profile("sgd_step", {&p, &g});
  nnp_sgd_params params{};
  params.struct_size = sizeof params;
  params.lr = o.at("lr");
  params.momentum = o.at("momentum");
  params.dampening = o.at("dampening");
  params.weight_decay = o.at("weight_decay");
  params.nesterov = o.at("nesterov") != 0;
  params.maximize = o.at("maximize") != 0;
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

}  // namespace nnp::core::optim
