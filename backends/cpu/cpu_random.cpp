// Philox draws on the CPU: element i depends only on its counter, so the
// thread split does not change the numbers (nnp/philox.h).
#include <immintrin.h>
#include <nnp/philox.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

// Words 0 and 1 (all a uniform draw uses) for counters first .. first+n-1,
// one counter at a time (the tail of the AVX2 loop, and CPUs without it).
void uniform_words_scalar(uint64_t first, int64_t n, uint64_t seed, uint32_t* w0, uint32_t* w1) {
  for (int64_t i = 0; i < n; ++i) {
    const nnp_philox_words r = nnp_philox4x32_10(first + static_cast<uint64_t>(i), seed);
    w0[i] = r.w[0];
    w1[i] = r.w[1];
  }
}

#define NNP_AVX2 __attribute__((target("avx2")))

// Each lane's 32 x 32 -> 64-bit product with m, split into its low and
// high words: the even lanes' products from one vpmuludq, the odd lanes'
// from another.
NNP_AVX2 inline void mulhilo8(__m256i x, __m256i m, __m256i* lo, __m256i* hi) {
  const __m256i even = _mm256_mul_epu32(x, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// nnp_philox4x32_10 for eight counters at a time, written out in AVX2: the
// compiler's own vectorisation of the scalar loop ran at 14 ns a counter on
// the 2-core Zen machine, a fifth of W7's step (dropout's masks). Integer
// operations only, so the words are those of the scalar definition, bit for
// bit (the conformance kit's random family checks against reference).
NNP_AVX2 void uniform_words_avx2(uint64_t first, int64_t n, uint64_t seed, uint32_t* w0, uint32_t* w1) {
  const __m256i m0 = _mm256_set1_epi64x(0xD2511F53u), m1 = _mm256_set1_epi64x(0xCD9E8D57u);
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t base = first + static_cast<uint64_t>(i);
    // Counter words: the low word is base's plus the lane; the high word
    // carries where the low one wrapped past 2^32 (low < base's, unsigned:
    // compared as signed with the sign bits flipped).
    const __m256i base_low = _mm256_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(base)));
    const __m256i low = _mm256_add_epi32(base_low, lanes), sign = _mm256_set1_epi32(INT32_MIN);
    const __m256i wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(base_low, sign), _mm256_xor_si256(low, sign));
    __m256i c0 = low, c1 = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int32_t>(base >> 32)), wrapped);
    __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      __m256i lo0, hi0, lo1, hi1;
      mulhilo8(c0, m0, &lo0, &hi0);
      mulhilo8(c2, m1, &lo1, &hi1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c1 = lo1;
      c3 = lo0;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(w0 + i), c0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(w1 + i), c1);
  }
  uniform_words_scalar(first + static_cast<uint64_t>(i), n - i, seed, w0 + i, w1 + i);
}

#define NNP_AVX512 __attribute__((target("avx512f,avx512dq")))
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12 flags the undefined pass-through vectors inside its own AVX-512
// shift and shuffle intrinsics as maybe-uninitialized (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// mulhilo8 on sixteen lanes. The moves between a product's words and its
// lane are word swaps merged under a mask (one shuffle each instead of a
// shift and a blend: the rounds are bound by the vector ports, not the
// multiplier).
NNP_AVX512 inline void mulhilo16(__m512i x, __m512i m, __m512i* lo, __m512i* hi) {
  const __m512i even = _mm512_mul_epu32(x, m), odd = _mm512_mul_epu32(_mm512_shuffle_epi32(x, _MM_PERM_CDAB), m);
  *lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CDAB);
  *hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_CDAB);
}

// Words 0 and 1 of the sixteen counters base .. base+15: the AVX2 loop's
// rounds on twice the lanes (W7's dropout draws 4 M numbers a step: the
// eight-lane version took a fifth of its bf16 step).
NNP_AVX512 inline void philox16(uint64_t base, uint64_t seed, __m512i* w0, __m512i* w1) {
  const __m512i m0 = _mm512_set1_epi64(0xD2511F53u), m1 = _mm512_set1_epi64(0xCD9E8D57u);
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i base_low = _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(base)));
  const __m512i low = _mm512_add_epi32(base_low, lanes);
  const __mmask16 wrapped = _mm512_cmplt_epu32_mask(low, base_low);  // the low word passed 2^32
  const __m512i high = _mm512_set1_epi32(static_cast<int32_t>(base >> 32));
  __m512i c0 = low, c1 = _mm512_mask_add_epi32(high, wrapped, high, _mm512_set1_epi32(1));
  __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    __m512i lo0, hi0, lo1, hi1;
    mulhilo16(c0, m0, &lo0, &hi0);
    mulhilo16(c2, m1, &lo1, &hi1);
    c0 = _mm512_ternarylogic_epi32(hi1, c1, _mm512_set1_epi32(static_cast<int>(k0)), 0x96);  // three-way xor
    c2 = _mm512_ternarylogic_epi32(hi0, c3, _mm512_set1_epi32(static_cast<int>(k1)), 0x96);
    c1 = lo1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  *w0 = c0;
  *w1 = c1;
}

NNP_AVX512 void uniform_words_avx512(uint64_t first, int64_t n, uint64_t seed, uint32_t* w0, uint32_t* w1) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i c0, c1;
    philox16(first + static_cast<uint64_t>(i), seed, &c0, &c1);
    _mm512_storeu_si512(w0 + i, c0);
    _mm512_storeu_si512(w1 + i, c1);
  }
  uniform_words_scalar(first + static_cast<uint64_t>(i), n - i, seed, w0 + i, w1 + i);
}

// nnp_philox_uniform of eight counters' words (as 64-bit lanes), then
// a + (b - a) u rounded twice as NNP_PHILOX_ADD/MUL: the 53 bits convert
// exactly, so each lane is the scalar definition's double.
NNP_AVX512 inline __m512d uniform8(__m256i w0, __m256i w1, __m512d a, __m512d width) {
  const __m512i hi = _mm512_cvtepu32_epi64(w0), lo = _mm512_cvtepu32_epi64(w1);
  const __m512i bits = _mm512_and_si512(_mm512_xor_si512(_mm512_slli_epi64(hi, 21), _mm512_srli_epi64(lo, 11)),
                                        _mm512_set1_epi64((int64_t{1} << 53) - 1));
  const __m512d u = _mm512_mul_pd(_mm512_cvtepu64_pd(bits), _mm512_set1_pd(1.0 / 9007199254740992.0));
  return _mm512_add_pd(a, _mm512_mul_pd(width, u));
}

// Uniform floats for counters first .. first+n-1 straight into data: the
// draws, the doubles and their rounding to float all in registers.
NNP_AVX512 void uniform_floats_avx512(float* data, uint64_t first, int64_t n, uint64_t seed, double a, double b) {
  const __m512d va = _mm512_set1_pd(a), width = _mm512_set1_pd(b - a);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i c0, c1;
    philox16(first + static_cast<uint64_t>(i), seed, &c0, &c1);
    const __m256 low = _mm512_cvtpd_ps(
        uniform8(_mm512_castsi512_si256(c0), _mm512_castsi512_si256(c1), va, width));
    const __m256 high = _mm512_cvtpd_ps(
        uniform8(_mm512_extracti64x4_epi64(c0, 1), _mm512_extracti64x4_epi64(c1, 1), va, width));
    _mm256_storeu_ps(data + i, low);
    _mm256_storeu_ps(data + i + 8, high);
  }
  for (; i < n; ++i)
    data[i] = static_cast<float>(nnp_philox_value(NNP_RANDOM_UNIFORM, seed, first + static_cast<uint64_t>(i), a, b));
}

bool has_avx512() {
  static const bool yes = kernel_table().random == Tier::avx512;
  return yes;
}

void uniform_words(uint64_t first, int64_t n, uint64_t seed, uint32_t* w0, uint32_t* w1) {
  static const bool avx2 = kernel_table().random == Tier::avx2;
  if (has_avx512())
    uniform_words_avx512(first, n, seed, w0, w1);
  else if (avx2)
    uniform_words_avx2(first, n, seed, w0, w1);
  else
    uniform_words_scalar(first, n, seed, w0, w1);
}

template <typename T>
void uniform_range(T* data, int64_t begin, int64_t end, uint64_t seed, uint64_t offset, double a, double b) {
  if constexpr (std::is_same_v<T, float>) {
    if (has_avx512()) return uniform_floats_avx512(data + begin, offset + static_cast<uint64_t>(begin), end - begin, seed, a, b);
  }
  constexpr int64_t kBlock = 256;
  uint32_t w0[kBlock], w1[kBlock];
  for (int64_t first = begin; first < end; first += kBlock) {
    const int64_t n = std::min(kBlock, end - first);
    uniform_words(offset + static_cast<uint64_t>(first), n, seed, w0, w1);
    for (int64_t j = 0; j < n; ++j) {
      nnp_philox_words r{};
      r.w[0] = w0[j];
      r.w[1] = w1[j];
      data[first + j] =
          convert<T>(NNP_PHILOX_ADD(a, NNP_PHILOX_MUL(b - a, nnp_philox_uniform(r))));  // as nnp_philox_value
    }
  }
}

}  // namespace

nnp_status random(const nnp_kernel_ctx*, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                  const nnp_view* out) {
  dispatch(out->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = static_cast<T*>(out->data);
    parallel_for(view_numel(*out), 16, [&](int64_t begin, int64_t end) {
      if (kind == NNP_RANDOM_UNIFORM) return uniform_range(data, begin, end, seed, offset, a, b);
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t counter = offset + static_cast<uint64_t>(i);
        if (kind == NNP_RANDOM_INT)
          data[i] = convert<T>(
              nnp_philox_int(nnp_philox4x32_10(counter, seed), static_cast<int64_t>(a), static_cast<int64_t>(b)));
        else
          data[i] = convert<T>(nnp_philox_value(kind, seed, counter, a, b));
      }
    });
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
