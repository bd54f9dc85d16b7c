// Softmax of one contiguous f32 row in AVX2 (a polynomial exp over 8 lanes
// instead of libm's scalar expf, a third of attention's softmax time).
#pragma once

#include <cstdint>

namespace nnp::cpu {

// out[j] = exp(x[j] - max) / sum, or x[j] - max - log(sum) when log is set.
// Returns false, touching nothing, when the CPU has no AVX2 and FMA or the
// row holds a NaN or +inf or is all -inf: the caller's exact path then does
// it (and gives PyTorch's NaNs).
bool softmax_row_f32(const float* x, int64_t length, bool log, float* out);

}  // namespace nnp::cpu
