// The cpu backend's own single-threaded f32 GEMM: operands packed into
// cache-sized panels and a register-blocked micro-kernel per instruction
// set (AVX2 + FMA: 6 x 16; AVX-512: 12 x 32, and 6 x 64 over a right
// operand packed once, a read unpacked). It takes the products that are
// large in every dimension, where it runs ahead of OpenBLAS's sgemm (README,
// "Speed"); OpenBLAS keeps the thin and the small ones, f64, and every
// product on a CPU without AVX2.
#pragma once

#include <cstdint>

namespace nnp::cpu {

// Which of the backend's kernels own_sgemm runs on this machine. The
// choice is made once per process, from the CPU and NNP_CPU_SGEMM
// ("openblas" turns the backend's own kernels off, "avx2" keeps to AVX2 on
// an AVX-512 machine; anything else is the default, the widest the CPU has).
enum class SgemmKernel { openblas, avx2, avx512 };
SgemmKernel own_sgemm_kernel();
const char* own_sgemm_kernel_name(SgemmKernel kernel);
// What multiplies f32 matrices here, for `nnplug devices`: "its AVX2
// kernels and OpenBLAS", or "OpenBLAS" with the reason.
const char* sgemm_engine();

// Whether own_sgemm should take this product: a kernel was chosen and the
// product is large enough in every dimension for packing to pay.
bool own_sgemm_pays(int64_t m, int64_t n, int64_t k);
// The same for bf16 operands (own_sgemm_bf16), which pays at any amount of
// work past the least rows, columns and depth: the alternative converts a,
// b and c to f32 and back around OpenBLAS (attention's per-head products
// in W7, 64 x 64 x 32, ran 1.35 times faster here).
bool own_sgemm_bf16_pays(int64_t m, int64_t n, int64_t k);

// What the last pass over each block of c adds as it stores it (the
// gemm_epilogue kernel): bias[j] to column j (NULL: nothing), then the ReLU
// (a NaN stays NaN).
struct SgemmEpilogue {
  const float* bias = nullptr;
  bool relu = false;
};

// c[m, n] (row-major, leading dimension ldc) = op(a) @ op(b) + beta * c, as
// cblas_sgemm with CblasRowMajor and alpha 1: op(a) is a[m, k] (lda), or a
// stored as [k, m] when trans_a; op(b) likewise. With beta 0, c is not read
// (it may hold NaN). Runs on the calling thread; m, n, k >= 1. Only call it
// where own_sgemm_pays() said so.
void own_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue = {});

// The same product of bf16 operands (their bits) into a bf16 c, beta 0:
// each operand widened to f32 as it is packed, the sums kept in f32 and
// rounded to nearest even once, as a block of c is finished. Only call it
// where own_sgemm_kernel() is not openblas; any m, n, k >= 1.
void own_sgemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                    const uint16_t* b, int64_t ldb, uint16_t* c, int64_t ldc);

// The kernels themselves, for own_sgemm and for tests/unit/cpu_sgemm_test.cpp,
// which checks each one the CPU has against a double-precision loop.
void sgemm_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue);
void sgemm_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue);
void sgemm_bf16_avx2(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                     const uint16_t* b, int64_t ldb, uint16_t* c, int64_t ldc);
void sgemm_bf16_avx512(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t lda,
                       const uint16_t* b, int64_t ldb, uint16_t* c, int64_t ldc);

// A right operand packed once (the gemm_pack kernel, AVX-512 only): its
// size in floats, the columns of a panel (the splits between threads fall
// on them), the packing (b [k, n] with leading dimension ldb, or stored
// [n, k] when trans_b), and c[m, first .. last) = a @ b with the epilogue,
// on the calling thread (first a multiple of the panel's columns).
int64_t sgemm_avx512_packed_b_floats(int64_t k, int64_t n);
int64_t sgemm_avx512_panel_columns();
void sgemm_avx512_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, float* out);
void sgemm_avx512_packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* packed_b,
                         int64_t first, int64_t last, float* c, int64_t ldc, const SgemmEpilogue& epilogue);

}  // namespace nnp::cpu
