// ONNX's ConvInteger from a weight packed once (nnp_kernels.
// conv2d_integer_pack and conv2d_integer_packed, ABI 1.29): the integer
// convolutions of a dynamically quantized model, u8 or i8 images and
// weights with zero points, exact int32 sums. The tiles are the static int8
// layers' (cpu_int8_conv_tiles.hpp); what differs is how the buffer is
// filled and how the sums are corrected.
//
// With AVX512-VNNI, vpdpbusd multiplies unsigned bytes by signed ones. The
// buffer holds the image's bytes as they are (an i8 image plus 128), its
// padding their zero point zb, and the weight is packed as signed bytes s
// (a u8 weight less 128, an i8 one as it is), with c[o] = what s lacks of
// w - w_zero[o] (128 - w_zero[o], or -w_zero[o]). Then for each window
//   sum (b - zb) * (s + c[o]) = sum b * s - zb * S[o] + c[o] * D
// where sum b * s is the tiles' sum, S[o] the sum of channel o's s (packed
// with it), and D the window's sum of b - zb (the image's channel sums
// boxed by the window: a pass over the image, not over the weights), needed
// only where some c[o] is not 0. Every step wraps modulo 2^32, and the
// result is exact because it fits int32 (C_in * kH * kW <= 32768).
//
// With AVX2 only, the buffer holds x - x_zero as int16 (padding 0) and the
// weight w - w_zero as int16 pairs: vpmaddwd's sums are the result, with no
// correction.
//
// Work is split by output rows (batch 1 uses every thread), each row's sums
// corrected and written channels-first as they come.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "cpu_channels_first.hpp"
#include "cpu_conv_integer_depthwise.hpp"
#include "cpu_int8_conv_tiles.hpp"

namespace nnp::cpu {
namespace {

using namespace int8_conv;

constexpr uint32_t kMagic = 0x69636e70u;  // "pnci"
// C_in * kH * kW at most: 32768 * 255 * 255 < 2^31, so every result fits int32.
constexpr int64_t kMaxIntegerTaps = 32768;
constexpr int64_t kMaxPadding = 1024;

// After the header: S[o], then c[o] (int32, padded to whole vectors), then the weights.
int64_t channel_ints_bytes(const Header& h) { return round_up(h.vectors * kLanes * 4, 64); }
int64_t packed_bytes(const Header& h) { return kHeaderBytes + 2 * channel_ints_bytes(h) + h.steps * h.vectors * 64; }

bool is_byte(nnp_dtype d) { return d == NNP_U8 || d == NNP_I8; }

// The value at i of a u8 or i8 buffer.
int32_t byte_at(const void* data, nnp_dtype d, int64_t i) {
  return d == NNP_U8 ? static_cast<const uint8_t*>(data)[i] : static_cast<const int8_t*>(data)[i];
}

void pack(const Header& h, const nnp_view& w, const nnp_view* w_zero, char* packed) {
  const int64_t po = h.vectors * kLanes;
  std::memset(packed, 0, static_cast<size_t>(kHeaderBytes + 2 * channel_ints_bytes(h)));
  std::memcpy(packed, &h, sizeof h);
  std::vector<int32_t> zero(static_cast<size_t>(po), 0);
  for (int64_t o = 0; o < h.out_channels; ++o)
    if (w_zero) zero[static_cast<size_t>(o)] = byte_at(w_zero->data, w_zero->dtype, w_zero->shape[0] == 1 ? 0 : o);
  const bool u8 = w.dtype == NNP_U8;
  char* out = packed + kHeaderBytes + 2 * channel_ints_bytes(h);
  if (in_pairs(h.layout)) {  // int16 pairs of w - w_zero: no correction
    for (int64_t s = 0; s < h.steps; ++s)
      for (int64_t o = 0; o < po; ++o)
        for (int64_t b = 0; b < 2; ++b) {
          const int64_t i = o < h.out_channels ? weight_index(h, o, s, b) : -1;
          const auto v = static_cast<int16_t>(i < 0 ? 0 : byte_at(w.data, w.dtype, i) - zero[static_cast<size_t>(o)]);
          std::memcpy(out, &v, sizeof v);
          out += sizeof v;
        }
    return;
  }
  auto* sums = reinterpret_cast<int32_t*>(packed + kHeaderBytes);
  auto* offsets = reinterpret_cast<int32_t*>(packed + kHeaderBytes + channel_ints_bytes(h));
  const int64_t taps = h.in_channels * h.kernel[0] * h.kernel[1];
  const auto* bytes = static_cast<const uint8_t*>(w.data);
  for (int64_t o = 0; o < h.out_channels; ++o) {
    int32_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += u8 ? bytes[o * taps + t] - 128 : static_cast<int8_t>(bytes[o * taps + t]);
    sums[o] = sum;
    offsets[o] = (u8 ? 128 : 0) - zero[static_cast<size_t>(o)];
  }
  auto* weights = reinterpret_cast<int8_t*>(out);
  for (int64_t s = 0; s < h.steps; ++s)
    for (int64_t o = 0; o < po; ++o)
      for (int64_t b = 0; b < 4; ++b) {
        const int64_t i = o < h.out_channels ? weight_index(h, o, s, b) : -1;
        *weights++ = static_cast<int8_t>(i < 0 ? 0 : u8 ? bytes[i] - 128 : static_cast<int8_t>(bytes[i]));
      }
}

#if NNP_INT8_TILES

// The sizes of one call and what it reads besides the images.
struct Call {
  Header h;
  Input in;
  int64_t height, width;  // x's
  int64_t out_h, out_w;
  int64_t padded_out;   // C_out rounded up to 16
  int64_t image_bytes;  // in.bytes rounded up to 64: one image's buffer
  Tile tile;
  const int32_t *sums, *offsets;  // S and c (quads)
  int32_t zero;                   // zb (quads: x's zero point as the buffer holds it) or x_zero (pairs)
  int32_t flip;                   // 0x80 for an i8 image (quads: b = x + 128), else 0
  bool window_sums;
};

// One image into its quads buffer: bytes b as they are (or plus 128), padding zb.
NNP_VNNI void fill_quads(const Call& k, const uint8_t* x, uint8_t* buf) {
  const Header& h = k.h;
  const Input& in = k.in;
  std::memset(buf, k.zero, static_cast<size_t>(in.bytes));
  const int64_t c_in = h.in_channels, pad_h = h.padding[0], pad_w = h.padding[1], hw = k.height * k.width;
  const __m128i flip = _mm_set1_epi8(static_cast<char>(k.flip));
  if (by_rows(h.layout)) {
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t y = 0; y < k.height; ++y) {
        const uint8_t* src = x + c * hw + y * k.width;
        uint8_t* dst = buf + (c * in.rows + y + pad_h) * in.cols + pad_w;
        for (int64_t i = 0; i < k.width; i += 16) {
          const __mmask16 m = first_lanes(k.width - i);
          _mm_mask_storeu_epi8(dst + i, m, _mm_xor_si128(_mm_maskz_loadu_epi8(m, src + i), flip));
        }
      }
    return;
  }
  // Four channels' bytes make one word per pixel: interleaved 16 pixels at a time.
  for (int64_t g = 0; g < in.channels / 4; ++g)
    for (int64_t y = 0; y < k.height; ++y)
      for (int64_t i = 0; i < k.width; i += 16) {
        const __mmask16 m = first_lanes(k.width - i);
        __m128i c[4];
        for (int64_t b = 0; b < 4; ++b) {
          const int64_t ch = g * 4 + b;
          c[b] = ch < c_in ? _mm_xor_si128(_mm_maskz_loadu_epi8(m, x + ch * hw + y * k.width + i), flip)
                           : _mm_set1_epi8(static_cast<char>(k.zero));
        }
        const __m128i t0 = _mm_unpacklo_epi8(c[0], c[1]), t1 = _mm_unpackhi_epi8(c[0], c[1]);
        const __m128i t2 = _mm_unpacklo_epi8(c[2], c[3]), t3 = _mm_unpackhi_epi8(c[2], c[3]);
        alignas(16) uint32_t words[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(words), _mm_unpacklo_epi16(t0, t2));
        _mm_store_si128(reinterpret_cast<__m128i*>(words + 4), _mm_unpackhi_epi16(t0, t2));
        _mm_store_si128(reinterpret_cast<__m128i*>(words + 8), _mm_unpacklo_epi16(t1, t3));
        _mm_store_si128(reinterpret_cast<__m128i*>(words + 12), _mm_unpackhi_epi16(t1, t3));
        uint8_t* dst = buf + ((y + pad_h) * in.cols + pad_w + i) * in.channels + g * 4;
        const int64_t count = std::min<int64_t>(16, k.width - i);
        for (int64_t p = 0; p < count; ++p) std::memcpy(dst + p * in.channels, &words[p], 4);
      }
}

// Each output's window sum of b - zb (reads outside the image add 0) into d
// [out_h][out_w]: the channels summed per pixel, then boxed by the window.
void window_sums(const Call& k, const uint8_t* x, int32_t* d) {
  thread_local std::vector<int32_t> channel_sums;
  const int64_t hw = k.height * k.width;
  channel_sums.assign(static_cast<size_t>(hw), static_cast<int32_t>(-k.h.in_channels * k.zero));
  int32_t* cs = channel_sums.data();
  for (int64_t c = 0; c < k.h.in_channels; ++c) {
    const uint8_t* src = x + c * hw;
    for (int64_t p = 0; p < hw; ++p) cs[p] += src[p] ^ k.flip;
  }
  std::fill(d, d + k.out_h * k.out_w, 0);
  const Header& h = k.h;
  for (int64_t oy = 0; oy < k.out_h; ++oy)
    for (int64_t i = 0; i < h.kernel[0]; ++i) {
      const int64_t y = oy * h.stride[0] - h.padding[0] + i * h.dilation[0];
      if (y < 0 || y >= k.height) continue;
      for (int64_t j = 0; j < h.kernel[1]; ++j) {
        const int64_t shift = j * h.dilation[1] - h.padding[1];  // x = ox * stride + shift
        // The outputs whose read of this tap lies inside the row.
        const int64_t first = shift >= 0 ? 0 : (-shift + h.stride[1] - 1) / h.stride[1];
        const int64_t end = std::min(k.out_w, k.width - shift <= 0 ? 0 : (k.width - shift - 1) / h.stride[1] + 1);
        const int32_t* row = cs + y * k.width + shift;
        int32_t* dst = d + oy * k.out_w;
        for (int64_t ox = first; ox < end; ++ox) dst[ox] += row[ox * h.stride[1]];
      }
    }
}

// One output row's sums (quads), corrected, into out [C_out][out_h][out_w] at row py.
NNP_VNNI void row_quads(const Call& k, const uint8_t* buf, const int32_t* d, int64_t py, int32_t* sums, int32_t* out) {
  const int64_t po = k.padded_out;
  const uint8_t* in = buf + py * k.in.row_step;
  for (int64_t v0 = 0; v0 < k.h.vectors; v0 += 2) {
    if (k.h.vectors - v0 >= 2)
      row_with_step<2>(k.tile, in, k.in.pixel_step, k.out_w, v0, sums, po);
    else
      row_with_step<1>(k.tile, in, k.in.pixel_step, k.out_w, v0, sums, po);
  }
  const __m512i zero = _mm512_set1_epi32(k.zero);
  for (int64_t c = 0; c < po; c += kLanes) {
    const __m512i base = _mm512_mullo_epi32(zero, _mm512_loadu_si512(k.sums + c));
    const __m512i offset = _mm512_loadu_si512(k.offsets + c);
    for (int64_t px = 0; px < k.out_w; ++px) {
      __m512i r = _mm512_sub_epi32(_mm512_loadu_si512(sums + px * po + c), base);
      if (k.window_sums) r = _mm512_add_epi32(r, _mm512_mullo_epi32(offset, _mm512_set1_epi32(d[py * k.out_w + px])));
      _mm512_storeu_si512(sums + px * po + c, r);
    }
  }
  // A transposition moves bits only: the ints go through it as floats.
  transpose_rows(reinterpret_cast<const float*>(sums), po, k.out_w, k.h.out_channels,
                 reinterpret_cast<float*>(out + py * k.out_w), k.out_h * k.out_w);
}

// 16 values at p less the zero point, as int16.
NNP_PAIRS inline __m256i less_zero16(const uint8_t* p, bool signed_x, __m256i zero) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_sub_epi16(signed_x ? _mm256_cvtepi8_epi16(v) : _mm256_cvtepu8_epi16(v), zero);
}

// One image into its pairs buffer: x - x_zero as int16, padding 0.
NNP_PAIRS void fill_pairs(const Call& k, const uint8_t* x, bool signed_x, int16_t* buf) {
  const Header& h = k.h;
  const Input& in = k.in;
  std::memset(buf, 0, static_cast<size_t>(in.bytes));
  const int64_t c_in = h.in_channels, pad_h = h.padding[0], pad_w = h.padding[1], hw = k.height * k.width;
  const int64_t w16 = k.width - k.width % 16;
  const __m256i zero = _mm256_set1_epi16(static_cast<int16_t>(k.zero));
  const auto value = [&](const uint8_t* p) {
    return static_cast<int16_t>((signed_x ? static_cast<int8_t>(*p) : *p) - k.zero);
  };
  if (by_rows(h.layout)) {
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t y = 0; y < k.height; ++y) {
        const uint8_t* src = x + c * hw + y * k.width;
        int16_t* dst = buf + (c * in.rows + y + pad_h) * in.cols + pad_w;
        for (int64_t i = 0; i < w16; i += 16)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), less_zero16(src + i, signed_x, zero));
        for (int64_t i = w16; i < k.width; ++i) dst[i] = value(src + i);
      }
    return;
  }
  // Two channels' values make one 32-bit word per pixel.
  for (int64_t c = 0; c < in.channels; c += 2)
    for (int64_t y = 0; y < k.height; ++y) {
      const uint8_t* first = x + c * hw + y * k.width;
      const uint8_t* second = c + 1 < c_in ? first + hw : nullptr;
      int16_t* dst = buf + ((y + pad_h) * in.cols + pad_w) * in.channels + c;
      for (int64_t i = 0; i < w16; i += 16) {
        const __m256i lo = less_zero16(first + i, signed_x, zero),
                      hi = second ? less_zero16(second + i, signed_x, zero) : _mm256_setzero_si256();
        alignas(32) int32_t words[16];
        // Within each 128-bit half: pixels 0-3 and 4-7 of that half's eight.
        _mm256_store_si256(reinterpret_cast<__m256i*>(words), _mm256_unpacklo_epi16(lo, hi));
        _mm256_store_si256(reinterpret_cast<__m256i*>(words + 8), _mm256_unpackhi_epi16(lo, hi));
        static constexpr int kPixel[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};
        for (int64_t p = 0; p < 16; ++p) std::memcpy(dst + (i + kPixel[p]) * in.channels, &words[p], 4);
      }
      for (int64_t i = w16; i < k.width; ++i) {
        dst[i * in.channels] = value(first + i);
        dst[i * in.channels + 1] = second ? value(second + i) : int16_t{0};
      }
    }
}

// One output row's sums (pairs) into out at row py.
NNP_PAIRS void row_pairs_out(const Call& k, const uint8_t* buf, int64_t py, int32_t* sums, int32_t* out) {
  const uint8_t* in = buf + py * k.in.row_step;
  for (int64_t v0 = 0; v0 < k.h.vectors; ++v0) row_pairs(k.tile, in, k.in.pixel_step, k.out_w, v0, sums, k.padded_out);
  transpose_rows_avx2(reinterpret_cast<const float*>(sums), k.padded_out, k.out_w, k.h.out_channels,
                      reinterpret_cast<float*>(out + py * k.out_w), k.out_h * k.out_w);
}

#endif  // NNP_INT8_TILES

const char* kNotPacked = "conv2d_integer_packed: packed is not a weight conv2d_integer_pack wrote";

}  // namespace

nnp_status conv2d_integer_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_view* w_zero,
                               const nnp_conv2d_params* p, const nnp_view* packed, int64_t* bytes) {
  if (!w || !p || !bytes) return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_pack: w, p and bytes are required");
  if (!is_byte(w->dtype) || (w_zero && (w_zero->dtype != w->dtype || w_zero->ndim > 1 || !is_contiguous(*w_zero))))
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_integer_pack: w must be u8 or i8, and w_zero NULL or a contiguous view of w's dtype");
  const int64_t zeros = w_zero ? view_numel(*w_zero) : 1;
  if (is_depthwise(*w, *p)) return depthwise_integer_pack(*w, w_zero, zeros, *p, packed, bytes);
  const int64_t no_pool[2] = {0, 0};
  Header h{};
  // Padding is copied into each image's buffer: a stranger's huge padding is left to the composition.
  if (!geometry_for(*w, *p, no_pool, kMaxIntegerTaps, h) || (zeros != 1 && zeros != h.out_channels) ||
      h.padding[0] > kMaxPadding || h.padding[1] > kMaxPadding) {
    *bytes = 0;
    return NNP_OK;
  }
  h.magic = kMagic;
  h.window_sums = 0;
  if (!in_pairs(h.layout)) {  // some c[o] not 0: a u8 weight whose zero point is not 128, or an i8 one's not 0
    const int32_t none = w->dtype == NNP_U8 ? 128 : 0;
    for (int64_t o = 0; o < zeros; ++o)
      if ((w_zero ? byte_at(w_zero->data, w_zero->dtype, o) : 0) != none) h.window_sums = 1;
  }
  const int64_t need = packed_bytes(h);
  if (!packed) {
    *bytes = need;
    return NNP_OK;
  }
  if (nnp_status status = check_packed_room(*packed, need, "conv2d_integer_pack"); status != NNP_OK) return status;
  nnp_view one_zero{};
  if (w_zero) {  // read as [C_out] or [1] whatever its rank
    one_zero = *w_zero;
    one_zero.ndim = 1;
    one_zero.shape[0] = zeros;
  }
  pack(h, *w, w_zero ? &one_zero : nullptr, static_cast<char*>(packed->data));
  *bytes = need;
  return NNP_OK;
}

nnp_status conv2d_integer_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* x_zero,
                                 const nnp_view* packed, const nnp_conv2d_params* p, const nnp_view* out) {
  if (!x || !packed || !p || !out)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: x, packed, p and out are required");
  if (!is_byte(x->dtype) || !is_contiguous(*x) || out->dtype != NNP_I32 || !is_contiguous(*out))
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_integer_packed: x must be a contiguous u8 or i8 tensor and out a "
                "contiguous i32 one");
  if (x_zero && (x_zero->dtype != x->dtype || view_numel(*x_zero) != 1))
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: x_zero must be one value of x's dtype");
  if (is_depthwise_packed(*packed))
    return depthwise_integer_packed(*x, x_zero ? byte_at(x_zero->data, x_zero->dtype, 0) : 0, *packed, *p, *out);
  Header h{};
  if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->strides[0] != 1 || packed->shape[0] < kHeaderBytes)
    return fail(NNP_INVALID_ARGUMENT, kNotPacked);
  std::memcpy(&h, packed->data, sizeof h);
  if (h.magic != kMagic || h.layout < kChannelGroups || h.layout > kRowPairs || h.out_channels < 1 ||
      h.out_channels > (int64_t{1} << 24) || h.in_channels < 1 || h.steps < 1 || h.steps > kMaxIntegerTaps ||
      h.vectors != ceil_div(h.out_channels, kLanes) || packed->shape[0] < packed_bytes(h))
    return fail(NNP_INVALID_ARGUMENT, kNotPacked);
  bool same = p->groups == 1 && (p->struct_size < NNP_CONV2D_PARAMS_SIZE_1_18 || p->activation == NNP_ACTIVATION_NONE);
  for (int i = 0; i < 2; ++i)
    same = same && p->stride[i] == h.stride[i] && p->padding[i] == h.padding[i] && p->dilation[i] == h.dilation[i];
  if (!same)
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_integer_packed: the packed weight was made for another geometry (stride, padding or "
                "dilation); pack it again for this one");
  if (!is_byte(x->dtype) || x->ndim != 4 || !is_contiguous(*x) || x->shape[1] != h.in_channels ||
      out->dtype != NNP_I32 || out->ndim != 4 || !is_contiguous(*out) || out->shape[0] != x->shape[0] ||
      out->shape[1] != h.out_channels)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: x must be a contiguous u8 or i8 [N, " +
                                          std::to_string(h.in_channels) + ", H, W] and out a contiguous i32 [N, " +
                                          std::to_string(h.out_channels) + ", H', W'] for this packed weight");
  if (x_zero && (x_zero->dtype != x->dtype || view_numel(*x_zero) != 1))
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: x_zero must be one value of x's dtype");
#if NNP_INT8_TILES
  if (in_pairs(h.layout) ? form() == Tier::baseline : form() != Tier::avx512)
    return fail(NNP_UNIMPLEMENTED, in_pairs(h.layout)
                                       ? "conv2d_integer_packed: this CPU has no AVX2 for this packed weight"
                                       : "conv2d_integer_packed: this CPU has no AVX512-VNNI for this packed weight");
  Call k{};
  k.h = h;
  k.height = x->shape[2];
  k.width = x->shape[3];
  for (int i = 0; i < 2; ++i) {
    const int64_t span = h.dilation[i] * (h.kernel[i] - 1) + 1, padded = x->shape[2 + i] + 2 * h.padding[i];
    (i == 0 ? k.out_h : k.out_w) = padded < span ? 0 : (padded - span) / h.stride[i] + 1;
  }
  if (k.out_h < 1 || k.out_w < 1 || out->shape[2] != k.out_h || out->shape[3] != k.out_w)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: out must be [N, " + std::to_string(h.out_channels) +
                                          ", " + std::to_string(std::max<int64_t>(k.out_h, 1)) + ", " +
                                          std::to_string(std::max<int64_t>(k.out_w, 1)) + "] for x");
  if (x->shape[0] < 1) return NNP_OK;
  const bool signed_x = x->dtype == NNP_I8;
  const int32_t x_zero_value = x_zero ? byte_at(x_zero->data, x_zero->dtype, 0) : 0;
  const bool pairs = in_pairs(h.layout);
  k.in = input_for(h, k.height, k.width);
  k.padded_out = h.vectors * kLanes;
  k.image_bytes = round_up(k.in.bytes, 64);
  k.flip = !pairs && signed_x ? 0x80 : 0;
  k.zero = pairs ? x_zero_value : x_zero_value + (signed_x ? 128 : 0);
  k.window_sums = !pairs && h.window_sums;
  const char* base = static_cast<const char*>(packed->data);
  k.sums = reinterpret_cast<const int32_t*>(base + kHeaderBytes);
  k.offsets = reinterpret_cast<const int32_t*>(base + kHeaderBytes + channel_ints_bytes(h));
  thread_local std::vector<int64_t> offsets;
  offsets.resize(static_cast<size_t>(h.steps));
  step_offsets(h, k.in, offsets.data());
  k.tile = Tile{offsets.data(), h.steps, h.vectors * 64,
                reinterpret_cast<const int8_t*>(base + kHeaderBytes + 2 * channel_ints_bytes(h))};
  const int64_t n = x->shape[0], plane = k.out_h * k.out_w;
  const int64_t in_image = h.in_channels * k.height * k.width, out_image = h.out_channels * plane;
  // Every image's buffer (and window sums) first, then the rows.
  thread_local std::vector<uint8_t> images;
  thread_local std::vector<int32_t> windows;
  // The padded copies of a stranger's thin image with wide padding could be
  // far larger than the image: refused past 4 GiB, and an allocation that
  // fails is reported, not thrown across the table.
  int64_t copies = 0;
  if (__builtin_mul_overflow(n, k.image_bytes, &copies) || copies > (int64_t{1} << 32))
    return fail(NNP_OUT_OF_MEMORY, "conv2d_integer_packed: the padded copies of x would take more than 4 GiB (" +
                                       std::to_string(n) + " images of " + std::to_string(k.image_bytes) +
                                       " bytes): the padding is too wide for this kernel");
  try {
    if (images.size() < static_cast<size_t>(copies)) images.resize(static_cast<size_t>(copies));
    if (k.window_sums && windows.size() < static_cast<size_t>(n * plane))
      windows.resize(static_cast<size_t>(n * plane));
  } catch (const std::bad_alloc&) {
    return fail(NNP_OUT_OF_MEMORY,
                "conv2d_integer_packed: no memory for the padded copies of x (" + std::to_string(copies) + " bytes)");
  }
  const auto* xs = static_cast<const uint8_t*>(x->data);
  auto* os = static_cast<int32_t*>(out->data);
  uint8_t* bufs = images.data();
  int32_t* wins = windows.data();
  parallel_for(n, in_image * (k.window_sums ? 3 : 1), [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      if (pairs) {
        fill_pairs(k, xs + i * in_image, signed_x, reinterpret_cast<int16_t*>(bufs + i * k.image_bytes));
      } else {
        fill_quads(k, xs + i * in_image, bufs + i * k.image_bytes);
        if (k.window_sums) window_sums(k, xs + i * in_image, wins + i * plane);
      }
    }
  });
  parallel_for(n * k.out_h, h.steps * h.vectors * 64 * k.out_w, [&](int64_t first, int64_t last) {
    thread_local std::vector<int32_t> sums;  // grown once, reused by every later call
    if (sums.size() < static_cast<size_t>(k.out_w * k.padded_out))
      sums.resize(static_cast<size_t>(k.out_w * k.padded_out));
    for (int64_t r = first; r < last; ++r) {
      const int64_t i = r / k.out_h, py = r % k.out_h;
      if (pairs)
        row_pairs_out(k, bufs + i * k.image_bytes, py, sums.data(), os + i * out_image);
      else
        row_quads(k, bufs + i * k.image_bytes, wins + i * plane, py, sums.data(), os + i * out_image);
    }
  });
  return NNP_OK;
#else
  (void)x_zero;
  return fail(NNP_UNIMPLEMENTED, "conv2d_integer_packed: this build has no packed integer convolutions");
#endif
}

}  // namespace nnp::cpu
