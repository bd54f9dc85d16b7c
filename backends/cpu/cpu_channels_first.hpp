// A convolution's output, made channels last (a vector of channels per
// pixel, as the packed kernels compute it), written channels first as
// nnp's [C][H][W] tensors hold it: 16 x 16 blocks transposed in registers,
// each channel's 16 pixels one store. For the AVX-512 paths only (the
// caller checks the CPU).
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

// y [pixels][padded] (padded a multiple of 16, >= channels) into out
// [channels][pixels]. Every write lands in order within each channel's plane.
__attribute__((target("avx512f"))) inline void to_channels_first(const float* y, int64_t pixels, int64_t padded,
                                                                 int64_t channels, float* out) {
  for (int64_t p0 = 0; p0 < pixels; p0 += 16) {
    const int64_t count = pixels - p0 < 16 ? pixels - p0 : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    for (int64_t c0 = 0; c0 < channels; c0 += 16) {
      __m512 r[16];
      for (int64_t p = 0; p < 16; ++p)
        r[p] = p < count ? _mm512_loadu_ps(y + (p0 + p) * padded + c0) : _mm512_setzero_ps();
      transpose_16x16(r);
      const int64_t last = channels - c0 < 16 ? channels - c0 : 16;
      for (int64_t c = 0; c < last; ++c) _mm512_mask_storeu_ps(out + (c0 + c) * pixels + p0, mask, r[c]);
    }
  }
}

}  // namespace nnp::cpu

#endif
