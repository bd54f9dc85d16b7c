// Philox draws on the CPU: element i depends only on its counter, so the
// thread split does not change the numbers (nnp/philox.h).
#include <nnp/philox.h>

#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {

nnp_status random(const nnp_kernel_ctx*, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                  const nnp_view* out) {
  dispatch(out->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = static_cast<T*>(out->data);
    parallel_for(view_numel(*out), 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t counter = offset + static_cast<uint64_t>(i);
        if (kind == NNP_RANDOM_INT)
          data[i] = convert<T>(
              nnp_philox_int(nnp_philox4x32_10(counter, seed), static_cast<int64_t>(a), static_cast<int64_t>(b)));
        else
          data[i] = convert<T>(nnp_philox_value(kind, seed, counter, a, b));
      }
    });
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
