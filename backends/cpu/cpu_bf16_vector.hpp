// Contiguous bf16 runs in SIMD (cpu_bf16_vector.cpp, on cpu_bf16_simd.hpp):
// the casts and arithmetic autocast makes, 16 lanes a step. The loops of
// cpu_elementwise.cpp, compiled for the baseline x86-64, convert bf16 one
// element at a time. AVX-512 where cpu_isa() has it, else AVX2 (two halves
// of eight); each returns false, touching nothing, where the CPU has
// neither (the caller's loop then runs). Bits equal the scalar
// Traits<BFloat16>: round to nearest even, NaN kept quiet.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>

namespace nnp::cpu {

bool f32_to_bf16_run(const float* in, uint16_t* out, int64_t n);
bool bf16_to_f32_run(const uint16_t* in, float* out, int64_t n);
// out[i] = in[i] < 0 ? 0 : in[i] (a NaN stays NaN).
bool bf16_relu_run(const uint16_t* in, uint16_t* out, int64_t n);
// out[i] = a[i] op b[i] (b_step 1) or a[i] op b[0] (b_step 0), in f32, for
// ADD, SUB, MUL and DIV; false for other ops.
bool bf16_arithmetic_run(nnp_binary_op op, const uint16_t* a, const uint16_t* b, int64_t b_step, uint16_t* out,
                         int64_t n);

}  // namespace nnp::cpu
