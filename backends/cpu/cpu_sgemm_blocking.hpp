// The cache blocking of the backend's own f32 GEMM, written once for every
// instruction set (cpu_sgemm_avx2.cpp, cpu_sgemm_avx512.cpp). The loops are
// BLIS's: for each block of columns (Isa::kNc) and of k (Isa::kKc), op(b) is
// packed into panels of Isa::kNr columns, k-major; for each block of rows
// (Isa::kMc) op(a) is packed into panels of Isa::kMr rows, k-major; the
// micro-kernel then keeps a kMr x kNr block of c in registers while it runs
// down k. Panels are zero-padded at the edges, so the kernel always reads
// whole panels and only its stores look at the edge.
//
// The operands may also be bf16 (their bits, uint16_t): the packers widen
// them to f32 as they copy, so a bf16 product costs what an f32 one does
// plus half the reads, not a converted copy of each operand beforehand. A
// bf16 c is rounded to nearest even as the kernel stores it, from f32 sums
// kept in registers (one block of k) or in f32 scratch (several).
//
// This file holds no SIMD code: the Isa's functions carry their own target
// attributes, so the loops here compile for baseline x86-64 and run only
// after cpu_sgemm.cpp has checked the CPU.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cpu_sgemm.hpp"

namespace nnp::cpu {

// This thread's packing buffer `slot` (0: a, 1: b, 2: the f32 sums of a
// bf16 c), 64-byte aligned, with at
// least `floats` floats and 64 more of slack (packers may write one vector
// past a panel's end). Grows and never shrinks, so steady-state calls do not
// allocate. Defined in cpu_sgemm.cpp.
float* sgemm_packing_buffer(int slot, int64_t floats);

// The block size that splits `total` into equal blocks of at most `most`,
// rounded up to a multiple of `unit`.
inline int64_t sgemm_even_block(int64_t total, int64_t most, int64_t unit) {
  const int64_t blocks = (total + most - 1) / most;
  return ((total + blocks - 1) / blocks + unit - 1) / unit * unit;
}

// c[m, n] (row-major, ldc) = op(a) @ op(b) + beta * c, as cblas_sgemm with
// CblasRowMajor and alpha 1; k >= 1. S, the operands' type: float, or
// uint16_t for bf16 bits. Where `rounded` is set, the product (beta must be
// 0) is rounded into rounded[m, n] (leading dimension ld_rounded) and c is
// scratch for the f32 sums between blocks of k (sgemm_bf16_sums_floats:
// none where k fits one block). Isa provides:
//   kMr, kNr, kMc, kKc, kNc      register block and cache blocks
//   pack_across(src, ld, lanes, kc, out, width)
//       out[k * width + w] = src[w * ld + k] for w < lanes, 0 up to width
//   pack_along(src, ld, lanes, kc, out, width)
//       out[k * width + w] = src[k * ld + w] for w < lanes, 0 up to width
//       (both for S = float and S = uint16_t)
//   kernel(kc, packed_a, packed_b, c, ldc, rows, cols, beta, bias, relu,
//          rounded, ld_rounded)
//       c[rows, cols] = panel_a @ panel_b + beta * c, then the epilogue;
//       beta 0 reads no c; stored rounded to bf16 into `rounded` instead of
//       into c where that is set
template <class Isa, typename S>
void sgemm_blocked(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const S* a, int64_t lda, const S* b,
                   int64_t ldb, float beta, float* c, int64_t ldc, const SgemmEpilogue& epilogue,
                   uint16_t* rounded = nullptr, int64_t ld_rounded = 0) {
  const int64_t kc_block = sgemm_even_block(k, Isa::kKc, 1);
  const int64_t mc_block = sgemm_even_block(m, Isa::kMc, Isa::kMr);
  const int64_t nc_block = sgemm_even_block(n, Isa::kNc, Isa::kNr);
  float* packed_a = sgemm_packing_buffer(0, mc_block * kc_block);
  float* packed_b = sgemm_packing_buffer(1, nc_block * kc_block);
  for (int64_t jc = 0; jc < n; jc += nc_block) {
    const int64_t nc = std::min(nc_block, n - jc);
    for (int64_t pc = 0; pc < k; pc += kc_block) {
      const int64_t kc = std::min(kc_block, k - pc);
      const float block_beta = pc == 0 ? beta : 1.0f;  // later blocks of k add to the first's
      const bool last = pc + kc == k;                  // the epilogue runs as the last block stores
      for (int64_t q = 0; q < nc; q += Isa::kNr) {
        const int64_t cols = std::min<int64_t>(Isa::kNr, nc - q);
        if (trans_b)
          Isa::pack_across(b + (jc + q) * ldb + pc, ldb, cols, kc, packed_b + q * kc, Isa::kNr);
        else
          Isa::pack_along(b + pc * ldb + jc + q, ldb, cols, kc, packed_b + q * kc, Isa::kNr);
      }
      for (int64_t ic = 0; ic < m; ic += mc_block) {
        const int64_t mc = std::min(mc_block, m - ic);
        for (int64_t p = 0; p < mc; p += Isa::kMr) {
          const int64_t rows = std::min<int64_t>(Isa::kMr, mc - p);
          if (trans_a)
            Isa::pack_along(a + pc * lda + ic + p, lda, rows, kc, packed_a + p * kc, Isa::kMr);
          else
            Isa::pack_across(a + (ic + p) * lda + pc, lda, rows, kc, packed_a + p * kc, Isa::kMr);
        }
        // A panel of b (kc x kNr) stays in L1 while the panels of a, from
        // L2, pass under it.
        for (int64_t jr = 0; jr < nc; jr += Isa::kNr)
          for (int64_t ir = 0; ir < mc; ir += Isa::kMr)
            Isa::kernel(kc, packed_a + ir * kc, packed_b + jr * kc, c + (ic + ir) * ldc + jc + jr, ldc,
                        static_cast<int>(std::min<int64_t>(Isa::kMr, mc - ir)),
                        static_cast<int>(std::min<int64_t>(Isa::kNr, nc - jr)), block_beta,
                        last && epilogue.bias ? epilogue.bias + jc + jr : nullptr, last && epilogue.relu,
                        last && rounded ? rounded + (ic + ir) * ld_rounded + jc + jr : nullptr, ld_rounded);
      }
    }
  }
}

// The f32 scratch sgemm_blocked needs for the sums of a bf16 c [m, n] (its
// leading dimension n): none where k fits one block.
template <class Isa>
int64_t sgemm_bf16_sums_floats(int64_t m, int64_t n, int64_t k) {
  return sgemm_even_block(k, Isa::kKc, 1) >= k ? 0 : m * n;
}

// The packed form of b [k, n] (b stored [n, k] when trans_b) that
// sgemm_blocked_packed reads: for each block of k (as sgemm_blocked cuts
// it), the panels of Isa::kNr columns of the whole n, k-major, zero-padded;
// made once where b is a weight. sgemm_packed_b_floats floats, 64 of them
// slack for the packers.
template <class Isa>
int64_t sgemm_packed_b_floats(int64_t k, int64_t n) {
  return k * ((n + Isa::kNr - 1) / Isa::kNr * Isa::kNr) + 64;
}

template <class Isa>
void sgemm_pack_b(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, float* out) {
  const int64_t kc_block = sgemm_even_block(k, Isa::kKc, 1), n_pad = (n + Isa::kNr - 1) / Isa::kNr * Isa::kNr;
  for (int64_t pc = 0; pc < k; pc += kc_block) {
    const int64_t kc = std::min(kc_block, k - pc);
    float* block = out + pc * n_pad;
    for (int64_t q = 0; q < n; q += Isa::kNr) {
      const int64_t cols = std::min<int64_t>(Isa::kNr, n - q);
      if (trans_b)
        Isa::pack_across(b + q * ldb + pc, ldb, cols, kc, block + q * kc, Isa::kNr);
      else
        Isa::pack_along(b + pc * ldb + q, ldb, cols, kc, block + q * kc, Isa::kNr);
    }
  }
}

}  // namespace nnp::cpu
