// Philox draws on the CPU: element i depends only on its counter, so the
// thread split does not change the numbers (nnp/philox.h).
#include <nnp/philox.h>

#include <algorithm>

#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

// Words 0 and 1 (all a uniform draw uses) for counters first .. first+n-1:
// a straight loop over independent counters, which the compiler vectorises
// where the CPU has AVX2 (four 32x32->64 products per instruction).
__attribute__((target_clones("avx2", "default"))) void uniform_words(uint64_t first, int64_t n, uint64_t seed,
                                                                     uint32_t* w0, uint32_t* w1) {
  for (int64_t i = 0; i < n; ++i) {
    const nnp_philox_words r = nnp_philox4x32_10(first + static_cast<uint64_t>(i), seed);
    w0[i] = r.w[0];
    w1[i] = r.w[1];
  }
}

template <typename T>
void uniform_range(T* data, int64_t begin, int64_t end, uint64_t seed, uint64_t offset, double a, double b) {
  constexpr int64_t kBlock = 256;
  uint32_t w0[kBlock], w1[kBlock];
  for (int64_t first = begin; first < end; first += kBlock) {
    const int64_t n = std::min(kBlock, end - first);
    uniform_words(offset + static_cast<uint64_t>(first), n, seed, w0, w1);
    for (int64_t j = 0; j < n; ++j) {
      nnp_philox_words r{};
      r.w[0] = w0[j];
      r.w[1] = w1[j];
      data[first + j] =
          convert<T>(NNP_PHILOX_ADD(a, NNP_PHILOX_MUL(b - a, nnp_philox_uniform(r))));  // as nnp_philox_value
    }
  }
}

}  // namespace

nnp_status random(const nnp_kernel_ctx*, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                  const nnp_view* out) {
  dispatch(out->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = static_cast<T*>(out->data);
    parallel_for(view_numel(*out), 16, [&](int64_t begin, int64_t end) {
      if (kind == NNP_RANDOM_UNIFORM) return uniform_range(data, begin, end, seed, offset, a, b);
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
