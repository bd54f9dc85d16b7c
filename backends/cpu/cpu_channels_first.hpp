// Between nnp's channels-first [C][H][W] images and the channels-last
// layout the packed convolutions compute in (a vector of channels per
// pixel), and attention's keys into columns: 16 x 16 blocks transposed in
// registers, 16 values a load and a store, or 8 x 8 blocks with AVX2. For
// the AVX-512 and AVX2 paths only (the caller checks the CPU).
#pragma once

#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace nnp::cpu {

// r[p] lane c -> r[c] lane p.
__attribute__((target("avx512f"), always_inline)) inline void transpose_16x16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
    t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xDD);
    t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
    t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
    r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
    r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xDD);
    r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xDD);
  }
}

// out[c * out_stride + r] = src[r * src_stride + c] for r < rows, c < cols:
// 16 x 16 blocks, each row's values read once (masked at the right edge,
// so nothing past a row's cols is read) and each column written in order
// (masked at the bottom edge).
__attribute__((target("avx512f"))) inline void transpose_rows(const float* src, int64_t src_stride, int64_t rows,
                                                              int64_t cols, float* out, int64_t out_stride) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16) {
    const int64_t count = rows - r0 < 16 ? rows - r0 : 16;
    const __mmask16 store = static_cast<__mmask16>((1u << count) - 1);
    for (int64_t c0 = 0; c0 < cols; c0 += 16) {
      const int64_t last = cols - c0 < 16 ? cols - c0 : 16;
      const __mmask16 load = static_cast<__mmask16>((1u << last) - 1);
      __m512 r[16];
      for (int64_t i = 0; i < 16; ++i)
        r[i] = i < count ? _mm512_maskz_loadu_ps(load, src + (r0 + i) * src_stride + c0) : _mm512_setzero_ps();
      transpose_16x16(r);
      for (int64_t c = 0; c < last; ++c) _mm512_mask_storeu_ps(out + (c0 + c) * out_stride + r0, store, r[c]);
    }
  }
}

// transpose_rows with AVX2: 8 x 8 blocks transposed in registers, the
// edges one value at a time.
__attribute__((target("avx2"))) inline void transpose_rows_avx2(const float* src, int64_t src_stride, int64_t rows,
                                                                int64_t cols, float* out, int64_t out_stride) {
  const int64_t rows8 = rows - rows % 8, cols8 = cols - cols % 8;
  for (int64_t r0 = 0; r0 < rows8; r0 += 8) {
    for (int64_t c0 = 0; c0 < cols8; c0 += 8) {
      __m256 r[8], t[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + (r0 + i) * src_stride + c0);
      for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
      }
      for (int i = 0; i < 2; ++i) {
        r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
      }
      // r[i] holds columns i (low half) and 4 + i (high half) of rows 0-3, r[4 + i] of rows 4-7.
      for (int i = 0; i < 4; ++i) {
        _mm256_storeu_ps(out + (c0 + i) * out_stride + r0, _mm256_permute2f128_ps(r[i], r[4 + i], 0x20));
        _mm256_storeu_ps(out + (c0 + 4 + i) * out_stride + r0, _mm256_permute2f128_ps(r[i], r[4 + i], 0x31));
      }
    }
    for (int64_t c = cols8; c < cols; ++c)
      for (int64_t r = r0; r < r0 + 8; ++r) out[c * out_stride + r] = src[r * src_stride + c];
  }
  for (int64_t r = rows8; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * out_stride + r] = src[r * src_stride + c];
}

// y [pixels][padded] (padded >= channels) into out [channels][pixels].
__attribute__((target("avx512f"))) inline void to_channels_first(const float* y, int64_t pixels, int64_t padded,
                                                                 int64_t channels, float* out) {
  transpose_rows(y, padded, pixels, channels, out, pixels);
}

// `pixels` consecutive pixels of `channels` planes (`plane` floats apart,
// from src) into dst channels last: pixel p's channels at dst + p * stride,
// the first `padded` of them written (padded a multiple of 16; those past
// `channels` 0).
__attribute__((target("avx512f"))) inline void to_channels_last(const float* src, int64_t plane, int64_t pixels,
                                                                int64_t channels, int64_t padded, float* dst,
                                                                int64_t stride) {
  for (int64_t p0 = 0; p0 < pixels; p0 += 16) {
    const int64_t count = pixels - p0 < 16 ? pixels - p0 : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    for (int64_t c0 = 0; c0 < padded; c0 += 16) {
      __m512 r[16];
      for (int64_t c = 0; c < 16; ++c)
        r[c] = c0 + c < channels ? _mm512_maskz_loadu_ps(mask, src + (c0 + c) * plane + p0) : _mm512_setzero_ps();
      transpose_16x16(r);
      for (int64_t p = 0; p < count; ++p) _mm512_storeu_ps(dst + (p0 + p) * stride + c0, r[p]);
    }
  }
}

}  // namespace nnp::cpu

#endif
