#include "native_libraries.hpp"

#include <cstdlib>
#include <mutex>

namespace nnp::core {

void prepare_native_libraries() {
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
    __builtin_cpu_init();
    // __builtin_cpu_supports also checks that the system saves the AVX-512
    // registers (XCR0), which OpenBLAS's own detection checks before it.
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
#endif
  });
}

}  // namespace nnp::core
