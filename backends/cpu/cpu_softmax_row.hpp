// Softmax of one contiguous f32 (or bf16) row in AVX2 (a polynomial exp
// over 8 lanes instead of libm's scalar expf, a third of attention's
// softmax time).
#pragma once

#include <cstdint>

namespace nnp::cpu {

// out[j] = exp(x[j] - max) / sum, or x[j] - max - log(sum) when log is set.
// Returns false, touching nothing, when the CPU has no AVX2 and FMA or the
// row holds a NaN or +inf or is all -inf: the caller's exact path then does
// it (and gives PyTorch's NaNs).
bool softmax_row_f32(const float* x, int64_t length, bool log, float* out);

// The same for a row of bf16 (bits) into bf16: widened as it is read, the
// exps kept in `scratch` (length floats), each result rounded once to
// nearest even; the same bits as widening the row, softmax_row_f32 and
// rounding its result. Returns false where softmax_row_f32 would, out
// untouched.
bool softmax_row_bf16(const uint16_t* x, int64_t length, bool log, uint16_t* out, float* scratch);

}  // namespace nnp::cpu
