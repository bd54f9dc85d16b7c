// The CPU tier nnp_bench's kernels run at (bench_tier.cpp).
#pragma once

namespace nnp::bench {

// "avx512", "avx2" or "baseline": the widest the CPU has, capped by
// NNP_CPU_ISA as the cpu backend caps it.
const char* fma_tier();

}  // namespace nnp::bench
