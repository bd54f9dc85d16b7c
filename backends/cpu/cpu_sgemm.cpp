// Which f32 GEMM the cpu backend runs (its own kernels or OpenBLAS), and
// the per-thread packing buffers its own kernels share.
#include "cpu_sgemm.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "cpu_sgemm_blocking.hpp"

namespace nnp::cpu {
namespace {

// Below these, packing costs more than it saves, or the register block runs
// mostly empty, and OpenBLAS takes the product (measured on AVX2: a [1, 784]
// row against [784, 512] ran 1.1-4 times slower, 10 rows or columns up to
// 2.5 times; depth 10 with 128 rows and 512 columns 2.6 times faster).
constexpr int64_t kMinRows = 24, kMinColumns = 32, kMinDepth = 8;
constexpr int64_t kMinWork = int64_t{1} << 18;

// Whether NNP_CPU_SGEMM is set to `value`.
bool asked_for(const char* value) {
  const char* env = std::getenv("NNP_CPU_SGEMM");
  return env != nullptr && std::strcmp(env, value) == 0;
}

SgemmKernel choose_kernel() {
  switch (kernel_table().gemm) {
    case Tier::avx512: return SgemmKernel::avx512;
    case Tier::avx2: return SgemmKernel::avx2;
    default: return SgemmKernel::openblas;
  }
}

}  // namespace

SgemmKernel own_sgemm_kernel() {
  static const SgemmKernel kernel = choose_kernel();
  return kernel;
}

const char* own_sgemm_kernel_name(SgemmKernel kernel) {
  switch (kernel) {
    case SgemmKernel::avx2: return "avx2";
    case SgemmKernel::avx512: return "avx512";
    case SgemmKernel::openblas: break;
  }
  return "openblas";
}

namespace {

// The kernels OpenBLAS chose for this CPU as it loaded ("SkylakeX"), or ""
// where the BLAS is not OpenBLAS. Looked up rather than linked, as
// set_blas_threads does.
std::string openblas_kernels() {
  using CoreName = char* (*)();
  auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = core_name ? core_name() : nullptr;
  return name ? name : "";
}

}  // namespace

const char* sgemm_engine() {
  static const std::string text = [] {
    const std::string kernels = openblas_kernels();
    const std::string blas = kernels.empty() ? "OpenBLAS" : "OpenBLAS (its " + kernels + " kernels)";
    switch (own_sgemm_kernel()) {
      case SgemmKernel::avx512: return "its AVX-512 kernels and " + blas;
      case SgemmKernel::avx2: return "its AVX2 kernels and " + blas;
      case SgemmKernel::openblas: break;
    }
    return blas + (asked_for("openblas") ? " (NNP_CPU_SGEMM=openblas)" : " (the processor has no AVX2 + FMA)");
  }();
  return text.c_str();
}

bool own_sgemm_pays(int64_t m, int64_t n, int64_t k) {
  return own_sgemm_kernel() != SgemmKernel::openblas && m >= kMinRows && n >= kMinColumns && k >= kMinDepth &&
         m * n * k >= kMinWork;
}

bool own_sgemm_bf16_pays(int64_t m, int64_t n, int64_t k) {
  return own_sgemm_kernel() != SgemmKernel::openblas && m >= kMinRows && n >= kMinColumns && k >= kMinDepth;
}

void own_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue) {
  if (own_sgemm_kernel() == SgemmKernel::avx512)
    sgemm_avx512(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, epilogue);
  else
    sgemm_avx2(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc, epilogue);
}

void own_sgemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                    const uint16_t* b, int64_t ldb, uint16_t* c, int64_t ldc) {
  if (own_sgemm_kernel() == SgemmKernel::avx512)
    sgemm_bf16_avx512(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
  else
    sgemm_bf16_avx2(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
}

float* sgemm_packing_buffer(int slot, int64_t floats) {
  thread_local std::vector<float> buffers[3];
  std::vector<float>& buffer = buffers[slot];
  const auto wanted = static_cast<size_t>(floats + 64 + 16);  // slack, then room to align to 64 bytes
  if (buffer.size() < wanted) buffer.resize(wanted);
  return reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) & ~uintptr_t{63});
}

}  // namespace nnp::cpu
