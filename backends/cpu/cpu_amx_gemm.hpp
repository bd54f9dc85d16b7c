// bf16 products on Intel AMX tiles (cpu_amx_gemm.cpp).
#pragma once

#include <cstdint>

namespace nnp::cpu {

// The CPU has AMX-BF16 and AVX512_BF16, and the kernel gave this process
// the tile state.
bool amx_gemm_available();
// c [m, n] (contiguous) = a [m, k] @ b [k, n], a and b by element strides,
// bf16 bits in and out, f32 sums; k >= 1. Splits over the pool when large.
void amx_gemm(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t m, int64_t n, int64_t k, int64_t ars,
              int64_t acs, int64_t brs, int64_t bcs);

}  // namespace nnp::cpu
