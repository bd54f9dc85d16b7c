// torch.optim.SGD's step for one parameter in one pass (the optional
// sgd_step slot): the core's elementwise path reads and writes the
// parameter's size four times, with a new tensor each time. Built without
// fused multiply-adds (CMakeLists.txt) so each product and sum rounds as
// PyTorch's separate ops do.
#include <type_traits>

#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

// One loop per case, without branches inside, so it vectorizes. A product
// by 1 or -1 is exact, so dampening 0 and maximize need no case of their own.
// Outputs are either new memory or their inputs themselves (in place,
// NNP_BACKEND_SGD_IN_PLACE): element i is read before it is written and no
// other element is touched, so no iteration depends on another (ivdep)
// whichever it is.
template <typename T, bool kDecay, bool kMomentum, bool kBuffer, bool kNesterov>
void sgd_range(const nnp_sgd_params& p, const T* param, const T* grad, const T* buffer, T* param_out,
               T* buffer_out, int64_t begin, int64_t end) {
  const T lr = static_cast<T>(-p.lr), momentum = static_cast<T>(p.momentum), keep = static_cast<T>(1 - p.dampening),
          decay = static_cast<T>(p.weight_decay), sign = p.maximize ? T(-1) : T(1);
#pragma GCC ivdep
  for (int64_t i = begin; i < end; ++i) {
    T d = sign * grad[i];
    if constexpr (kDecay) d = d + decay * param[i];
    if constexpr (kMomentum) {
      T b = d;
      if constexpr (kBuffer) b = momentum * buffer[i] + keep * d;
      buffer_out[i] = b;
      d = kNesterov ? d + momentum * b : b;
    }
    param_out[i] = param[i] + lr * d;
  }
}

// The loop for p's case.
template <typename T>
void sgd_any(const nnp_sgd_params& p, const T* param, const T* grad, const T* buffer, T* param_out, T* buffer_out,
             int64_t begin, int64_t end) {
  auto with = [&](auto decay, auto momentum, auto has_buffer, auto nesterov) {
    sgd_range<T, decltype(decay)::value, decltype(momentum)::value, decltype(has_buffer)::value,
              decltype(nesterov)::value>(p, param, grad, buffer, param_out, buffer_out, begin, end);
  };
  using Yes = std::true_type;
  using No = std::false_type;
  auto momentum_cases = [&](auto decay) {
    if (buffer_out == nullptr) return with(decay, No{}, No{}, No{});
    if (buffer == nullptr) return p.nesterov ? with(decay, Yes{}, No{}, Yes{}) : with(decay, Yes{}, No{}, No{});
    return p.nesterov ? with(decay, Yes{}, Yes{}, Yes{}) : with(decay, Yes{}, Yes{}, No{});
  };
  if (p.weight_decay != 0)
    momentum_cases(Yes{});
  else
    momentum_cases(No{});
}

}  // namespace

nnp_status sgd_step(const nnp_kernel_ctx*, const nnp_sgd_params* p, const nnp_view* param, const nnp_view* grad,
                    const nnp_view* buffer, const nnp_view* param_out, const nnp_view* buffer_out) {
  const int64_t n = view_numel(*param);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    auto data = [](const nnp_view* v) { return v ? static_cast<T*>(v->data) : nullptr; };
    parallel_for(n, 4, [&](int64_t begin, int64_t end) {
      sgd_any<T>(*p, data(param), data(grad), data(buffer), data(param_out), data(buffer_out), begin, end);
    });
    return NNP_OK;
  };
  if (param->dtype == NNP_F32) return run(0.0f);
  if (param->dtype == NNP_F64) return run(0.0);
  return fail(NNP_DTYPE_MISMATCH, "sgd_step: the cpu backend steps f32 and f64 parameters");
}

}  // namespace nnp::cpu
