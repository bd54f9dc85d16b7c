// Convolutions with the weight packed once (nnp_kernels.conv2d_pack and
// conv2d_packed, ABI 1.21), for the shapes where oneDNN's direct kernels
// leave the most on the table: small CNNs at inference, the ReLU and a
// 2 x 2 max pooling fused in, each image's work in L1/L2 on one thread.
//
// Two methods, each in AVX-512 and in AVX2 + FMA, channels-last inside
// (each image is copied into a zero-padded [H][W][C] buffer, so padding
// costs no branches):
//  - direct, for a first layer's few input channels (C_in * kH * kW <=
//    128; a 1 x 1 convolution only to at most 128 channels: a wider one,
//    MobileNetV2's expansions, runs faster in oneDNN's packed form below,
//    a narrow one, ShuffleNetV2's, here): 16 output channels a vector, a block of 2 rows x 8 columns of
//    outputs in 16 registers, one broadcast multiply-add per input value
//    and tap;
//  - Winograd F(2x2, 5x5) for 5 x 5 kernels over 8 or more channels: each
//    2 x 2 block of outputs from a 6 x 6 tile, 36 products instead of 100
//    per channel pair (2.8 times fewer), the products as 36 small GEMMs
//    over the channels; the 2 x 2 output block is exactly a 2 x 2 pooling
//    window, so the pooling is a max of the four as they are made.
// AVX2 has 16 registers of 8 lanes: its blocks are 2 rows x 4 columns of
// outputs by 8 channels (direct) and 4 tiles by 16 channels (Winograd),
// eight accumulators each. The packed weight is the same for both.
// The packed form starts with a header recording the geometry it was made
// for; conv2d_packed refuses any other. Every other geometry of groups 1
// without pooling is packed in oneDNN's layout (cpu_conv_onednn.hpp).
//
// The broadcasts are written as vbroadcastss from memory: GCC otherwise
// keeps loaded scalars in registers and broadcasts from there, a shuffle
// on port 5 per multiply-add, which halves the rate.
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps(), which its
// -Wmaybe-uninitialized reports (GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_channels_first.hpp"
#include "cpu_conv_onednn.hpp"
#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NNP_PACKED_CONV 1
#define NNP_AVX512 __attribute__((target("avx512f,fma")))
#define NNP_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace nnp::cpu {
namespace {

constexpr uint32_t kMagic = 0x6b63706eu;  // "npck"
enum Method : int32_t { kDirect = 1, kWinograd5 = 2 };
constexpr int64_t kLanes = 16;
constexpr int64_t kHeaderBytes = 128;  // the weights start 64-byte aligned after it
constexpr int64_t kMaxDirectTaps = 128;
constexpr int64_t kTileBlock = 8;  // Winograd tiles multiplied together

struct Header {
  uint32_t magic;
  int32_t method;
  int64_t out_channels, in_channels, kernel[2], padded_out;  // padded_out: C_out rounded up to 16
  int64_t padding[2], pool[2], activation;
};
static_assert(sizeof(Header) <= kHeaderBytes, "the packed header fits its slot");

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Which method fits this geometry, 0 where none does (the caller then uses conv2d).
int32_t method_for(const nnp_view& w, const nnp_conv2d_params& p, const int64_t* pool) {
#if NNP_PACKED_CONV
  if (kernel_table().conv_packed == Tier::baseline) return 0;
#else
  return 0;
#endif
  if (w.dtype != NNP_F32 || w.ndim != 4 || !is_contiguous(w) || p.groups != 1) return 0;
  for (int32_t d = 0; d < 4; ++d)
    if (w.shape[d] < 1 || w.shape[d] > (int64_t{1} << 20)) return 0;
  if (p.activation != NNP_ACTIVATION_NONE && p.activation != NNP_ACTIVATION_RELU) return 0;
  if (!(pool[0] == 0 && pool[1] == 0) && !(pool[0] == 2 && pool[1] == 2)) return 0;
  for (int i = 0; i < 2; ++i)
    if (p.stride[i] != 1 || p.dilation[i] != 1 || p.padding[i] < 0 || p.padding[i] >= w.shape[2 + i]) return 0;
  const int64_t in = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  if (kh == 5 && kw == 5 && in >= 8) return kWinograd5;
  if (in * kh * kw <= kMaxDirectTaps && (kh * kw > 1 || w.shape[0] <= kMaxDirectTaps)) return kDirect;
  return 0;
}

int64_t weight_floats(int32_t method, const Header& h) {
  const int64_t taps = h.in_channels * h.kernel[0] * h.kernel[1];
  return method == kWinograd5 ? 36 * h.in_channels * h.padded_out : taps * h.padded_out;
}

// ---- packing (once per plan; plain scalar code) ----

// Winograd F(2, 5)'s kernel transform G (times 24), for the points 0, 1, -1,
// 2, -2 and infinity; the data transform is B^T below and the output
// transform A^T in output_tile.
constexpr double kG24[6][5] = {{6, 0, 0, 0, 0},  {-4, -4, -4, -4, -4}, {-4, 4, -4, 4, -4},
                               {1, 2, 4, 8, 16}, {1, -2, 4, -8, 16},   {0, 0, 0, 0, 24}};

// u[36][C_in][padded_out] = G g G^T for every channel pair (zeros beyond C_out).
void pack_winograd(const float* w, const Header& h, float* u) {
  const int64_t out = h.out_channels, in = h.in_channels, po = h.padded_out;
  std::memset(u, 0, sizeof(float) * static_cast<size_t>(36 * in * po));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t c = 0; c < in; ++c) {
      const float* g = w + (o * in + c) * 25;
      double t[6][5];
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j) {
          double s = 0;
          for (int k = 0; k < 5; ++k) s += kG24[i][k] * g[k * 5 + j];
          t[i][j] = s / 24;
        }
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          double s = 0;
          for (int k = 0; k < 5; ++k) s += t[i][k] * kG24[j][k];
          u[((i * 6 + j) * in + c) * po + o] = static_cast<float>(s / 24);
        }
    }
}

// d[(kh * kW + kw) * C_in + c][padded_out] = w[o][c][kh][kw].
void pack_direct(const float* w, const Header& h, float* d) {
  const int64_t out = h.out_channels, in = h.in_channels, kh = h.kernel[0], kw = h.kernel[1], po = h.padded_out;
  std::memset(d, 0, sizeof(float) * static_cast<size_t>(in * kh * kw * po));
  for (int64_t o = 0; o < out; ++o)
    for (int64_t c = 0; c < in; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) d[((y * kw + x) * in + c) * po + o] = w[((o * in + c) * kh + y) * kw + x];
}

#if NNP_PACKED_CONV

// ---- per image ----

struct Image {
  const Header& h;
  const float* weights;
  const float* bias;  // padded_out values (zeros where the call has none)
  int64_t in_h, in_w, conv_h, conv_w, out_h, out_w;
  // The padded channels-last copy: rows x cols pixels of `channels`
  // floats; for Winograd, tiles_h x tiles_w tiles of 2 x 2 outputs.
  int64_t rows = 0, cols = 0, channels = 0, tiles_h = 0, tiles_w = 0;
};

// Sizes the copy so that every block reads inside it: the direct method's
// 2 x 8 output blocks and Winograd's 6 x 6 tiles, past the last output
// where the blocks do not divide it.
void lay_out(Image& im) {
  const Header& h = im.h;
  const bool pool = h.pool[0] != 0;
  if (h.method == kDirect) {
    im.rows = round_up(pool ? im.out_h * 2 : im.conv_h, 2) + h.kernel[0] - 1;
    im.cols = round_up(pool ? im.out_w * 2 : im.conv_w, 8) + h.kernel[1] - 1;
    im.channels = h.in_channels;
  } else {
    im.tiles_h = pool ? im.out_h : (im.conv_h + 1) / 2;
    im.tiles_w = pool ? im.out_w : (im.conv_w + 1) / 2;
    im.rows = 2 * im.tiles_h + 4;
    im.cols = 2 * im.tiles_w + 4;
    im.channels = round_up(h.in_channels, kLanes);
  }
}

NNP_AVX512 inline __m512 broadcast(const float* p) {
  __m512 r;
  asm("vbroadcastss %1, %0" : "=v"(r) : "m"(*p));
  return r;
}

// max(a, b), NaN where either is (vmaxps alone returns b when a is NaN).
NNP_AVX512 inline __m512 max_nan(__m512 a, __m512 b) {
  return _mm512_mask_mov_ps(_mm512_max_ps(a, b), _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}

// bias, then the activation (max(0, v) keeps a NaN: vmaxps returns its second operand).
NNP_AVX512 inline __m512 finish(__m512 v, __m512 bias, bool relu) {
  v = _mm512_add_ps(v, bias);
  return relu ? _mm512_max_ps(_mm512_setzero_ps(), v) : v;
}

// The image x [C][H][W] into the padded copy xp (zeros around and beyond,
// its top-left at the padding; rows and columns no output reads, below or
// right of the last window, left out).
// (AVX2 copies one value at a time: a few thousand per image, next to the
// convolution's hundreds of thousands of multiply-adds.)
void image_to_channels_last(const Image& im, const float* x, float* xp, bool avx512) {
  const int64_t pad_h = im.h.padding[0], pad_w = im.h.padding[1], channels = im.channels;
  std::memset(xp, 0, sizeof(float) * static_cast<size_t>(im.rows * im.cols * channels));
  const int64_t h = std::min(im.in_h, im.rows - pad_h), w = std::min(im.in_w, im.cols - pad_w);
  if (avx512 &&
      channels % kLanes == 0) {  // Winograd's: whole vectors of channels, each row's pixels transposed 16 at a time
    for (int64_t y = 0; y < h; ++y)
      to_channels_last(x + y * im.in_w, im.in_h * im.in_w, w, im.h.in_channels, channels,
                       xp + ((y + pad_h) * im.cols + pad_w) * channels, channels);
    return;
  }
  for (int64_t c = 0; c < im.h.in_channels; ++c)
    for (int64_t y = 0; y < h; ++y) {
      const float* src = x + (c * im.in_h + y) * im.in_w;
      float* dst = xp + ((y + pad_h) * im.cols + pad_w) * channels + c;
      for (int64_t i = 0; i < w; ++i) dst[i * channels] = src[i];
    }
}

// Direct: outputs (row0 .. row0 + 1, col0 .. col0 + 7), channels
// [ob * 16, ob * 16 + 16), from xp (cols wide, C_in channels). kIn: C_in
// when the caller knows it (1: the broadcasts' addresses are then
// constant offsets, not one add each), else 0.
template <int64_t kIn>
NNP_AVX512 void direct_block(const Image& im, const float* xp, int64_t row0, int64_t col0, int64_t ob, bool pool,
                             bool relu, float* y) {
  const Header& h = im.h;
  const int64_t in = kIn ? kIn : h.in_channels, kh = h.kernel[0], kw = h.kernel[1], po = h.padded_out, cols = im.cols;
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
  const float* w = im.weights + ob * kLanes;
  for (int64_t dy = 0; dy < kh; ++dy)
    for (int64_t dx = 0; dx < kw; ++dx)
      for (int64_t c = 0; c < in; ++c) {
        const __m512 wv = _mm512_loadu_ps(w + ((dy * kw + dx) * in + c) * po);
        const float* r0 = xp + ((row0 + dy) * cols + col0 + dx) * in + c;
        const float* r1 = r0 + cols * in;
#define NNP_TAP(i)                                          \
  a##i = _mm512_fmadd_ps(broadcast(r0 + (i)*in), wv, a##i); \
  b##i = _mm512_fmadd_ps(broadcast(r1 + (i)*in), wv, b##i);
        NNP_TAP(0) NNP_TAP(1) NNP_TAP(2) NNP_TAP(3) NNP_TAP(4) NNP_TAP(5) NNP_TAP(6) NNP_TAP(7)
#undef NNP_TAP
      }
  const __m512 bias = _mm512_loadu_ps(im.bias + ob * kLanes);
  if (pool) {  // the block is one pooled row of 4
    const __m512 m[4] = {max_nan(max_nan(a0, a1), max_nan(b0, b1)), max_nan(max_nan(a2, a3), max_nan(b2, b3)),
                         max_nan(max_nan(a4, a5), max_nan(b4, b5)), max_nan(max_nan(a6, a7), max_nan(b6, b7))};
    const int64_t py = row0 / 2, px0 = col0 / 2;
    for (int64_t q = 0; q < 4 && px0 + q < im.out_w; ++q)
      _mm512_storeu_ps(y + ((py * im.out_w + px0 + q) * po) + ob * kLanes, finish(m[q], bias, relu));
    return;
  }
  const __m512 rows[2][8] = {{a0, a1, a2, a3, a4, a5, a6, a7}, {b0, b1, b2, b3, b4, b5, b6, b7}};
  for (int64_t r = 0; r < 2 && row0 + r < im.out_h; ++r)
    for (int64_t i = 0; i < 8 && col0 + i < im.out_w; ++i)
      _mm512_storeu_ps(y + (((row0 + r) * im.out_w + col0 + i) * po) + ob * kLanes, finish(rows[r][i], bias, relu));
}

NNP_AVX512 void direct_image(const Image& im, const float* x, float* scratch, float* y) {
  const Header& h = im.h;
  const bool pool = h.pool[0] != 0, relu = h.activation == NNP_ACTIVATION_RELU;
  const int64_t rows_done = im.rows - h.kernel[0] + 1, cols_done = im.cols - h.kernel[1] + 1;
  image_to_channels_last(im, x, scratch, true);
  for (int64_t ob = 0; ob < h.padded_out / kLanes; ++ob)
    for (int64_t r = 0; r < rows_done; r += 2)
      for (int64_t c = 0; c < cols_done; c += 8)
        if (h.in_channels == 1)
          direct_block<1>(im, scratch, r, c, ob, pool, relu, y);
        else
          direct_block<0>(im, scratch, r, c, ob, pool, relu, y);
}

// B^T d for six vectors d0..d5 (the rows or columns of a 6 x 6 tile).
NNP_AVX512 inline void input_rows(__m512 d0, __m512 d1, __m512 d2, __m512 d3, __m512 d4, __m512 d5, __m512* r) {
  const __m512 four = _mm512_set1_ps(4.f), five = _mm512_set1_ps(5.f), two = _mm512_set1_ps(2.f);
  r[0] = _mm512_fmadd_ps(four, d0, _mm512_fnmadd_ps(five, d2, d4));
  r[5] = _mm512_fmadd_ps(four, d1, _mm512_fnmadd_ps(five, d3, d5));
  const __m512 a = _mm512_fnmadd_ps(four, d2, d4), b = _mm512_fnmadd_ps(four, d1, d3);
  r[1] = _mm512_add_ps(a, b);
  r[2] = _mm512_sub_ps(a, b);
  const __m512 c = _mm512_sub_ps(d4, d2), e = _mm512_sub_ps(d3, d1);
  r[3] = _mm512_fmadd_ps(two, e, c);
  r[4] = _mm512_fnmadd_ps(two, e, c);
}

// v[36][kTileBlock][channels] at slot t = B^T d B for the tile whose
// top-left is p (pixels `step` floats apart, rows `row` floats apart),
// 16 channels.
NNP_AVX512 void input_tile(const float* p, int64_t step, int64_t row, int64_t channels, int64_t t, float* v) {
  __m512 rows[6][6];
  for (int i = 0; i < 6; ++i) {
    const float* q = p + i * row;
    input_rows(_mm512_loadu_ps(q), _mm512_loadu_ps(q + step), _mm512_loadu_ps(q + 2 * step),
               _mm512_loadu_ps(q + 3 * step), _mm512_loadu_ps(q + 4 * step), _mm512_loadu_ps(q + 5 * step), rows[i]);
  }
  for (int j = 0; j < 6; ++j) {
    __m512 r[6];
    input_rows(rows[0][j], rows[1][j], rows[2][j], rows[3][j], rows[4][j], rows[5][j], r);
    for (int i = 0; i < 6; ++i) _mm512_storeu_ps(v + ((i * 6 + j) * kTileBlock + t) * channels, r[i]);
  }
}

// m[36][kTileBlock][padded_out], channels [oc, oc + 16 * kVectors):
// for each of the 36 points, the block's tiles times u over the input
// channels. kChannels: 16 where C_in is (the loop then unrolls and the
// broadcasts take constant offsets), else 0.
template <int kVectors, int64_t kChannels>
NNP_AVX512 void winograd_products(const float* v, int64_t channels_given, const float* u, int64_t in_given, int64_t po,
                                  int64_t oc, float* m) {
  const int64_t channels = kChannels ? kChannels : channels_given, in = kChannels ? kChannels : in_given;
  for (int64_t xi = 0; xi < 36; ++xi) {
    const float* vx = v + xi * kTileBlock * channels;
    const float* ux = u + xi * in * po + oc;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    __m512 b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
    for (int64_t c = 0; c < in; ++c) {
      const __m512 w0 = _mm512_loadu_ps(ux + c * po);
      const __m512 w1 = kVectors > 1 ? _mm512_loadu_ps(ux + c * po + kLanes) : w0;
#define NNP_TILE(t)                                        \
  {                                                        \
    const __m512 s = broadcast(vx + (t)*channels + c);     \
    a##t = _mm512_fmadd_ps(s, w0, a##t);                   \
    if (kVectors > 1) b##t = _mm512_fmadd_ps(s, w1, b##t); \
  }
      NNP_TILE(0) NNP_TILE(1) NNP_TILE(2) NNP_TILE(3) NNP_TILE(4) NNP_TILE(5) NNP_TILE(6) NNP_TILE(7)
#undef NNP_TILE
    }
    float* mx = m + xi * kTileBlock * po + oc;
#define NNP_STORE(t)                   \
  _mm512_storeu_ps(mx + (t)*po, a##t); \
  if (kVectors > 1) _mm512_storeu_ps(mx + (t)*po + kLanes, b##t);
    NNP_STORE(0) NNP_STORE(1) NNP_STORE(2) NNP_STORE(3) NNP_STORE(4) NNP_STORE(5) NNP_STORE(6) NNP_STORE(7)
#undef NNP_STORE
  }
}

// A^T m A for slot t and channels [oc, oc + 16): the 2 x 2 outputs y[0..3]
// (row-major).
NNP_AVX512 void output_tile(const float* m, int64_t po, int64_t t, int64_t oc, __m512* y) {
  const __m512 two = _mm512_set1_ps(2.f);
  __m512 s0[6], s1[6];
  for (int j = 0; j < 6; ++j) {
    __m512 v[6];
    for (int i = 0; i < 6; ++i) v[i] = _mm512_loadu_ps(m + ((i * 6 + j) * kTileBlock + t) * po + oc);
    const __m512 p1 = _mm512_add_ps(v[1], v[2]), n1 = _mm512_sub_ps(v[1], v[2]);
    const __m512 p2 = _mm512_add_ps(v[3], v[4]), n2 = _mm512_sub_ps(v[3], v[4]);
    s0[j] = _mm512_add_ps(_mm512_add_ps(v[0], p1), p2);
    s1[j] = _mm512_add_ps(_mm512_fmadd_ps(two, n2, n1), v[5]);
  }
  for (int r = 0; r < 2; ++r) {
    const __m512* s = r ? s1 : s0;
    const __m512 p1 = _mm512_add_ps(s[1], s[2]), n1 = _mm512_sub_ps(s[1], s[2]);
    const __m512 p2 = _mm512_add_ps(s[3], s[4]), n2 = _mm512_sub_ps(s[3], s[4]);
    y[2 * r] = _mm512_add_ps(_mm512_add_ps(s[0], p1), p2);
    y[2 * r + 1] = _mm512_add_ps(_mm512_fmadd_ps(two, n2, n1), s[5]);
  }
}

NNP_AVX512 void winograd_image(const Image& im, const float* x, float* scratch, float* y) {
  const Header& h = im.h;
  const bool pool = h.pool[0] != 0, relu = h.activation == NNP_ACTIVATION_RELU;
  const int64_t in = h.in_channels, po = h.padded_out, channels = im.channels, cols = im.cols;
  const int64_t tiles_w = im.tiles_w, tiles = im.tiles_h * im.tiles_w;
  float* xp = scratch;
  float* v = xp + im.rows * cols * channels;
  float* m = v + 36 * kTileBlock * channels;
  image_to_channels_last(im, x, xp, true);
  for (int64_t first = 0; first < tiles; first += kTileBlock) {
    const int64_t count = std::min(kTileBlock, tiles - first);
    for (int64_t t = 0; t < count; ++t) {
      const int64_t ty = (first + t) / tiles_w, tx = (first + t) % tiles_w;
      for (int64_t g = 0; g < channels; g += kLanes)
        input_tile(xp + ((2 * ty) * cols + 2 * tx) * channels + g, channels, cols * channels, channels, t, v + g);
    }
    int64_t oc = 0;
    const bool sixteen = in == kLanes;
    for (; oc + 2 * kLanes <= po; oc += 2 * kLanes)
      if (sixteen)
        winograd_products<2, kLanes>(v, channels, im.weights, in, po, oc, m);
      else
        winograd_products<2, 0>(v, channels, im.weights, in, po, oc, m);
    if (oc < po) winograd_products<1, 0>(v, channels, im.weights, in, po, oc, m);
    for (int64_t t = 0; t < count; ++t) {
      const int64_t ty = (first + t) / tiles_w, tx = (first + t) % tiles_w;
      for (int64_t c = 0; c < po; c += kLanes) {
        const __m512 bias = _mm512_loadu_ps(im.bias + c);
        __m512 out[4];
        output_tile(m, po, t, c, out);
        if (pool) {
          const __m512 top = max_nan(max_nan(out[0], out[1]), max_nan(out[2], out[3]));
          _mm512_storeu_ps(y + (ty * im.out_w + tx) * po + c, finish(top, bias, relu));
          continue;
        }
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t i = 0; i < 2; ++i)
            if (2 * ty + r < im.out_h && 2 * tx + i < im.out_w)
              _mm512_storeu_ps(y + ((2 * ty + r) * im.out_w + 2 * tx + i) * po + c, finish(out[2 * r + i], bias, relu));
      }
    }
  }
}

// ---- AVX2 + FMA ----

NNP_AVX2 inline __m256 broadcast8(const float* p) {
  __m256 r;
  asm("vbroadcastss %1, %0" : "=x"(r) : "m"(*p));
  return r;
}

// max(a, b), NaN where either is.
NNP_AVX2 inline __m256 max_nan8(__m256 a, __m256 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

NNP_AVX2 inline __m256 finish8(__m256 v, __m256 bias, bool relu) {
  v = _mm256_add_ps(v, bias);
  return relu ? _mm256_max_ps(_mm256_setzero_ps(), v) : v;
}

// Direct: outputs (row0 .. row0 + 1, col0 .. col0 + 3), channels
// [oh * 8, oh * 8 + 8).
template <int64_t kIn>
NNP_AVX2 void direct_block_avx2(const Image& im, const float* xp, int64_t row0, int64_t col0, int64_t oh, bool pool,
                                bool relu, float* y) {
  const Header& h = im.h;
  const int64_t in = kIn ? kIn : h.in_channels, kh = h.kernel[0], kw = h.kernel[1], po = h.padded_out, cols = im.cols;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  const float* w = im.weights + oh * 8;
  for (int64_t dy = 0; dy < kh; ++dy)
    for (int64_t dx = 0; dx < kw; ++dx)
      for (int64_t c = 0; c < in; ++c) {
        const __m256 wv = _mm256_loadu_ps(w + ((dy * kw + dx) * in + c) * po);
        const float* r0 = xp + ((row0 + dy) * cols + col0 + dx) * in + c;
        const float* r1 = r0 + cols * in;
#define NNP_TAP8(i)                                          \
  a##i = _mm256_fmadd_ps(broadcast8(r0 + (i)*in), wv, a##i); \
  b##i = _mm256_fmadd_ps(broadcast8(r1 + (i)*in), wv, b##i);
        NNP_TAP8(0) NNP_TAP8(1) NNP_TAP8(2) NNP_TAP8(3)
#undef NNP_TAP8
      }
  const __m256 bias = _mm256_loadu_ps(im.bias + oh * 8);
  if (pool) {  // the block is one pooled row of 2
    const __m256 m[2] = {max_nan8(max_nan8(a0, a1), max_nan8(b0, b1)), max_nan8(max_nan8(a2, a3), max_nan8(b2, b3))};
    const int64_t py = row0 / 2, px0 = col0 / 2;
    for (int64_t q = 0; q < 2 && px0 + q < im.out_w; ++q)
      _mm256_storeu_ps(y + ((py * im.out_w + px0 + q) * po) + oh * 8, finish8(m[q], bias, relu));
    return;
  }
  const __m256 rows[2][4] = {{a0, a1, a2, a3}, {b0, b1, b2, b3}};
  for (int64_t r = 0; r < 2 && row0 + r < im.out_h; ++r)
    for (int64_t i = 0; i < 4 && col0 + i < im.out_w; ++i)
      _mm256_storeu_ps(y + (((row0 + r) * im.out_w + col0 + i) * po) + oh * 8, finish8(rows[r][i], bias, relu));
}

NNP_AVX2 void direct_image_avx2(const Image& im, const float* x, float* scratch, float* y) {
  const Header& h = im.h;
  const bool pool = h.pool[0] != 0, relu = h.activation == NNP_ACTIVATION_RELU;
  const int64_t rows_done = im.rows - h.kernel[0] + 1, cols_done = im.cols - h.kernel[1] + 1;
  image_to_channels_last(im, x, scratch, false);
  for (int64_t oh = 0; oh < h.padded_out / 8; ++oh)
    for (int64_t r = 0; r < rows_done; r += 2)
      for (int64_t c = 0; c < cols_done; c += 4)
        if (h.in_channels == 1)
          direct_block_avx2<1>(im, scratch, r, c, oh, pool, relu, y);
        else
          direct_block_avx2<0>(im, scratch, r, c, oh, pool, relu, y);
}

// input_rows in eight lanes.
NNP_AVX2 inline void input_rows8(__m256 d0, __m256 d1, __m256 d2, __m256 d3, __m256 d4, __m256 d5, __m256* r) {
  const __m256 four = _mm256_set1_ps(4.f), five = _mm256_set1_ps(5.f), two = _mm256_set1_ps(2.f);
  r[0] = _mm256_fmadd_ps(four, d0, _mm256_fnmadd_ps(five, d2, d4));
  r[5] = _mm256_fmadd_ps(four, d1, _mm256_fnmadd_ps(five, d3, d5));
  const __m256 a = _mm256_fnmadd_ps(four, d2, d4), b = _mm256_fnmadd_ps(four, d1, d3);
  r[1] = _mm256_add_ps(a, b);
  r[2] = _mm256_sub_ps(a, b);
  const __m256 c = _mm256_sub_ps(d4, d2), e = _mm256_sub_ps(d3, d1);
  r[3] = _mm256_fmadd_ps(two, e, c);
  r[4] = _mm256_fnmadd_ps(two, e, c);
}

// input_tile for 8 channels.
NNP_AVX2 void input_tile_avx2(const float* p, int64_t step, int64_t row, int64_t channels, int64_t t, float* v) {
  __m256 rows[6][6];
  for (int i = 0; i < 6; ++i) {
    const float* q = p + i * row;
    input_rows8(_mm256_loadu_ps(q), _mm256_loadu_ps(q + step), _mm256_loadu_ps(q + 2 * step),
                _mm256_loadu_ps(q + 3 * step), _mm256_loadu_ps(q + 4 * step), _mm256_loadu_ps(q + 5 * step), rows[i]);
  }
  for (int j = 0; j < 6; ++j) {
    __m256 r[6];
    input_rows8(rows[0][j], rows[1][j], rows[2][j], rows[3][j], rows[4][j], rows[5][j], r);
    for (int i = 0; i < 6; ++i) _mm256_storeu_ps(v + ((i * 6 + j) * kTileBlock + t) * channels, r[i]);
  }
}

// winograd_products for channels [oc, oc + 16) and the block's tiles four
// at a time: 4 tiles x 2 vectors, eight accumulators.
NNP_AVX2 void winograd_products_avx2(const float* v, int64_t channels, const float* u, int64_t in, int64_t po,
                                     int64_t oc, float* m) {
  for (int64_t xi = 0; xi < 36; ++xi)
    for (int64_t t0 = 0; t0 < kTileBlock; t0 += 4) {
      const float* vx = v + (xi * kTileBlock + t0) * channels;
      const float* ux = u + xi * in * po + oc;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
      for (int64_t c = 0; c < in; ++c) {
        const __m256 w0 = _mm256_loadu_ps(ux + c * po), w1 = _mm256_loadu_ps(ux + c * po + 8);
#define NNP_TILE8(t)                                    \
  {                                                     \
    const __m256 s = broadcast8(vx + (t)*channels + c); \
    a##t = _mm256_fmadd_ps(s, w0, a##t);                \
    b##t = _mm256_fmadd_ps(s, w1, b##t);                \
  }
        NNP_TILE8(0) NNP_TILE8(1) NNP_TILE8(2) NNP_TILE8(3)
#undef NNP_TILE8
      }
      float* mx = m + (xi * kTileBlock + t0) * po + oc;
      const __m256 lo[4] = {a0, a1, a2, a3}, hi[4] = {b0, b1, b2, b3};
      for (int t = 0; t < 4; ++t) {
        _mm256_storeu_ps(mx + t * po, lo[t]);
        _mm256_storeu_ps(mx + t * po + 8, hi[t]);
      }
    }
}

// output_tile for 8 channels.
NNP_AVX2 void output_tile_avx2(const float* m, int64_t po, int64_t t, int64_t oc, __m256* y) {
  const __m256 two = _mm256_set1_ps(2.f);
  __m256 s0[6], s1[6];
  for (int j = 0; j < 6; ++j) {
    __m256 v[6];
    for (int i = 0; i < 6; ++i) v[i] = _mm256_loadu_ps(m + ((i * 6 + j) * kTileBlock + t) * po + oc);
    const __m256 p1 = _mm256_add_ps(v[1], v[2]), n1 = _mm256_sub_ps(v[1], v[2]);
    const __m256 p2 = _mm256_add_ps(v[3], v[4]), n2 = _mm256_sub_ps(v[3], v[4]);
    s0[j] = _mm256_add_ps(_mm256_add_ps(v[0], p1), p2);
    s1[j] = _mm256_add_ps(_mm256_fmadd_ps(two, n2, n1), v[5]);
  }
  for (int r = 0; r < 2; ++r) {
    const __m256* s = r ? s1 : s0;
    const __m256 p1 = _mm256_add_ps(s[1], s[2]), n1 = _mm256_sub_ps(s[1], s[2]);
    const __m256 p2 = _mm256_add_ps(s[3], s[4]), n2 = _mm256_sub_ps(s[3], s[4]);
    y[2 * r] = _mm256_add_ps(_mm256_add_ps(s[0], p1), p2);
    y[2 * r + 1] = _mm256_add_ps(_mm256_fmadd_ps(two, n2, n1), s[5]);
  }
}

NNP_AVX2 void winograd_image_avx2(const Image& im, const float* x, float* scratch, float* y) {
  const Header& h = im.h;
  const bool pool = h.pool[0] != 0, relu = h.activation == NNP_ACTIVATION_RELU;
  const int64_t in = h.in_channels, po = h.padded_out, channels = im.channels, cols = im.cols;
  const int64_t tiles_w = im.tiles_w, tiles = im.tiles_h * im.tiles_w;
  float* xp = scratch;
  float* v = xp + im.rows * cols * channels;
  float* m = v + 36 * kTileBlock * channels;
  image_to_channels_last(im, x, xp, false);
  for (int64_t first = 0; first < tiles; first += kTileBlock) {
    const int64_t count = std::min(kTileBlock, tiles - first);
    for (int64_t t = 0; t < count; ++t) {
      const int64_t ty = (first + t) / tiles_w, tx = (first + t) % tiles_w;
      for (int64_t g = 0; g < channels; g += 8)
        input_tile_avx2(xp + ((2 * ty) * cols + 2 * tx) * channels + g, channels, cols * channels, channels, t, v + g);
    }
    // A block's last tiles past count hold the previous block's values:
    // multiplied, never stored.
    for (int64_t oc = 0; oc < po; oc += kLanes) winograd_products_avx2(v, channels, im.weights, in, po, oc, m);
    for (int64_t t = 0; t < count; ++t) {
      const int64_t ty = (first + t) / tiles_w, tx = (first + t) % tiles_w;
      for (int64_t c = 0; c < po; c += 8) {
        const __m256 bias = _mm256_loadu_ps(im.bias + c);
        __m256 out[4];
        output_tile_avx2(m, po, t, c, out);
        if (pool) {
          const __m256 top = max_nan8(max_nan8(out[0], out[1]), max_nan8(out[2], out[3]));
          _mm256_storeu_ps(y + (ty * im.out_w + tx) * po + c, finish8(top, bias, relu));
          continue;
        }
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t i = 0; i < 2; ++i)
            if (2 * ty + r < im.out_h && 2 * tx + i < im.out_w)
              _mm256_storeu_ps(y + ((2 * ty + r) * im.out_w + 2 * tx + i) * po + c,
                               finish8(out[2 * r + i], bias, relu));
      }
    }
  }
}

// Floats of per-thread scratch an image needs: its padded channels-last
// copy (and for Winograd the transformed tiles and products), then the
// channels-last output.
int64_t scratch_floats(const Image& im) {
  int64_t work = im.rows * im.cols * im.channels;
  if (im.h.method == kWinograd5) work += 36 * kTileBlock * (im.channels + im.h.padded_out);
  return work + im.out_h * im.out_w * im.h.padded_out;
}

#endif  // NNP_PACKED_CONV

}  // namespace

nnp_status conv2d_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_conv2d_params* p, const int64_t* pool,
                       const nnp_view* packed, int64_t* bytes) {
  if (!w || !p || !pool || !bytes) return fail(NNP_INVALID_ARGUMENT, "conv2d_pack: w, p, pool and bytes are required");
  const int32_t method = method_for(*w, *p, pool);
  if (method == 0) return onednn_conv2d_pack(*w, *p, pool, packed, bytes);
  Header h{};
  h.magic = kMagic;
  h.method = method;
  h.out_channels = w->shape[0];
  h.in_channels = w->shape[1];
  h.kernel[0] = w->shape[2];
  h.kernel[1] = w->shape[3];
  h.padded_out = round_up(h.out_channels, kLanes);
  for (int i = 0; i < 2; ++i) {
    h.padding[i] = p->padding[i];
    h.pool[i] = pool[i];
  }
  h.activation = p->activation;
  const int64_t need = kHeaderBytes + weight_floats(method, h) * static_cast<int64_t>(sizeof(float));
  if (!packed) {
    *bytes = need;
    return NNP_OK;
  }
  if (nnp_status status = check_packed_room(*packed, need, "conv2d_pack"); status != NNP_OK) return status;
  char* base = static_cast<char*>(packed->data);
  std::memset(base, 0, kHeaderBytes);
  std::memcpy(base, &h, sizeof h);
  float* weights = reinterpret_cast<float*>(base + kHeaderBytes);
  const float* src = static_cast<const float*>(w->data);
  if (method == kWinograd5)
    pack_winograd(src, h, weights);
  else
    pack_direct(src, h, weights);
  *bytes = need;
  return NNP_OK;
}

nnp_status conv2d_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* packed, const nnp_view* bias,
                         const nnp_conv2d_params* p, const int64_t* pool, const nnp_view* out) {
  if (!x || !packed || !p || !pool || !out)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: x, packed, p, pool and out are required");
  Header h{};
  if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->strides[0] != 1 || packed->shape[0] < kHeaderBytes)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: packed is not a weight conv2d_pack wrote");
  if (is_onednn_packed(*packed)) return onednn_conv2d_packed(*x, *packed, bias, *p, pool, *out);
  std::memcpy(&h, packed->data, sizeof h);
  if (h.magic != kMagic || (h.method != kDirect && h.method != kWinograd5) ||
      packed->shape[0] < kHeaderBytes + weight_floats(h.method, h) * static_cast<int64_t>(sizeof(float)))
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: packed is not a weight conv2d_pack wrote");
  bool same = p->groups == 1 && p->activation == h.activation && pool[0] == h.pool[0] && pool[1] == h.pool[1];
  for (int i = 0; i < 2; ++i) same = same && p->stride[i] == 1 && p->dilation[i] == 1 && p->padding[i] == h.padding[i];
  if (!same)
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_packed: the packed weight was made for another geometry (stride, padding, dilation, "
                "activation or pooling); pack it again for this one");
  if (x->dtype != NNP_F32 || out->dtype != NNP_F32 || x->ndim != 4 || out->ndim != 4 || !is_contiguous(*x) ||
      !is_contiguous(*out) || x->shape[1] != h.in_channels || out->shape[1] != h.out_channels ||
      out->shape[0] != x->shape[0])
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: x and out must be contiguous f32 [N, " +
                                          std::to_string(h.in_channels) + ", H, W] and [N, " +
                                          std::to_string(h.out_channels) + ", H', W'] for this packed weight");
  if (bias && (bias->dtype != NNP_F32 || bias->ndim != 1 || bias->shape[0] != h.out_channels))
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: bias must be f32 [" + std::to_string(h.out_channels) + "]");
#if NNP_PACKED_CONV
  const int64_t conv_h = x->shape[2] + 2 * h.padding[0] - h.kernel[0] + 1;
  const int64_t conv_w = x->shape[3] + 2 * h.padding[1] - h.kernel[1] + 1;
  const int64_t out_h = h.pool[0] ? conv_h / 2 : conv_h, out_w = h.pool[0] ? conv_w / 2 : conv_w;
  if (conv_h < 1 || conv_w < 1 || out->shape[2] != out_h || out->shape[3] != out_w)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_packed: out must be [N, " + std::to_string(h.out_channels) + ", " +
                                          std::to_string(out_h) + ", " + std::to_string(out_w) + "] for x");
  thread_local std::vector<float> bias_values;  // the caller's; grown once
  bias_values.assign(static_cast<size_t>(h.padded_out), 0.f);
  if (bias)
    for (int64_t c = 0; c < h.out_channels; ++c)
      bias_values[static_cast<size_t>(c)] = static_cast<const float*>(bias->data)[c * bias->strides[0]];
  Image im{h,
           reinterpret_cast<const float*>(static_cast<const char*>(packed->data) + kHeaderBytes),
           bias_values.data(),
           x->shape[2],
           x->shape[3],
           conv_h,
           conv_w,
           out_h,
           out_w};
  lay_out(im);
  const int64_t scratch = scratch_floats(im), n = x->shape[0];
  const int64_t in_image = h.in_channels * im.in_h * im.in_w, out_image = h.out_channels * out_h * out_w;
  const int64_t taps = h.in_channels * h.kernel[0] * h.kernel[1];
  const float* xs = static_cast<const float*>(x->data);
  float* os = static_cast<float*>(out->data);
  parallel_for(n, 2 * taps * h.padded_out * conv_h * conv_w, [&](int64_t first, int64_t last) {
    thread_local std::vector<float> buffer;  // grown once, reused by every later call
    if (buffer.size() < static_cast<size_t>(scratch)) buffer.resize(static_cast<size_t>(scratch));
    float* y = buffer.data() + (scratch - out_h * out_w * h.padded_out);
    const bool avx512 = kernel_table().conv_packed == Tier::avx512;
    for (int64_t i = first; i < last; ++i) {
      const float* image = xs + i * in_image;
      float* result = os + i * out_image;
      if (avx512) {
        if (h.method == kWinograd5)
          winograd_image(im, image, buffer.data(), y);
        else
          direct_image(im, image, buffer.data(), y);
        to_channels_first(y, out_h * out_w, h.padded_out, h.out_channels, result);
      } else {
        if (h.method == kWinograd5)
          winograd_image_avx2(im, image, buffer.data(), y);
        else
          direct_image_avx2(im, image, buffer.data(), y);
        transpose_rows_avx2(y, h.padded_out, out_h * out_w, h.out_channels, result, out_h * out_w);
      }
    }
  });
  return NNP_OK;
#else
  return fail(NNP_UNIMPLEMENTED, "conv2d_packed: this build has no packed convolutions");
#endif
}

}  // namespace nnp::cpu
