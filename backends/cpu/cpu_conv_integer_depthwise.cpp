// ONNX's ConvInteger over one channel a group (a depthwise layer: MobileNet's
// and ShuffleNet's), the packed form of nnp_kernels.conv2d_integer_pack for
// groups = C_out = C_in. Each product of (x - x_zero) and (w - w_zero) is an
// integer of at most 255 * 255, and a window of at most 258 taps sums below
// 2^24: f32 adds them exactly, eight outputs at a time with AVX2, and the
// sums convert to int32 exactly. Each channel's plane is laid out once,
// centred and padded (with 0: the padding adds nothing), and a stride of 2
// along the rows reads it split into its even and odd columns, so every tap
// reads eight neighbouring values. Planes are spread over the threads.
#include "cpu_conv_integer_depthwise.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "cpu_loops.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NNP_DEPTHWISE_AVX2 1
#define NNP_AVX2 __attribute__((target("avx2")))
#endif

namespace nnp::cpu {
namespace {

constexpr uint32_t kMagic = 0x64636e70u;  // "pncd"
constexpr int64_t kMaxTaps = 258;         // 258 * 255 * 255 < 2^24: every f32 sum exact
constexpr int64_t kMaxPadding = 1024;
constexpr int64_t kMaxSize = int64_t{1} << 20;  // stride, dilation

struct Header {
  uint32_t magic;
  int32_t reserved;
  int64_t channels, kernel[2], stride[2], padding[2], dilation[2];
};
constexpr int64_t kHeaderBytes = 128;
static_assert(sizeof(Header) <= kHeaderBytes, "the header fits its slot");

int64_t packed_bytes(const Header& h) { return kHeaderBytes + h.channels * h.kernel[0] * h.kernel[1] * 4; }

int32_t byte_at(const void* data, nnp_dtype d, int64_t i) {
  return d == NNP_U8 ? static_cast<const uint8_t*>(data)[i] : static_cast<const int8_t*>(data)[i];
}

#if NNP_DEPTHWISE_AVX2
// The sizes of one call.
struct Call {
  Header h;
  int64_t height, width, out_h, out_w;
  int64_t rows, cols;  // the padded plane's (cols: of each column plane when split)
  int32_t zero;
  bool signed_x, split;  // split: stride 2 along the rows, the plane as even and odd columns
  const float* weights;
};

// Channel c's plane (x - zero, padded with 0) into buf: [rows][cols], or
// with split the even columns' plane then the odd columns'.
NNP_AVX2 void lay_out(const Call& k, const uint8_t* x, float* buf) {
  const int64_t planes = k.split ? 2 : 1, pad_h = k.h.padding[0], pad_w = k.h.padding[1];
  std::fill(buf, buf + planes * k.rows * k.cols, 0.0f);
  const __m256 zero = _mm256_set1_ps(static_cast<float>(k.zero));
  for (int64_t y = 0; y < k.height; ++y) {
    const uint8_t* src = x + y * k.width;
    float* row = buf + (y + pad_h) * k.cols;
    if (!k.split) {
      int64_t i = 0;
      for (; i + 8 <= k.width; i += 8) {
        const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
        const __m256i words = k.signed_x ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
        _mm256_storeu_ps(row + pad_w + i, _mm256_sub_ps(_mm256_cvtepi32_ps(words), zero));
      }
      for (; i < k.width; ++i)
        row[pad_w + i] = static_cast<float>(byte_at(src, k.signed_x ? NNP_I8 : NNP_U8, i) - k.zero);
      continue;
    }
    for (int64_t i = 0; i < k.width; ++i) {  // padded column q = i + pad_w goes to plane q % 2 at q / 2
      const int64_t q = i + pad_w;
      buf[(q % 2) * k.rows * k.cols + (y + pad_h) * k.cols + q / 2] =
          static_cast<float>(byte_at(src, k.signed_x ? NNP_I8 : NNP_U8, i) - k.zero);
    }
  }
}

// Channel c's outputs from its laid-out plane: out [out_h][out_w] int32.
NNP_AVX2 void convolve_plane(const Call& k, const float* buf, const float* w, float* acc, int32_t* out) {
  const Header& h = k.h;
  for (int64_t oy = 0; oy < k.out_h; ++oy) {
    std::fill(acc, acc + k.out_w, 0.0f);
    for (int64_t i = 0; i < h.kernel[0]; ++i) {
      const int64_t row = oy * h.stride[0] + i * h.dilation[0];
      for (int64_t j = 0; j < h.kernel[1]; ++j) {
        const int64_t col = j * h.dilation[1];  // the tap's column for output 0
        const float* src =
            k.split ? buf + (col % 2) * k.rows * k.cols + row * k.cols + col / 2 : buf + row * k.cols + col;
        const int64_t step = k.split ? 1 : h.stride[1];
        const __m256 wv = _mm256_set1_ps(w[i * h.kernel[1] + j]);
        int64_t x = 0;
        if (step == 1)
          for (; x + 8 <= k.out_w; x += 8)
            _mm256_storeu_ps(acc + x,
                             _mm256_add_ps(_mm256_loadu_ps(acc + x), _mm256_mul_ps(_mm256_loadu_ps(src + x), wv)));
        for (; x < k.out_w; ++x) acc[x] += src[x * step] * w[i * h.kernel[1] + j];
      }
    }
    int32_t* dst = out + oy * k.out_w;
    int64_t x = 0;
    for (; x + 8 <= k.out_w; x += 8)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + x), _mm256_cvtps_epi32(_mm256_loadu_ps(acc + x)));
    for (; x < k.out_w; ++x) dst[x] = static_cast<int32_t>(acc[x]);
  }
}
#endif

}  // namespace

bool is_depthwise(const nnp_view& w, const nnp_conv2d_params& p) {
  return p.groups > 1 && w.ndim == 4 && w.shape[1] == 1 && w.shape[0] == p.groups;
}

nnp_status depthwise_integer_pack(const nnp_view& w, const nnp_view* w_zero, int64_t zeros, const nnp_conv2d_params& p,
                                  const nnp_view* packed, int64_t* bytes) {
  Header h{};
  bool usable = kernel_table().tier != Tier::baseline && is_contiguous(w) && w.shape[0] <= (int64_t{1} << 24) &&
                w.shape[2] >= 1 && w.shape[3] >= 1 && w.shape[2] * w.shape[3] <= kMaxTaps &&
                (zeros == 1 || zeros == w.shape[0]) &&
                (p.struct_size < NNP_CONV2D_PARAMS_SIZE_1_18 || p.activation == NNP_ACTIVATION_NONE);
  for (int i = 0; i < 2 && usable; ++i)
    usable = p.stride[i] >= 1 && p.stride[i] <= kMaxSize && p.dilation[i] >= 1 && p.dilation[i] <= kMaxSize &&
             p.padding[i] >= 0 && p.padding[i] <= std::min(kMaxPadding, p.dilation[i] * (w.shape[2 + i] - 1));
  if (!usable) {
    *bytes = 0;
    return NNP_OK;
  }
  h.magic = kMagic;
  h.channels = w.shape[0];
  for (int i = 0; i < 2; ++i) {
    h.kernel[i] = w.shape[2 + i];
    h.stride[i] = p.stride[i];
    h.padding[i] = p.padding[i];
    h.dilation[i] = p.dilation[i];
  }
  const int64_t need = packed_bytes(h);
  if (!packed) {
    *bytes = need;
    return NNP_OK;
  }
  if (nnp_status status = check_packed_room(*packed, need, "conv2d_integer_pack"); status != NNP_OK) return status;
  char* base = static_cast<char*>(packed->data);
  std::memset(base, 0, kHeaderBytes);
  std::memcpy(base, &h, sizeof h);
  auto* weights = reinterpret_cast<float*>(base + kHeaderBytes);
  const int64_t taps = h.kernel[0] * h.kernel[1];
  for (int64_t c = 0; c < h.channels; ++c) {
    const int32_t zero = w_zero ? byte_at(w_zero->data, w_zero->dtype, zeros == 1 ? 0 : c) : 0;
    for (int64_t t = 0; t < taps; ++t)
      weights[c * taps + t] = static_cast<float>(byte_at(w.data, w.dtype, c * taps + t) - zero);
  }
  *bytes = need;
  return NNP_OK;
}

bool is_depthwise_packed(const nnp_view& packed) {
  uint32_t magic = 0;
  if (packed.dtype != NNP_U8 || packed.ndim != 1 || packed.strides[0] != 1 || packed.shape[0] < kHeaderBytes)
    return false;
  std::memcpy(&magic, packed.data, sizeof magic);
  return magic == kMagic;
}

nnp_status depthwise_integer_packed(const nnp_view& x, int32_t x_zero, const nnp_view& packed,
                                    const nnp_conv2d_params& p, const nnp_view& out) {
  Header h{};
  std::memcpy(&h, packed.data, sizeof h);
  bool valid = h.channels >= 1 && h.channels <= (int64_t{1} << 24) && h.kernel[0] >= 1 && h.kernel[1] >= 1 &&
               h.kernel[0] * h.kernel[1] <= kMaxTaps && packed.shape[0] >= packed_bytes(h);
  for (int i = 0; i < 2 && valid; ++i)
    valid = h.stride[i] >= 1 && h.stride[i] <= kMaxSize && h.dilation[i] >= 1 && h.dilation[i] <= kMaxSize &&
            h.padding[i] >= 0 && h.padding[i] <= kMaxPadding;
  if (!valid)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: packed is not a weight conv2d_integer_pack wrote");
  bool same = p.groups == h.channels;
  for (int i = 0; i < 2; ++i)
    same = same && p.stride[i] == h.stride[i] && p.padding[i] == h.padding[i] && p.dilation[i] == h.dilation[i];
  if (!same)
    return fail(NNP_INVALID_ARGUMENT,
                "conv2d_integer_packed: the packed weight was made for another geometry (groups, stride, padding or "
                "dilation); pack it again for this one");
  if (x.ndim != 4 || out.ndim != 4 || x.shape[1] != h.channels || out.shape[1] != h.channels ||
      out.shape[0] != x.shape[0])
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: x and out must be [N, " + std::to_string(h.channels) +
                                          ", H, W] and [N, " + std::to_string(h.channels) +
                                          ", H', W'] for this depthwise weight");
#if NNP_DEPTHWISE_AVX2
  if (kernel_table().tier == Tier::baseline)
    return fail(NNP_UNIMPLEMENTED, "conv2d_integer_packed: this CPU has no AVX2 for this packed weight");
  Call k{};
  k.h = h;
  k.height = x.shape[2];
  k.width = x.shape[3];
  int64_t sizes[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t span = h.dilation[i] * (h.kernel[i] - 1) + 1, padded = x.shape[2 + i] + 2 * h.padding[i];
    sizes[i] = padded < span ? 0 : (padded - span) / h.stride[i] + 1;
  }
  k.out_h = sizes[0];
  k.out_w = sizes[1];
  if (k.out_h < 1 || k.out_w < 1 || out.shape[2] != k.out_h || out.shape[3] != k.out_w)
    return fail(NNP_INVALID_ARGUMENT, "conv2d_integer_packed: out must be [N, " + std::to_string(h.channels) + ", " +
                                          std::to_string(std::max<int64_t>(k.out_h, 1)) + ", " +
                                          std::to_string(std::max<int64_t>(k.out_w, 1)) + "] for x");
  k.split = h.stride[1] == 2;
  k.rows = k.height + 2 * h.padding[0];
  k.cols = k.split ? (k.width + 2 * h.padding[1] + 1) / 2 + 8 : k.width + 2 * h.padding[1] + 8;
  k.zero = x_zero;
  k.signed_x = x.dtype == NNP_I8;
  k.weights = reinterpret_cast<const float*>(static_cast<const char*>(packed.data) + kHeaderBytes);
  const int64_t planes = x.shape[0] * h.channels, plane_in = k.height * k.width, plane_out = k.out_h * k.out_w;
  const int64_t floats = (k.split ? 2 : 1) * k.rows * k.cols;
  const auto* xs = static_cast<const uint8_t*>(x.data);
  auto* os = static_cast<int32_t*>(out.data);
  const int64_t taps = h.kernel[0] * h.kernel[1];
  parallel_for(planes, plane_out * taps + plane_in, [&](int64_t first, int64_t last) {
    thread_local std::vector<float> buf, acc;  // grown once, reused by every later call
    if (buf.size() < static_cast<size_t>(floats)) buf.resize(static_cast<size_t>(floats));
    if (acc.size() < static_cast<size_t>(k.out_w)) acc.resize(static_cast<size_t>(k.out_w));
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t c = plane % h.channels;
      lay_out(k, xs + plane * plane_in, buf.data());
      convolve_plane(k, buf.data(), k.weights + c * taps, acc.data(), os + plane * plane_out);
    }
  });
  return NNP_OK;
#else
  (void)x_zero;
  return fail(NNP_UNIMPLEMENTED, "conv2d_integer_packed: this build has no packed depthwise integer convolutions");
#endif
}

}  // namespace nnp::cpu
