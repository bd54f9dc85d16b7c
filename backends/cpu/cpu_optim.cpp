// torch.optim.SGD's step for one parameter in one pass (the optional
// sgd_step slot): the core's elementwise path reads and writes the
// parameter's size four times, with a new tensor each time. Built without
// fused multiply-adds (CMakeLists.txt) so each product and sum rounds as
// PyTorch's separate ops do.
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

template <typename T>
void sgd_range(const nnp_sgd_params& p, const T* param, const T* grad, const T* buffer, T* param_out, T* buffer_out,
               int64_t begin, int64_t end) {
  const T lr = static_cast<T>(-p.lr), momentum = static_cast<T>(p.momentum), keep = static_cast<T>(1 - p.dampening),
          decay = static_cast<T>(p.weight_decay);
  const bool maximize = p.maximize != 0, nesterov = p.nesterov != 0, decays = p.weight_decay != 0,
             dampens = p.dampening != 0;
  for (int64_t i = begin; i < end; ++i) {
    T d = maximize ? -grad[i] : grad[i];
    if (decays) d = d + decay * param[i];
    if (buffer_out) {
      const T b = buffer ? momentum * buffer[i] + (dampens ? keep * d : d) : d;
      buffer_out[i] = b;
      d = nesterov ? d + momentum * b : b;
    }
    param_out[i] = param[i] + lr * d;
  }
}

}  // namespace

nnp_status sgd_step(const nnp_kernel_ctx*, const nnp_sgd_params* p, const nnp_view* param, const nnp_view* grad,
                    const nnp_view* buffer, const nnp_view* param_out, const nnp_view* buffer_out) {
  const int64_t n = view_numel(*param);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    auto data = [](const nnp_view* v) { return v ? static_cast<T*>(v->data) : nullptr; };
    parallel_for(n, 4, [&](int64_t begin, int64_t end) {
      sgd_range<T>(*p, data(param), data(grad), data(buffer), data(param_out), data(buffer_out), begin, end);
    });
    return NNP_OK;
  };
  if (param->dtype == NNP_F32) return run(0.0f);
  if (param->dtype == NNP_F64) return run(0.0);
  return fail(NNP_DTYPE_MISMATCH, "sgd_step: the cpu backend steps f32 and f64 parameters");
}

}  // namespace nnp::cpu
