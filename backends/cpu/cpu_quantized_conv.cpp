// Static int8 convolutions from a weight packed once (nnp_kernels.
// quantized_conv2d_pack and quantized_conv2d_packed, ABI 1.22) on
// AVX512-VNNI, or on AVX2: the quantized layers of a static int8 CNN at
// inference, with the rescaling, the requantization to the output's grid
// and a max pooling fused in, each image's work on one thread.
//
// AVX2 has no vpdpbusd, and vpmaddubsw's u8 x s8 pairs saturate int16, so
// its form steps by pairs instead of quads: the image quantized to int16
// (no shift: padding reads 0, the quantized zero, and no correction is
// needed), the weight packed as int16 pairs, 16 output channels x 2 values
// a 64-byte step as VNNI's 16 x 4 bytes, and vpmaddwd adding each pair's
// two products into an int32 lane, exactly. A tile of 6 outputs by 16
// channels keeps 12 accumulators of 8 lanes.
//
// Each image is quantized once into a padded u8 buffer holding a + 128, the
// form vpdpbusd multiplies (unsigned bytes by signed ones); the products
// then carry 128 * the sum of each output channel's weights, which the
// packed form stores and the epilogue subtracts. Padding reads 128, the
// quantized zero, so the borders cost no branches. The buffer's layouts and
// the tiles are cpu_int8_conv_tiles.hpp's (W3's first layer takes the row
// groups: 10 steps a pixel instead of 25).
//
// The sums are rescaled and requantized in the composition's order, each
// step rounded to f32 (the file is built with -ffp-contract=off), so the
// result equals the core's composition exactly. Every step after the sum is
// monotone (the scales are positive), so a pooling window's largest output
// is its largest sum's: the int32 sums are pooled, and only the pooled ones
// requantized (a quarter of the work for 2 x 2 windows). The packed form starts with
// a header recording the geometry it was made for; any other is refused.
//
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which its
// -Wmaybe-uninitialized and -Wuninitialized report (GCC bug 105593, fixed
// in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_channels_first.hpp"
#include "cpu_int8_conv_tiles.hpp"

namespace nnp::cpu {
namespace {

using namespace int8_conv;

constexpr uint32_t kMagic = 0x71636e70u;  // "pncq"

int64_t correction_bytes(const Header& h) { return round_up(h.vectors * kLanes * 4, 64); }
int64_t packed_bytes(const Header& h) { return kHeaderBytes + correction_bytes(h) + h.steps * h.vectors * 64; }

// The header of w's packed form for p and pool; magic 0 where there is none
// (no form on this CPU, another dtype, groups, an activation, sizes out of range).
Header header_for(const nnp_view& w, const nnp_conv2d_params& p, const int64_t* pool) {
  Header h{};
  if (w.dtype != NNP_I8 || !geometry_for(w, p, pool, kMaxTaps, h)) return Header{};
  h.magic = kMagic;
  return h;
}

// w's value b of step s for output channel o (0 where the step reaches past
// the channels or the kernel's width).
int8_t weight_byte(const Header& h, const int8_t* w, int64_t o, int64_t s, int64_t b) {
  const int64_t i = weight_index(h, o, s, b);
  return i < 0 ? int8_t{0} : w[i];
}

void pack(const Header& h, const int8_t* w, char* packed) {
  std::memset(packed, 0, static_cast<size_t>(kHeaderBytes + correction_bytes(h)));
  std::memcpy(packed, &h, sizeof h);
  if (in_pairs(h.layout)) {  // int16 pairs: signed by signed, no correction
    char* out = packed + kHeaderBytes + correction_bytes(h);
    for (int64_t s = 0; s < h.steps; ++s)
      for (int64_t o = 0; o < h.vectors * kLanes; ++o)
        for (int64_t b = 0; b < 2; ++b) {
          const int16_t v = o < h.out_channels ? weight_byte(h, w, o, s, b) : int16_t{0};
          std::memcpy(out, &v, sizeof v);
          out += sizeof v;
        }
    return;
  }
  auto* corrections = reinterpret_cast<int32_t*>(packed + kHeaderBytes);
  const int64_t taps = h.in_channels * h.kernel[0] * h.kernel[1];
  for (int64_t o = 0; o < h.out_channels; ++o) {
    int32_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) sum += w[o * taps + t];
    corrections[o] = 128 * sum;
  }
  auto* out = reinterpret_cast<int8_t*>(packed + kHeaderBytes + correction_bytes(h));
  for (int64_t s = 0; s < h.steps; ++s)
    for (int64_t o = 0; o < h.vectors * kLanes; ++o)
      for (int64_t b = 0; b < 4; ++b) *out++ = o < h.out_channels ? weight_byte(h, w, o, s, b) : int8_t{0};
}

#if NNP_INT8_TILES

// The quantization of each step, as floats in vectors.
struct Quantization {
  float input_inv_scale, input_min;
  float output_inv_scale, output_scale, zero_point, output_min, output_max;
};

// 16 values of x quantized as quantized_gemm does, plus 128, in int32 lanes
// (masked-off lanes read 0, which gives 128).
NNP_VNNI inline __m512i quantized_u8(__m512 v, const Quantization& q) {
  v = _mm512_mul_ps(v, _mm512_set1_ps(q.input_inv_scale));
  v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> 0
  v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(q.input_min)), _mm512_set1_ps(127.0f));
  return _mm512_add_epi32(_mm512_cvtps_epi32(v), _mm512_set1_epi32(128));
}

// Image x [C][H][W] into the buffer, quantized, padding 128.
NNP_VNNI void quantize_image(const Header& h, const Input& in, const Quantization& q, const float* x, int64_t height,
                             int64_t width, uint8_t* buf) {
  std::memset(buf, 128, static_cast<size_t>(in.bytes));
  const int64_t c_in = h.in_channels, pad_h = h.padding[0], pad_w = h.padding[1];
  if (by_rows(h.layout)) {
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t y = 0; y < height; ++y) {
        const float* src = x + (c * height + y) * width;
        uint8_t* dst = buf + (c * in.rows + y + pad_h) * in.cols + pad_w;
        for (int64_t i = 0; i < width; i += 16) {
          const __mmask16 m = first_lanes(width - i);
          _mm_mask_storeu_epi8(dst + i, m, _mm512_cvtepi32_epi8(quantized_u8(_mm512_maskz_loadu_ps(m, src + i), q)));
        }
      }
    return;
  }
  if (height == 1 && width == 1 && pad_h == 0 && pad_w == 0) {  // one pixel (a Linear's row): the channels in order
    for (int64_t c = 0; c < c_in; c += 16) {
      const __mmask16 m = first_lanes(c_in - c);
      _mm_mask_storeu_epi8(buf + c, m, _mm512_cvtepi32_epi8(quantized_u8(_mm512_maskz_loadu_ps(m, x + c), q)));
    }
    return;
  }
  // Four channels' bytes make one word per pixel, scattered to the pixels.
  const __m512i pixel = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(static_cast<int32_t>(in.channels / 4)));
  for (int64_t g = 0; g < in.channels / 4; ++g)
    for (int64_t y = 0; y < height; ++y)
      for (int64_t i = 0; i < width; i += 16) {
        const __mmask16 m = first_lanes(width - i);
        __m512i word = _mm512_setzero_si512();
        for (int64_t b = 0; b < 4; ++b) {
          const int64_t c = g * 4 + b;
          const __m512 v = c < c_in ? _mm512_maskz_loadu_ps(m, x + (c * height + y) * width + i) : _mm512_setzero_ps();
          word = _mm512_or_si512(word, _mm512_slli_epi32(quantized_u8(v, q), static_cast<unsigned>(8 * b)));
        }
        uint8_t* dst = buf + ((y + pad_h) * in.cols + pad_w + i) * in.channels + g * 4;
        _mm512_mask_i32scatter_epi32(dst, m, pixel, word, 4);
      }
}

// What turns 16 channels' sums into outputs: the corrections, scale and
// bias of those channels, the quantization.
struct Requantize {
  __m512i correction;
  __m512 scale, bias, inv, zero, lo, hi, out_scale;
};

NNP_VNNI inline __m512 requantized(__m512i sum, const Requantize& r) {
  __m512 s = _mm512_cvtepi32_ps(_mm512_sub_epi32(sum, r.correction));
  s = _mm512_add_ps(_mm512_mul_ps(s, r.scale), r.bias);
  __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(s, r.inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // vmaxps and vminps return their second operand where either is NaN: v.
  v = _mm512_min_ps(r.hi, _mm512_max_ps(r.lo, _mm512_add_ps(v, r.zero)));
  return _mm512_mul_ps(_mm512_sub_ps(v, r.zero), r.out_scale);
}

// The sizes of one call and what it reads besides the image.
struct Call {
  Header h;
  Input in;
  int64_t height, width;       // x's
  int64_t conv_h, conv_w;      // the convolution's output
  int64_t out_h, out_w;        // after the pooling
  int64_t window_h, window_w;  // the pooling's (1 x 1 without)
  int64_t padded_out;          // C_out rounded up to 16
  Tile tile;
  const int32_t* corrections;
  const float *scale, *bias;  // padded to whole vectors
  Quantization q;
};

// One image into out [C_out][out_h][out_w]; buf holds it quantized, sums
// a pooling window's rows of sums channels last, y the outputs channels
// last. Each output's rescaling and requantization is monotone (the scales
// are positive; each rounding keeps order), so the maximum of a window's
// requantized sums is the requantized maximum of its sums: the pooling
// takes the int32 sums, and only the pooled ones are requantized.
NNP_VNNI void convolve_image(const Call& k, const uint8_t* buf, int32_t* sums, float* y, float* out) {
  const int64_t po = k.padded_out, used_w = k.out_w * k.window_w;
  for (int64_t py = 0; py < k.out_h; ++py) {
    for (int64_t r = 0; r < k.window_h; ++r) {
      const uint8_t* in = buf + (py * k.window_h + r) * k.in.row_step;
      int32_t* dst = sums + r * used_w * po;
      for (int64_t v0 = 0; v0 < k.h.vectors; v0 += 2) {
        if (k.h.vectors - v0 >= 2)
          row_with_step<2>(k.tile, in, k.in.pixel_step, used_w, v0, dst, po);
        else
          row_with_step<1>(k.tile, in, k.in.pixel_step, used_w, v0, dst, po);
      }
    }
    float* pooled = y + py * k.out_w * po;
    for (int64_t c = 0; c < po; c += kLanes) {
      const Requantize rq{_mm512_loadu_si512(k.corrections + c), _mm512_loadu_ps(k.scale + c),
                          _mm512_loadu_ps(k.bias + c),           _mm512_set1_ps(k.q.output_inv_scale),
                          _mm512_set1_ps(k.q.zero_point),        _mm512_set1_ps(k.q.output_min),
                          _mm512_set1_ps(k.q.output_max),        _mm512_set1_ps(k.q.output_scale)};
      for (int64_t px = 0; px < k.out_w; ++px) {
        const int32_t* window = sums + px * k.window_w * po + c;
        __m512i m = _mm512_loadu_si512(window);
        for (int64_t r = 0; r < k.window_h; ++r)
          for (int64_t i = 0; i < k.window_w; ++i)
            m = _mm512_max_epi32(m, _mm512_loadu_si512(window + (r * used_w + i) * po));
        _mm512_storeu_ps(pooled + px * po + c, requantized(m, rq));
      }
    }
  }
  to_channels_first(y, k.out_h * k.out_w, po, k.h.out_channels, out);
}

// x quantized as quantized_gemm does (no shift), in int32 lanes: eight at a
// time, and one at a time for a row's tail (the same arithmetic: a product
// rounded to f32, NaN taken as 0, rounded half to even, clamped).
NNP_PAIRS inline __m256i quantized8(__m256 v, const Quantization& q) {
  v = _mm256_mul_ps(v, _mm256_set1_ps(q.input_inv_scale));
  v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
  v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(q.input_min)), _mm256_set1_ps(127.0f));
  return _mm256_cvtps_epi32(v);
}
int16_t quantized1(float x, const Quantization& q) {
  const float v = x * q.input_inv_scale;
  if (v != v) return 0;
  return static_cast<int16_t>(std::min(std::max(std::nearbyint(v), q.input_min), 127.0f));
}

// Image x [C][H][W] into the int16 buffer, quantized, padding 0.
NNP_PAIRS void quantize_image_pairs(const Header& h, const Input& in, const Quantization& q, const float* x,
                                    int64_t height, int64_t width, int16_t* buf) {
  std::memset(buf, 0, static_cast<size_t>(in.bytes));
  const int64_t c_in = h.in_channels, pad_h = h.padding[0], pad_w = h.padding[1], w8 = width - width % 8;
  if (by_rows(h.layout)) {
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t y = 0; y < height; ++y) {
        const float* src = x + (c * height + y) * width;
        int16_t* dst = buf + (c * in.rows + y + pad_h) * in.cols + pad_w;
        for (int64_t i = 0; i < w8; i += 8) {
          const __m256i v = quantized8(_mm256_loadu_ps(src + i), q);
          const __m128i packed = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), packed);
        }
        for (int64_t i = w8; i < width; ++i) dst[i] = quantized1(src[i], q);
      }
    return;
  }
  // Two channels' values make one 32-bit word per pixel, stored pixel by pixel.
  for (int64_t c = 0; c < in.channels; c += 2)
    for (int64_t y = 0; y < height; ++y) {
      const float* first = x + (c * height + y) * width;
      const float* second = c + 1 < c_in ? first + height * width : nullptr;
      int16_t* dst = buf + ((y + pad_h) * in.cols + pad_w) * in.channels + c;
      for (int64_t i = 0; i < w8; i += 8) {
        const __m256i lo = quantized8(_mm256_loadu_ps(first + i), q);
        const __m256i hi = second ? quantized8(_mm256_loadu_ps(second + i), q) : _mm256_setzero_si256();
        alignas(32) int32_t words[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(words),
                           _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(hi, 16)));
        for (int64_t p = 0; p < 8; ++p) std::memcpy(dst + (i + p) * in.channels, &words[p], 4);
      }
      for (int64_t i = w8; i < width; ++i) {
        dst[i * in.channels] = quantized1(first[i], q);
        dst[i * in.channels + 1] = second ? quantized1(second[i], q) : int16_t{0};
      }
    }
}

// requantized in eight lanes (the pairs need no correction).
NNP_PAIRS inline __m256 requantized8(__m256i sum, const float* scale, const float* bias, const Quantization& q) {
  __m256 s = _mm256_cvtepi32_ps(sum);
  s = _mm256_add_ps(_mm256_mul_ps(s, _mm256_loadu_ps(scale)), _mm256_loadu_ps(bias));
  __m256 v = _mm256_round_ps(_mm256_mul_ps(s, _mm256_set1_ps(q.output_inv_scale)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 zero = _mm256_set1_ps(q.zero_point);
  // vmaxps and vminps return their second operand where either is NaN: v.
  v = _mm256_min_ps(_mm256_set1_ps(q.output_max), _mm256_max_ps(_mm256_set1_ps(q.output_min), _mm256_add_ps(v, zero)));
  return _mm256_mul_ps(_mm256_sub_ps(v, zero), _mm256_set1_ps(q.output_scale));
}

// convolve_image with the pairs: the same order of work, eight lanes.
NNP_PAIRS void convolve_image_pairs(const Call& k, const uint8_t* buf, int32_t* sums, float* y, float* out) {
  const int64_t po = k.padded_out, used_w = k.out_w * k.window_w;
  for (int64_t py = 0; py < k.out_h; ++py) {
    for (int64_t r = 0; r < k.window_h; ++r) {
      const uint8_t* in = buf + (py * k.window_h + r) * k.in.row_step;
      int32_t* dst = sums + r * used_w * po;
      for (int64_t v0 = 0; v0 < k.h.vectors; ++v0) row_pairs(k.tile, in, k.in.pixel_step, used_w, v0, dst, po);
    }
    float* pooled = y + py * k.out_w * po;
    for (int64_t c = 0; c < po; c += 8)
      for (int64_t px = 0; px < k.out_w; ++px) {
        const int32_t* window = sums + px * k.window_w * po + c;
        __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(window));
        for (int64_t r = 0; r < k.window_h; ++r)
          for (int64_t i = 0; i < k.window_w; ++i)
            m = _mm256_max_epi32(m,
                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(window + (r * used_w + i) * po)));
        _mm256_storeu_ps(pooled + px * po + c, requantized8(m, k.scale + c, k.bias + c, k.q));
      }
  }
  transpose_rows_avx2(y, po, k.out_h * k.out_w, k.h.out_channels, out, k.out_h * k.out_w);
}

#endif  // NNP_INT8_TILES

const char* kNotPacked = "quantized_conv2d_packed: packed is not a weight quantized_conv2d_pack wrote";

bool valid_quantization(const nnp_quantized_conv2d_params& q) {
  auto positive = [](float v) { return v > 0 && std::isfinite(v); };
  return q.struct_size >= NNP_QUANTIZED_CONV2D_PARAMS_SIZE_1_22 && positive(q.input_inv_scale) &&
         positive(q.output_scale) && positive(q.output_inv_scale) && q.input_offset_min >= -128 &&
         q.input_offset_min <= 0 && q.output_min >= 0 && q.output_max <= 255 && q.output_min <= q.output_zero_point &&
         q.output_zero_point <= q.output_max;
}

// The first n values of v (f32, any stride) into a buffer of `padded`, the rest 0.
void padded_values(const nnp_view* v, int64_t n, int64_t padded, std::vector<float>& into) {
  into.assign(static_cast<size_t>(padded), 0.f);
  if (!v) return;
  const auto* data = static_cast<const float*>(v->data);
  for (int64_t i = 0; i < n; ++i) into[static_cast<size_t>(i)] = data[i * v->strides[0]];
}

}  // namespace

nnp_status quantized_conv2d_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_conv2d_params* p,
                                 const int64_t* pool, const nnp_view* packed, int64_t* bytes) {
  if (!w || !p || !pool || !bytes)
    return fail(NNP_INVALID_ARGUMENT, "quantized_conv2d_pack: w, p, pool and bytes are required");
  const Header h = header_for(*w, *p, pool);
  if (h.magic != kMagic) {
    *bytes = 0;
    return NNP_OK;
  }
  const int64_t need = packed_bytes(h);
  if (!packed) {
    *bytes = need;
    return NNP_OK;
  }
  if (nnp_status status = check_packed_room(*packed, need, "quantized_conv2d_pack"); status != NNP_OK) return status;
  pack(h, static_cast<const int8_t*>(w->data), static_cast<char*>(packed->data));
  *bytes = need;
  return NNP_OK;
}

nnp_status quantized_conv2d_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* packed,
                                   const nnp_view* scale, const nnp_view* bias, const nnp_quantized_conv2d_params* q,
                                   const nnp_conv2d_params* p, const int64_t* pool, const nnp_view* out) {
  if (!x || !packed || !scale || !q || !p || !pool || !out)
    return fail(NNP_INVALID_ARGUMENT, "quantized_conv2d_packed: x, packed, scale, q, p, pool and out are required");
  Header h{};
  if (packed->dtype != NNP_U8 || packed->ndim != 1 || packed->strides[0] != 1 || packed->shape[0] < kHeaderBytes)
    return fail(NNP_INVALID_ARGUMENT, kNotPacked);
  std::memcpy(&h, packed->data, sizeof h);
  if (h.magic != kMagic || h.layout < kChannelGroups || h.layout > kRowPairs || h.out_channels < 1 ||
      h.out_channels > (int64_t{1} << 24) || h.steps < 1 || h.steps > kMaxTaps ||
      h.vectors != ceil_div(h.out_channels, kLanes) || packed->shape[0] < packed_bytes(h))
    return fail(NNP_INVALID_ARGUMENT, kNotPacked);
  bool same = p->groups == 1 && (p->struct_size < NNP_CONV2D_PARAMS_SIZE_1_18 || p->activation == NNP_ACTIVATION_NONE);
  for (int i = 0; i < 2; ++i)
    same = same && p->stride[i] == h.stride[i] && p->padding[i] == h.padding[i] && p->dilation[i] == h.dilation[i] &&
           pool[i] == h.pool[i];
  if (!same)
    return fail(NNP_INVALID_ARGUMENT,
                "quantized_conv2d_packed: the packed weight was made for another geometry (stride, padding, "
                "dilation or pooling); pack it again for this one");
  if (!valid_quantization(*q))
    return fail(NNP_INVALID_ARGUMENT,
                "quantized_conv2d_packed: q needs positive finite scales, -128 <= input_offset_min <= 0 and "
                "0 <= output_min <= output_zero_point <= output_max <= 255");
  if (x->dtype != NNP_F32 || out->dtype != NNP_F32 || x->ndim != 4 || out->ndim != 4 || !is_contiguous(*x) ||
      !is_contiguous(*out) || x->shape[1] != h.in_channels || out->shape[1] != h.out_channels ||
      out->shape[0] != x->shape[0])
    return fail(NNP_INVALID_ARGUMENT, "quantized_conv2d_packed: x and out must be contiguous f32 [N, " +
                                          std::to_string(h.in_channels) + ", H, W] and [N, " +
                                          std::to_string(h.out_channels) + ", H', W'] for this packed weight");
  const auto channel_vector = [&](const nnp_view* v) {
    return v->dtype == NNP_F32 && v->ndim == 1 && v->shape[0] == h.out_channels;
  };
  if (!channel_vector(scale) || (bias && !channel_vector(bias)))
    return fail(NNP_INVALID_ARGUMENT,
                "quantized_conv2d_packed: scale and bias must be f32 [" + std::to_string(h.out_channels) + "]");
#if NNP_INT8_TILES
  // A weight packed for VNNI needs it; pairs need AVX2 (a VNNI machine runs them too).
  if (in_pairs(h.layout) ? form() == Tier::baseline : form() != Tier::avx512)
    return fail(NNP_UNIMPLEMENTED, in_pairs(h.layout)
                                       ? "quantized_conv2d_packed: this CPU has no AVX2 for this packed weight"
                                       : "quantized_conv2d_packed: this CPU has no AVX512-VNNI for this packed weight");
  Call k{};
  k.h = h;
  k.height = x->shape[2];
  k.width = x->shape[3];
  for (int i = 0; i < 2; ++i) {
    const int64_t span = h.dilation[i] * (h.kernel[i] - 1) + 1, padded = x->shape[2 + i] + 2 * h.padding[i];
    const int64_t size = padded < span ? 0 : (padded - span) / h.stride[i] + 1;
    (i == 0 ? k.conv_h : k.conv_w) = size;
  }
  k.window_h = h.pool[0] ? h.pool[0] : 1;
  k.window_w = h.pool[0] ? h.pool[1] : 1;
  k.out_h = k.conv_h / k.window_h;
  k.out_w = k.conv_w / k.window_w;
  if (k.out_h < 1 || k.out_w < 1 || out->shape[2] != k.out_h || out->shape[3] != k.out_w)
    return fail(NNP_INVALID_ARGUMENT, "quantized_conv2d_packed: out must be [N, " + std::to_string(h.out_channels) +
                                          ", " + std::to_string(std::max<int64_t>(k.out_h, 1)) + ", " +
                                          std::to_string(std::max<int64_t>(k.out_w, 1)) + "] for x");
  k.in = input_for(h, k.height, k.width);
  k.padded_out = h.vectors * kLanes;
  // The caller's scale and bias, padded to whole vectors; the steps' offsets.
  thread_local std::vector<float> scales, biases;
  thread_local std::vector<int64_t> offsets;
  padded_values(scale, h.out_channels, k.padded_out, scales);
  padded_values(bias, h.out_channels, k.padded_out, biases);
  offsets.resize(static_cast<size_t>(h.steps));
  step_offsets(h, k.in, offsets.data());
  k.q = Quantization{q->input_inv_scale,
                     static_cast<float>(q->input_offset_min),
                     q->output_inv_scale,
                     q->output_scale,
                     static_cast<float>(q->output_zero_point),
                     static_cast<float>(q->output_min),
                     static_cast<float>(q->output_max)};
  const char* base = static_cast<const char*>(packed->data);
  k.tile = Tile{offsets.data(), h.steps, h.vectors * 64,
                reinterpret_cast<const int8_t*>(base + kHeaderBytes + correction_bytes(h))};
  k.corrections = reinterpret_cast<const int32_t*>(base + kHeaderBytes);
  k.scale = scales.data();
  k.bias = biases.data();
  const int64_t n = x->shape[0];
  const int64_t in_image = h.in_channels * k.height * k.width, out_image = h.out_channels * k.out_h * k.out_w;
  const int64_t sums_ints = k.window_h * k.out_w * k.window_w * k.padded_out;
  const int64_t y_floats = k.out_h * k.out_w * k.padded_out;
  const auto* xs = static_cast<const float*>(x->data);
  auto* os = static_cast<float*>(out->data);
  parallel_for(n, h.steps * h.vectors * 64 * k.conv_h * k.conv_w, [&](int64_t first, int64_t last) {
    thread_local std::vector<uint8_t> buf;  // grown once, reused by every later call
    thread_local std::vector<int32_t> sums;
    thread_local std::vector<float> y;
    if (buf.size() < static_cast<size_t>(k.in.bytes)) buf.resize(static_cast<size_t>(k.in.bytes));
    if (sums.size() < static_cast<size_t>(sums_ints)) sums.resize(static_cast<size_t>(sums_ints));
    if (y.size() < static_cast<size_t>(y_floats)) y.resize(static_cast<size_t>(y_floats));
    const bool pairs = in_pairs(h.layout);
    for (int64_t i = first; i < last; ++i) {
      if (pairs) {
        quantize_image_pairs(h, k.in, k.q, xs + i * in_image, k.height, k.width,
                             reinterpret_cast<int16_t*>(buf.data()));
        convolve_image_pairs(k, buf.data(), sums.data(), y.data(), os + i * out_image);
      } else {
        quantize_image(h, k.in, k.q, xs + i * in_image, k.height, k.width, buf.data());
        convolve_image(k, buf.data(), sums.data(), y.data(), os + i * out_image);
      }
    }
  });
  return NNP_OK;
#else
  return fail(NNP_UNIMPLEMENTED, "quantized_conv2d_packed: this build has no packed int8 convolutions");
#endif
}

}  // namespace nnp::cpu