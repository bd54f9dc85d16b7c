// What the plugins' own native dependencies read from the environment as
// they load, set before the first plugin loads.
#pragma once

namespace nnp::core {

// OpenBLAS (the cpu backend's BLAS) picks its kernels for the CPU once, as
// it loads, and Debian 12's 0.3.21 takes a processor newer than it knows
// (Sapphire Rapids, Emerald Rapids) for a Prescott: its SSE3 kernels, five
// to seven times slower than its AVX-512 ones on the same products. Where
// OPENBLAS_CORETYPE is unset and the processor (and the system) has what
// OpenBLAS's SkylakeX kernels use (AVX-512 F, CD, BW, DQ and VL), it is set
// to SkylakeX; a value already set is kept. Once per process; a no-op
// elsewhere, and without effect where the application loaded OpenBLAS first.
void prepare_native_libraries();

}  // namespace nnp::core
