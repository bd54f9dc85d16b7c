// bf16 products on Intel AMX (AMX-BF16 tiles): one tdpbf16ps multiplies a
// 16 x 32 bf16 tile by a 32 x 16 one into 16 x 16 f32 sums, 8192
// multiply-adds, about sixteen times what AVX-512's FMAs do in the same
// time. Where the CPU (or the kernel: Linux asks each process to request
// the tile state) has no AMX, cpu_gemm.cpp converts bf16 operands to f32.
//
// A block of 32 x 32 outputs is four tiles of sums (tmm0-3) over k, fed by
// two tiles of a's rows (tmm4-5) and two of b's columns (tmm6-7) per 32
// values of k. b is packed once per call in the pairs layout tdpbf16ps
// reads (for each pair of k, the 16 columns' two values side by side); a is
// read in place where its rows are contiguous and k is a multiple of 32,
// else packed a block of 32 rows at a time. Sums are rounded once to bf16
// as they are stored (round to nearest even; the tiles treat denormal
// inputs as zero, as oneDNN's bf16 GEMMs do).
#include "cpu_amx_gemm.hpp"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "thread_pool.hpp"

// GCC 12's AVX-512 widening, shifts and shuffles start from
// _mm512_undefined_epi32(), which its -Wuninitialized and
// -Wmaybe-uninitialized report (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace nnp::cpu {
namespace {

constexpr int64_t kBlock = 32;  // rows and columns of outputs a block computes
constexpr int64_t kDepth = 32;  // values of k a tile covers
constexpr int64_t kSplitWork = int64_t{1} << 19;

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

struct alignas(64) TileConfig {
  uint8_t palette;
  uint8_t start_row;
  uint8_t reserved[14];
  uint16_t bytes_per_row[16];
  uint8_t rows[16];
};
static_assert(sizeof(TileConfig) == 64, "ldtilecfg reads 64 bytes");

// The OS must grant a process the tiles' state before it uses them (the
// kernel table says whether the CPU has them).
bool amx_usable() {
  constexpr long kRequestPermission = 0x1023, kTileData = 18;  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA
  return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
}

// 16 words, each r0[c] in its low half and r1[c] in its high half.
__attribute__((target("avx512f"))) void join_rows(const uint16_t* r0, const uint16_t* r1, uint32_t* out) {
  const __m512i low = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0)));
  const __m512i high = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1)));
  _mm512_storeu_si512(out, _mm512_or_si512(low, _mm512_slli_epi32(high, 16)));
}

// b [k, n] (strides rs, cs) as 32-bit words: block j of 16 columns, pair p
// (rows 2p, 2p + 1: low and high halves), column c at (j * pairs + p) * 16 + c.
void pack_b(const uint16_t* b, int64_t k, int64_t n, int64_t rs, int64_t cs, int64_t pairs, uint32_t* dst) {
  const int64_t blocks = round_up(n, kBlock) / 16;  // whole blocks of 32 columns: a half past n reads zeros
  std::memset(dst, 0, static_cast<size_t>(blocks * pairs * 16) * sizeof(uint32_t));
  if (cs == 1) {  // rows contiguous: each word joins two rows
    for (int64_t p = 0; 2 * p < k; ++p) {
      const uint16_t* r0 = b + 2 * p * rs;
      const uint16_t* r1 = 2 * p + 1 < k ? r0 + rs : nullptr;
      const int64_t whole = r1 ? n / 16 * 16 : 0;
      for (int64_t col = 0; col < whole; col += 16) join_rows(r0 + col, r1 + col, dst + ((col / 16) * pairs + p) * 16);
      for (int64_t col = whole; col < n; ++col) {
        const uint32_t hi = r1 ? r1[col] : 0u;
        dst[((col / 16) * pairs + p) * 16 + col % 16] = r0[col] | (hi << 16);
      }
    }
    return;
  }
  for (int64_t col = 0; col < n; ++col) {  // columns contiguous (a transposed weight), or any strides
    uint32_t* out = dst + (col / 16) * pairs * 16 + col % 16;
    const uint16_t* src = b + col * cs;
    for (int64_t p = 0; 2 * p < k; ++p) {
      const uint32_t hi = 2 * p + 1 < k ? src[(2 * p + 1) * rs] : 0u;
      out[p * 16] = src[2 * p * rs] | (hi << 16);
    }
  }
}

// 16 rows of a transposed view's 32 values of k, packed: src points at
// (row 0, k 0) of the view, k rows cs apart and the 16 rows side by side;
// row j of the result (dst + j * ld) takes its 32 values, as 16 words of
// pairs, from the 16 x 16 transpose of the joined pairs.
__attribute__((target("avx512f"))) void transpose_pairs(const uint16_t* src, int64_t cs, uint16_t* dst, int64_t ld) {
  __m512i r[16], t[16];
  for (int p = 0; p < 16; ++p) {  // word p of each row: values 2p and 2p + 1 of k
    const __m512i low = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * p * cs)));
    const __m512i high =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + (2 * p + 1) * cs)));
    r[p] = _mm512_or_si512(low, _mm512_slli_epi32(high, 16));  // r[p][j]: row j's word p
  }
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
    r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
    r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
    r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 16; i += 8)
    for (int j = 0; j < 4; ++j) {
      t[i + j] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {
    r[j] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_i32x4(t[j], t[j + 8], 0xdd);
  }
  for (int j = 0; j < 16; ++j) _mm512_storeu_si512(dst + j * ld, r[j]);  // row j: words 0-15
}

bool has_avx512() {
  static const bool yes = kernel_table().tier == Tier::avx512;
  return yes;
}

// Rows [first, first + 32) of a [m, k] as a row-major [32, depth] block
// (zeros past m and k).
void pack_a(const uint16_t* a, int64_t first, int64_t m, int64_t k, int64_t rs, int64_t cs, int64_t depth,
            uint16_t* dst) {
  std::memset(dst, 0, static_cast<size_t>(kBlock * depth) * sizeof(uint16_t));
  const int64_t rows = std::min(kBlock, m - first);
  if (cs == 1) {
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(dst + r * depth, a + (first + r) * rs, static_cast<size_t>(k) * sizeof(uint16_t));
    return;
  }
  int64_t done = 0;  // values of k already packed, for every row
  if (rs == 1 && rows == kBlock && has_avx512()) {
    // A transposed view (a weight gradient's x^T): pairs of its k rows
    // joined into 32-bit words, then 16 x 16 blocks of words transposed in
    // registers, so that each output row takes 16 words at once.
    for (; done + kDepth <= k; done += kDepth)
      for (int64_t half = 0; half < kBlock; half += 16)
        transpose_pairs(a + first + half + done * cs, cs, dst + half * depth + done, depth);
  }
  // What is left (or every value, without AVX-512): 32 values of k at a
  // time, so that the 32 source rows they lie on stay in L1 while each
  // output row takes its 32 in order.
  for (int64_t k0 = done; k0 < k; k0 += kDepth) {
    const int64_t k1 = std::min(k, k0 + kDepth);
    for (int64_t r = 0; r < rows; ++r) {
      const uint16_t* src = a + (first + r) * rs;
      uint16_t* out = dst + r * depth;
      for (int64_t kk = k0; kk < k1; ++kk) out[kk] = src[kk * cs];
    }
  }
}

uint16_t to_bf16(float f) {  // nnp_float_to_bf16: round to nearest even, NaN kept quiet
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// The 32 x 32 block of c at (row, col): a's rows from `rows` (leading
// dimension lda elements), b's packed blocks from `packed` (two blocks of
// 16 columns, each pairs * 16 words).
__attribute__((target("amx-tile,amx-bf16,avx512f,avx512bf16"))) void block(const uint16_t* rows, int64_t lda,
                                                                           const uint32_t* packed, int64_t pairs,
                                                                           int64_t depth, uint16_t* c, int64_t ldc,
                                                                           int64_t m_left, int64_t n_left) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const uint32_t* b0 = packed;
  const uint32_t* b1 = packed + pairs * 16;
  for (int64_t kk = 0; kk < depth; kk += kDepth) {
    _tile_loadd(4, rows + kk, lda * 2);
    _tile_loadd(5, rows + 16 * lda + kk, lda * 2);
    _tile_loadd(6, b0 + (kk / 2) * 16, 64);
    _tile_loadd(7, b1 + (kk / 2) * 16, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float sums[kBlock * kBlock];
  _tile_stored(0, sums, kBlock * 4);
  _tile_stored(1, sums + 16, kBlock * 4);
  _tile_stored(2, sums + 16 * kBlock, kBlock * 4);
  _tile_stored(3, sums + 16 * kBlock + 16, kBlock * 4);
  const int64_t rows_out = std::min(kBlock, m_left), cols_out = std::min(kBlock, n_left);
  for (int64_t r = 0; r < rows_out; ++r) {
    uint16_t* out = c + r * ldc;
    const float* s = sums + r * kBlock;
    if (cols_out == kBlock) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(s)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16), (__m256i)_mm512_cvtneps_pbh(_mm512_load_ps(s + 16)));
    } else {
      for (int64_t j = 0; j < cols_out; ++j) out[j] = to_bf16(s[j]);
    }
  }
}

TileConfig tile_config() {
  TileConfig config;
  std::memset(&config, 0, sizeof config);
  config.palette = 1;
  for (int i = 0; i < 8; ++i) {
    config.rows[i] = 16;
    config.bytes_per_row[i] = 64;
  }
  return config;
}
// Built once, in memory: GCC does not see that ldtilecfg reads its operand
// and drops stores to a local one, and a stray byte makes ldtilecfg fault.
const TileConfig kTileConfig = tile_config();

__attribute__((target("amx-tile"))) void load_config() { _tile_loadconfig(&kTileConfig); }

__attribute__((target("amx-tile"))) void release_tiles() { _tile_release(); }

std::vector<uint32_t>& scratch_b() {
  thread_local std::vector<uint32_t> buffer;  // only grows: no allocation in steady state
  return buffer;
}
std::vector<uint16_t>& scratch_a() {
  thread_local std::vector<uint16_t> buffer;
  return buffer;
}

}  // namespace

bool amx_gemm_available() {
  static const bool available =
      kernel_table().gemm_amx_bf16 && amx_usable();
  return available;
}

void amx_gemm(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t m, int64_t n, int64_t k, int64_t ars,
              int64_t acs, int64_t brs, int64_t bcs) {
  const int64_t depth = round_up(k, kDepth), pairs = depth / 2;
  const int64_t col_blocks = round_up(n, kBlock) / kBlock, row_blocks = round_up(m, kBlock) / kBlock;
  std::vector<uint32_t>& packed_b = scratch_b();
  packed_b.resize(static_cast<size_t>(col_blocks * 2 * pairs * 16));
  pack_b(b, k, n, brs, bcs, pairs, packed_b.data());
  const uint32_t* pb = packed_b.data();
  // a's rows are read where they lie when each is contiguous and whole tiles of k.
  const bool a_in_place = acs == 1 && k % kDepth == 0 && m % kBlock == 0;
  auto rows = [&](int64_t first_block, int64_t last_block) {
    load_config();
    std::vector<uint16_t>& packed_a = scratch_a();
    // Packed rows one cache line longer than k: rows 4 KB apart would share L1 sets.
    const int64_t packed_lda = depth + 32;
    if (!a_in_place) packed_a.resize(static_cast<size_t>(kBlock * packed_lda));
    for (int64_t i = first_block; i < last_block; ++i) {
      const int64_t first = i * kBlock;
      const uint16_t* block_rows = a + first * ars;
      int64_t lda = ars;
      if (!a_in_place) {
        pack_a(a, first, m, k, ars, acs, packed_lda, packed_a.data());
        block_rows = packed_a.data();
        lda = packed_lda;
      }
      for (int64_t j = 0; j < col_blocks; ++j)
        block(block_rows, lda, pb + j * 2 * pairs * 16, pairs, depth, c + first * n + j * kBlock, n, m - first,
              n - j * kBlock);
    }
    release_tiles();
  };
  const int threads = ThreadPool::instance().size();
  if (threads <= 1 || m * n * k < kSplitWork || row_blocks < 2) {
    rows(0, row_blocks);
    return;
  }
  const int64_t parts = std::min<int64_t>(row_blocks, threads);
  ThreadPool::instance().run(parts,
                             [&](int64_t part) { rows(row_blocks * part / parts, row_blocks * (part + 1) / parts); });
}

}  // namespace nnp::cpu
