// The int8 convolutions' shared machinery (cpu_quantized_conv.cpp: the
// static int8 layers; cpu_conv_integer.cpp: ONNX's ConvInteger): the packed
// weight's header and layouts, the image buffer a tile reads, and the tiles
// themselves: u8 x s8 quads with AVX512-VNNI's vpdpbusd, or int16 pairs with
// AVX2's vpmaddwd. Each kernel fills the buffer and turns the int32 sums
// into its outputs in its own way; the tiles only sum.
//
// A step of the reduction reads four bytes (a quad) or two int16 (a pair)
// side by side from the buffer, which has one of two layouts:
//  - channel groups ([H][W][C rounded up to the group]): the values of
//    neighbouring channels of one pixel, for layers over several channels;
//  - row groups ([C][H][W]): neighbouring taps of one kernel row, for a
//    first layer's one or few channels, whose groups of channels would be
//    mostly zeros.
// The packed weight holds, per step, 16 output channels x 4 bytes (or x 2
// int16) a 64-byte vector. A tile of J outputs along a row by V vectors of
// channels keeps J x V accumulators: per step V weight loads, J broadcasts
// of an input's word, J x V products.
#pragma once

#include <cstdint>
#include <cstring>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NNP_INT8_TILES 1
#define NNP_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#define NNP_PAIRS __attribute__((target("avx2")))
#endif

namespace nnp::cpu::int8_conv {

// Quads of bytes (VNNI) or pairs of int16 (AVX2), by channels or by a
// kernel row's taps.
enum Layout : int32_t { kChannelGroups = 1, kRowGroups = 2, kChannelPairs = 3, kRowPairs = 4 };
inline bool by_rows(int32_t layout) { return layout == kRowGroups || layout == kRowPairs; }
inline bool in_pairs(int32_t layout) { return layout == kChannelPairs || layout == kRowPairs; }
inline int64_t group_size(int32_t layout) { return in_pairs(layout) ? 2 : 4; }     // values a step reads
inline int64_t element_bytes(int32_t layout) { return in_pairs(layout) ? 2 : 1; }  // u8 or int16
constexpr int64_t kLanes = 16;
constexpr int64_t kHeaderBytes = 128;  // the corrections, then the weights, start 64-byte aligned after it
// C_in * kH * kW at most: 255 * 128 * 65536 < 2^31, so no int32 sum wraps.
constexpr int64_t kMaxTaps = 65536;
constexpr int64_t kMaxSize = int64_t{1} << 20;  // stride, dilation

struct Header {
  uint32_t magic;
  int32_t layout;
  int64_t out_channels, in_channels, kernel[2];
  int64_t stride[2], padding[2], dilation[2], pool[2];
  int64_t steps, vectors;  // reduction steps of four bytes (a quad) or a pair; C_out / 16, rounded up
  int32_t window_sums;     // ConvInteger's: whether its outputs need each window's input sum
  int32_t reserved;
};
static_assert(sizeof(Header) <= kHeaderBytes, "the packed header fits its slot");

inline int64_t ceil_div(int64_t v, int64_t m) { return (v + m - 1) / m; }
inline int64_t round_up(int64_t v, int64_t m) { return ceil_div(v, m) * m; }

// The form the kernel table chose: Tier::avx512 (VNNI's quads), avx2
// (pairs) or baseline (none: the core composes the convolution).
inline Tier form() {
#if NNP_INT8_TILES
  return kernel_table().int8_conv_packed;
#else
  return Tier::baseline;
#endif
}

// The geometry of a packed form for w [C_out, C_in, kH, kW], p and pool
// (magic and the corrections left to the caller); false where there is none
// (no form on this CPU, groups, an activation, sizes out of range).
inline bool geometry_for(const nnp_view& w, const nnp_conv2d_params& p, const int64_t* pool, int64_t max_taps,
                         Header& h) {
  h = Header{};
  if (form() == Tier::baseline || w.ndim != 4 || !is_contiguous(w) || p.groups != 1 ||
      (p.struct_size >= NNP_CONV2D_PARAMS_SIZE_1_18 && p.activation != NNP_ACTIVATION_NONE))
    return false;
  for (int32_t d = 0; d < 4; ++d)
    if (w.shape[d] < 1 || w.shape[d] > (int64_t{1} << 24)) return false;
  int64_t taps = 0;
  if (__builtin_mul_overflow(w.shape[1], w.shape[2], &taps) || __builtin_mul_overflow(taps, w.shape[3], &taps) ||
      taps > max_taps)
    return false;
  const bool no_pool = pool[0] == 0 && pool[1] == 0;
  for (int i = 0; i < 2; ++i)
    // Padding past a window's reach (reading only zeros) is left to the
    // layer: a stranger's model cannot make the image's copy huge.
    if (p.stride[i] < 1 || p.stride[i] > kMaxSize || p.dilation[i] < 1 || p.dilation[i] > kMaxSize ||
        p.padding[i] < 0 || p.padding[i] > p.dilation[i] * (w.shape[2 + i] - 1) ||
        (!no_pool && (pool[i] < 1 || pool[i] > 64)))
      return false;
  h.out_channels = w.shape[0];
  h.in_channels = w.shape[1];
  for (int i = 0; i < 2; ++i) {
    h.kernel[i] = w.shape[2 + i];
    h.stride[i] = p.stride[i];
    h.padding[i] = p.padding[i];
    h.dilation[i] = p.dilation[i];
    h.pool[i] = pool[i];
  }
  const bool pairs = form() == Tier::avx2;
  const int64_t g = pairs ? 2 : 4;
  const int64_t channel_steps = h.kernel[0] * h.kernel[1] * ceil_div(h.in_channels, g);
  const int64_t row_steps = h.in_channels * h.kernel[0] * ceil_div(h.kernel[1], g);
  const bool rows = h.dilation[1] == 1 && row_steps < channel_steps;
  h.layout = pairs ? (rows ? kRowPairs : kChannelPairs) : (rows ? kRowGroups : kChannelGroups);
  h.steps = rows ? row_steps : channel_steps;
  h.vectors = ceil_div(h.out_channels, kLanes);
  return true;
}

// Where in w [C_out][C_in][kH][kW] value b of step s for output channel o
// lies, or -1 where the step reaches past the channels or the kernel's
// width (the packed value is then 0).
inline int64_t weight_index(const Header& h, int64_t o, int64_t s, int64_t b) {
  const int64_t kh = h.kernel[0], kw = h.kernel[1], c_in = h.in_channels, g = group_size(h.layout);
  int64_t c, i, j;
  if (!by_rows(h.layout)) {
    const int64_t groups = ceil_div(c_in, g), tap = s / groups;
    c = (s % groups) * g + b;
    i = tap / kw;
    j = tap % kw;
    if (c >= c_in) return -1;
  } else {
    const int64_t groups = ceil_div(kw, g), row = s / groups;
    c = row / kh;
    i = row % kh;
    j = (s % groups) * g + b;
    if (j >= kw) return -1;
  }
  return ((o * c_in + c) * kh + i) * kw + j;
}

#if NNP_INT8_TILES

// One image's input buffer and the reads of a tile into it.
struct Input {
  int64_t rows, cols, channels;  // padded; channels: C rounded up to the group (channel groups), else C
  int64_t bytes;                 // the buffer, with slack for a row group's last word
  int64_t pixel_step, row_step;  // bytes between outputs along a row, and between output rows
};

inline Input input_for(const Header& h, int64_t height, int64_t width) {
  const int64_t g = group_size(h.layout), e = element_bytes(h.layout);
  Input in{};
  in.rows = height + 2 * h.padding[0];
  if (!by_rows(h.layout)) {
    in.cols = width + 2 * h.padding[1];
    in.channels = round_up(h.in_channels, g);
    in.pixel_step = h.stride[1] * in.channels * e;
    in.row_step = h.stride[0] * in.cols * in.channels * e;
    in.bytes = in.rows * in.cols * in.channels * e + 64;
  } else {
    in.cols = width + 2 * h.padding[1] + g;  // a row group's last word may read g - 1 values past the row
    in.channels = h.in_channels;
    in.pixel_step = h.stride[1] * e;
    in.row_step = h.stride[0] * in.cols * e;
    in.bytes = in.channels * in.rows * in.cols * e + 64;
  }
  return in;
}

// Where step s reads, in bytes from the tile's first output's window origin.
inline void step_offsets(const Header& h, const Input& in, int64_t* offsets) {
  const int64_t kh = h.kernel[0], kw = h.kernel[1], dh = h.dilation[0], dw = h.dilation[1];
  const int64_t g = group_size(h.layout), e = element_bytes(h.layout);
  int64_t s = 0;  // in the steps' order (weight_byte's)
  if (!by_rows(h.layout)) {
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j)
        for (int64_t q = 0; q < in.channels / g; ++q)
          offsets[s++] = ((i * dh * in.cols + j * dw) * in.channels + q * g) * e;
    return;
  }
  for (int64_t c = 0; c < h.in_channels; ++c)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t t = 0; t < ceil_div(kw, g); ++t) offsets[s++] = ((c * in.rows + i * dh) * in.cols + t * g) * e;
}

NNP_VNNI inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << count) - 1);
}

NNP_VNNI inline __m512i broadcast_word(const uint8_t* p) {
  __m512i r;
  asm("vpbroadcastd %1, %0" : "=v"(r) : "m"(*reinterpret_cast<const int32_t*>(p)));
  return r;
}

// What a tile reads besides its input: the steps' offsets and the packed
// weights.
struct Tile {
  const int64_t* offsets;
  int64_t steps, step_bytes;  // step_bytes: between one step's weights and the next's
  const int8_t* weights;
};

// The sums of J outputs from `in` (kStep, or step, bytes apart) by V
// vectors of channels from vector v0, into dst (pixel ints apart, its
// channels from 0).
template <int J, int V, int kStep>
NNP_VNNI void tile(const Tile& t, const uint8_t* in, int64_t step, int64_t v0, int32_t* dst, int64_t pixel) {
  const int64_t stride = kStep ? kStep : step;
  // In int lanes, cast at each vpdpbusd, and the loops unrolled: so GCC 12
  // keeps the array in registers (an array of __m512i went to the stack,
  // stored and copied at every step).
  __v16si acc[J][V];
  _Pragma("GCC unroll 32") for (int j = 0; j < J; ++j) {
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) acc[j][v] = __v16si{};
  }
  const int8_t* w = t.weights + v0 * 64;
  for (int64_t s = 0; s < t.steps; ++s, w += t.step_bytes) {
    const uint8_t* base = in + t.offsets[s];
    __v16si wv[V];
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) wv[v] = (__v16si)_mm512_loadu_si512(w + v * 64);
    _Pragma("GCC unroll 32") for (int j = 0; j < J; ++j) {
      const __v16si a = (__v16si)broadcast_word(base + j * stride);
      _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
        acc[j][v] = (__v16si)_mm512_dpbusd_epi32((__m512i)acc[j][v], (__m512i)a, (__m512i)wv[v]);
      }
    }
  }
  _Pragma("GCC unroll 32") for (int j = 0; j < J; ++j) {
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
      _mm512_storeu_si512(dst + j * pixel + (v0 + v) * kLanes, (__m512i)acc[j][v]);
    }
  }
}

// One output row's first `count` outputs, V vectors from v0, in tiles of
// the widest J that fits.
template <int V, int kStep>
NNP_VNNI void row_of(const Tile& t, const uint8_t* in, int64_t step, int64_t count, int64_t v0, int32_t* dst,
                     int64_t pixel) {
  constexpr int kWide = V == 1 ? 24 : 12;
  int64_t x = 0;
  for (; x + kWide <= count; x += kWide) tile<kWide, V, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
  for (; x + 8 <= count; x += 8) tile<8, V, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
  for (; x + 4 <= count; x += 4) tile<4, V, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
  for (; x < count; ++x) tile<1, V, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
}

template <int V>
NNP_VNNI void row_with_step(const Tile& t, const uint8_t* in, int64_t step, int64_t count, int64_t v0, int32_t* dst,
                            int64_t pixel) {
  switch (step) {  // the common steps as constants: the broadcasts' addresses are then fixed offsets
    case 1: row_of<V, 1>(t, in, step, count, v0, dst, pixel); break;
    case 4: row_of<V, 4>(t, in, step, count, v0, dst, pixel); break;
    case 16: row_of<V, 16>(t, in, step, count, v0, dst, pixel); break;
    default: row_of<V, 0>(t, in, step, count, v0, dst, pixel); break;
  }
}

// ---- AVX2: int16 pairs ----

// The sums of J outputs from `in` (kStep, or step, bytes apart) by the 16
// channels of block v0, into dst (pixel ints apart, its channels from 0):
// 2J accumulators of 8 lanes, in int lanes and unrolled as VNNI's tile.
template <int J, int kStep>
NNP_PAIRS void tile_pairs(const Tile& t, const uint8_t* in, int64_t step, int64_t v0, int32_t* dst, int64_t pixel) {
  const int64_t stride = kStep ? kStep : step;
  __v8si acc[J][2];
  _Pragma("GCC unroll 8") for (int j = 0; j < J; ++j) acc[j][0] = acc[j][1] = __v8si{};
  const int8_t* w = t.weights + v0 * 64;
  for (int64_t s = 0; s < t.steps; ++s, w += t.step_bytes) {
    const uint8_t* base = in + t.offsets[s];
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 32));
    _Pragma("GCC unroll 8") for (int j = 0; j < J; ++j) {
      int32_t word;
      std::memcpy(&word, base + j * stride, 4);
      const __m256i a = _mm256_set1_epi32(word);
      acc[j][0] = (__v8si)_mm256_add_epi32((__m256i)acc[j][0], _mm256_madd_epi16(a, w0));
      acc[j][1] = (__v8si)_mm256_add_epi32((__m256i)acc[j][1], _mm256_madd_epi16(a, w1));
    }
  }
  _Pragma("GCC unroll 8") for (int j = 0; j < J; ++j) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * pixel + v0 * kLanes), (__m256i)acc[j][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + j * pixel + v0 * kLanes + 8), (__m256i)acc[j][1]);
  }
}

template <int kStep>
NNP_PAIRS void row_of_pairs(const Tile& t, const uint8_t* in, int64_t step, int64_t count, int64_t v0, int32_t* dst,
                            int64_t pixel) {
  int64_t x = 0;
  for (; x + 6 <= count; x += 6) tile_pairs<6, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
  for (; x + 2 <= count; x += 2) tile_pairs<2, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
  for (; x < count; ++x) tile_pairs<1, kStep>(t, in + x * step, step, v0, dst + x * pixel, pixel);
}

NNP_PAIRS inline void row_pairs(const Tile& t, const uint8_t* in, int64_t step, int64_t count, int64_t v0, int32_t* dst,
                                int64_t pixel) {
  switch (step) {  // the common steps as constants: the broadcasts' addresses are then fixed offsets
    case 2: row_of_pairs<2>(t, in, step, count, v0, dst, pixel); break;
    case 4: row_of_pairs<4>(t, in, step, count, v0, dst, pixel); break;
    case 32: row_of_pairs<32>(t, in, step, count, v0, dst, pixel); break;
    default: row_of_pairs<0>(t, in, step, count, v0, dst, pixel); break;
  }
}

#endif  // NNP_INT8_TILES

}  // namespace nnp::cpu::int8_conv
