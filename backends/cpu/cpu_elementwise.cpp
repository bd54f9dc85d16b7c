// copy, fill, unary, binary and where on the CPU.
#include <atomic>
#include <cmath>
#include <cstring>
#include <nnp/elements.hpp>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NNP_ROUND_AVX2 1
#endif

#include "cpu_bf16_vector.hpp"
#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"
#include "cpu_scalar_math.hpp"

namespace nnp::cpu {
namespace {

// ---- unary ----

// Contiguous f32 rounding (half to even, as nearbyint in the default mode)
// eight at a time where the CPU has AVX2: the baseline build calls libm's
// nearbyintf per element, and the integer ONNX ops round every product.
bool round_run(const float* in, float* out, int64_t n);
#if NNP_ROUND_AVX2
__attribute__((target("avx2"))) void round_run_avx2(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_round_ps(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) out[i] = std::nearbyint(in[i]);
}
#endif
bool round_run(const float* in, float* out, int64_t n) {
#if NNP_ROUND_AVX2
  static const bool avx2 = kernel_table().tier != Tier::baseline;
  if (avx2) {
    round_run_avx2(in, out, n);
    return true;
  }
#endif
  (void)in, (void)out, (void)n;
  return false;
}

// The op is a template argument so each inner loop is specialised.
template <typename T, nnp_unary_op Op>
void unary_loop(const nnp_view* x, const nnp_view* out, int64_t cost) {
  using Tr = Traits<T>;
  const nnp_view* views[2] = {out, x};
  for_each_run<2>(views, cost, [](const Run<2>& r, int64_t n) {
    T* o = reinterpret_cast<T*>(r.ptr[0]);
    const T* in = reinterpret_cast<const T*>(r.ptr[1]);
    const int64_t so = r.stride[0], si = r.stride[1];
    if (so == 1 && si == 1) {
      if constexpr (std::is_same_v<T, BFloat16> && Op == NNP_UNARY_RELU)
        if (bf16_relu_run(reinterpret_cast<const uint16_t*>(in), reinterpret_cast<uint16_t*>(o), n)) return;
      if constexpr (std::is_same_v<T, float> && Op == NNP_UNARY_ROUND)
        if (round_run(in, o, n)) return;
      for (int64_t i = 0; i < n; ++i) o[i] = Tr::store(unary_value(Op, Tr::load(in[i])));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * so] = Tr::store(unary_value(Op, Tr::load(in[i * si])));
    }
  });
}

template <typename T>
void unary_typed(nnp_unary_op op, const nnp_view* x, const nnp_view* out) {
  switch (op) {
#define NNP_UNARY_CASE(OP, COST) \
  case OP: unary_loop<T, OP>(x, out, COST); return;
    NNP_UNARY_CASE(NNP_UNARY_NEG, 1)
    NNP_UNARY_CASE(NNP_UNARY_ABS, 1)
    NNP_UNARY_CASE(NNP_UNARY_RELU, 1)
    NNP_UNARY_CASE(NNP_UNARY_SIGN, 1)
    default:
      if constexpr (is_floating_v<T>) {
        switch (op) {
          NNP_UNARY_CASE(NNP_UNARY_EXP, 8)
          NNP_UNARY_CASE(NNP_UNARY_LOG, 8)
          NNP_UNARY_CASE(NNP_UNARY_SQRT, 4)
          NNP_UNARY_CASE(NNP_UNARY_RSQRT, 4)
          NNP_UNARY_CASE(NNP_UNARY_SIN, 8)
          NNP_UNARY_CASE(NNP_UNARY_COS, 8)
          NNP_UNARY_CASE(NNP_UNARY_TANH, 8)
          NNP_UNARY_CASE(NNP_UNARY_SIGMOID, 8)
          NNP_UNARY_CASE(NNP_UNARY_GELU, 8)
          NNP_UNARY_CASE(NNP_UNARY_SILU, 8)
          NNP_UNARY_CASE(NNP_UNARY_ERF, 8)
          NNP_UNARY_CASE(NNP_UNARY_ROUND, 1)
          default: return;
        }
      }
#undef NNP_UNARY_CASE
  }
}

// ---- binary ----

template <typename T, typename R, typename F>
void binary_loop(const nnp_view* a, const nnp_view* b, const nnp_view* out, F f) {
  using Tr = Traits<T>;
  const nnp_view* views[3] = {out, a, b};
  for_each_run<3>(views, 1, [f](const Run<3>& r, int64_t n) {
    R* o = reinterpret_cast<R*>(r.ptr[0]);
    const T* x = reinterpret_cast<const T*>(r.ptr[1]);
    const T* y = reinterpret_cast<const T*>(r.ptr[2]);
    const int64_t so = r.stride[0], sx = r.stride[1], sy = r.stride[2];
    if (so == 1 && sx == 1 && sy == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(Tr::load(x[i]), Tr::load(y[i]));
    } else if (so == 1 && sx == 1 && sy == 0) {
      const auto yv = Tr::load(y[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(Tr::load(x[i]), yv);
    } else if (so == 1 && sx == 0 && sy == 1) {
      const auto xv = Tr::load(x[0]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, Tr::load(y[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i * so] = f(Tr::load(x[i * sx]), Tr::load(y[i * sy]));
    }
  });
}

template <typename T, nnp_binary_op Op>
void arithmetic_op(const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  using C = typename Traits<T>::compute;
  if constexpr (std::is_same_v<T, BFloat16> && Op <= NNP_BINARY_DIV) {
    // Contiguous bf16 runs (autocast's) in AVX-512 where the CPU has it.
    const nnp_view* views[3] = {out, a, b};
    for_each_run<3>(views, 1, [](const Run<3>& r, int64_t n) {
      const auto* x = reinterpret_cast<const uint16_t*>(r.ptr[1]);
      const auto* y = reinterpret_cast<const uint16_t*>(r.ptr[2]);
      auto* o = reinterpret_cast<uint16_t*>(r.ptr[0]);
      if (r.stride[0] == 1 && r.stride[1] == 1 && (r.stride[2] == 1 || r.stride[2] == 0) &&
          bf16_arithmetic_run(Op, x, y, r.stride[2], o, n))
        return;
      using B = Traits<BFloat16>;
      for (int64_t i = 0; i < n; ++i)
        reinterpret_cast<BFloat16*>(o)[i * r.stride[0]] =
            B::store(arithmetic(Op, B::load(reinterpret_cast<const BFloat16*>(x)[i * r.stride[1]]),
                                B::load(reinterpret_cast<const BFloat16*>(y)[i * r.stride[2]])));
    });
    return;
  }
  binary_loop<T, T>(a, b, out, [](C x, C y) { return Traits<T>::store(arithmetic(Op, x, y)); });
}

template <typename T, nnp_binary_op Op>
void comparison_op(const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  using C = typename Traits<T>::compute;
  binary_loop<T, bool>(a, b, out, [](C x, C y) { return elements::compare(Op, x, y); });
}

template <typename T>
nnp_status binary_typed(nnp_binary_op op, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  switch (op) {
    case NNP_BINARY_EQ: comparison_op<T, NNP_BINARY_EQ>(a, b, out); return NNP_OK;
    case NNP_BINARY_NE: comparison_op<T, NNP_BINARY_NE>(a, b, out); return NNP_OK;
    case NNP_BINARY_LT: comparison_op<T, NNP_BINARY_LT>(a, b, out); return NNP_OK;
    case NNP_BINARY_LE: comparison_op<T, NNP_BINARY_LE>(a, b, out); return NNP_OK;
    case NNP_BINARY_GT: comparison_op<T, NNP_BINARY_GT>(a, b, out); return NNP_OK;
    case NNP_BINARY_GE: comparison_op<T, NNP_BINARY_GE>(a, b, out); return NNP_OK;
    case NNP_BINARY_MAXIMUM: arithmetic_op<T, NNP_BINARY_MAXIMUM>(a, b, out); return NNP_OK;
    case NNP_BINARY_MINIMUM: arithmetic_op<T, NNP_BINARY_MINIMUM>(a, b, out); return NNP_OK;
    default: break;
  }
  if constexpr (!std::is_same_v<T, bool>) {
    switch (op) {
      case NNP_BINARY_ADD: arithmetic_op<T, NNP_BINARY_ADD>(a, b, out); return NNP_OK;
      case NNP_BINARY_SUB: arithmetic_op<T, NNP_BINARY_SUB>(a, b, out); return NNP_OK;
      case NNP_BINARY_MUL: arithmetic_op<T, NNP_BINARY_MUL>(a, b, out); return NNP_OK;
      case NNP_BINARY_DIV: arithmetic_op<T, NNP_BINARY_DIV>(a, b, out); return NNP_OK;
      case NNP_BINARY_POW:
        if constexpr (!is_floating_v<T> && std::is_signed_v<T>) {
          // Negative integer exponents have no integer result.
          std::atomic<bool> negative{false};
          const nnp_view* views[1] = {b};
          for_each_run<1>(views, 1, [&negative](const Run<1>& r, int64_t n) {
            const T* e = reinterpret_cast<const T*>(r.ptr[0]);
            for (int64_t i = 0; i < n; ++i)
              if (e[i * r.stride[0]] < 0) negative.store(true, std::memory_order_relaxed);
          });
          if (negative) return fail(NNP_INVALID_ARGUMENT, "pow: integers cannot be raised to negative integer powers");
        }
        arithmetic_op<T, NNP_BINARY_POW>(a, b, out);
        return NNP_OK;
      default: break;
    }
  }
  return fail(NNP_UNIMPLEMENTED, "cpu: binary op " + std::to_string(op) + " is not defined for this dtype");
}

}  // namespace

nnp_status copy(const nnp_kernel_ctx*, const nnp_view* src, const nnp_view* dst) {
  const nnp_view* views[2] = {dst, src};
  if (src->dtype == dst->dtype) {
    const size_t size = element_size(src->dtype);
    for_each_run<2>(views, 1, [size](const Run<2>& r, int64_t n) {
      if (r.stride[0] == 1 && r.stride[1] == 1) {
        std::memcpy(r.ptr[0], r.ptr[1], static_cast<size_t>(n) * size);
        return;
      }
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(r.ptr[0] + i * r.stride[0] * size, r.ptr[1] + i * r.stride[1] * size, size);
    });
    return NNP_OK;
  }
  dispatch(src->dtype, [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    dispatch(dst->dtype, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      for_each_run<2>(views, 1, [](const Run<2>& r, int64_t n) {
        D* o = reinterpret_cast<D*>(r.ptr[0]);
        const S* in = reinterpret_cast<const S*>(r.ptr[1]);
        if (r.stride[0] == 1 && r.stride[1] == 1) {  // the common cast (autocast's)
          // (The casts keep the calls valid for every S and D: clang checks
          // these branches even where the condition is false.)
          if constexpr (std::is_same_v<S, float> && std::is_same_v<D, BFloat16>)
            if (f32_to_bf16_run(reinterpret_cast<const float*>(in), reinterpret_cast<uint16_t*>(o), n)) return;
          if constexpr (std::is_same_v<S, BFloat16> && std::is_same_v<D, float>)
            if (bf16_to_f32_run(reinterpret_cast<const uint16_t*>(in), reinterpret_cast<float*>(o), n)) return;
          for (int64_t i = 0; i < n; ++i) o[i] = convert<D>(Traits<S>::load(in[i]));
          return;
        }
        for (int64_t i = 0; i < n; ++i) o[i * r.stride[0]] = convert<D>(Traits<S>::load(in[i * r.stride[1]]));
      });
    });
  });
  return NNP_OK;
}

nnp_status fill(const nnp_kernel_ctx*, const nnp_view* dst, double value) {
  dispatch(dst->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = convert<T>(value);
    const nnp_view* views[1] = {dst};
    for_each_run<1>(views, 1, [v](const Run<1>& r, int64_t n) {
      T* o = reinterpret_cast<T*>(r.ptr[0]);
      for (int64_t i = 0; i < n; ++i) o[i * r.stride[0]] = v;
    });
  });
  return NNP_OK;
}

nnp_status unary(const nnp_kernel_ctx*, nnp_unary_op op, const nnp_view* x, const nnp_view* out) {
  dispatch(x->dtype, [&](auto tag) { unary_typed<typename decltype(tag)::type>(op, x, out); });
  return NNP_OK;
}

nnp_status binary(const nnp_kernel_ctx*, nnp_binary_op op, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  return dispatch(a->dtype,
                  [&](auto tag) -> nnp_status { return binary_typed<typename decltype(tag)::type>(op, a, b, out); });
}

namespace {

// where() only moves elements, so it is typed by element size alone. A mask
// instead of a branch: on random conditions (ReLU's backward) a branch is
// mispredicted half the time and costs ten times the loop.
// For GCC to vectorise the loop: a broadcast scalar is read once, before
// it (read through its pointer, it might alias out), and the condition is
// read as bytes clamped to 1 (it does not widen a bool compare).
template <typename Word, typename StepA, typename StepB>
void where_run(const bool* cond, const Word* __restrict a, const Word* __restrict b, Word* __restrict out, int64_t n,
               StepA, StepB) {
  const auto* __restrict c = reinterpret_cast<const uint8_t*>(cond);
  const Word a0 = a[0], b0 = b[0];
  for (int64_t i = 0; i < n; ++i) {
    const Word mask = Word(0) - Word(std::min<uint8_t>(c[i], 1));
    const Word x = StepA::value ? a[i] : a0, y = StepB::value ? b[i] : b0;
    out[i] = (x & mask) | (y & ~mask);
  }
}

template <typename Word>
void where_loop(const nnp_view* const (&views)[4]) {
  using Unit = std::integral_constant<int64_t, 1>;
  using Scalar = std::integral_constant<int64_t, 0>;
  for_each_run<4>(views, 1, [](const Run<4>& r, int64_t n) {
    const bool* c = reinterpret_cast<const bool*>(r.ptr[1]);
    const Word* a = reinterpret_cast<const Word*>(r.ptr[2]);
    const Word* b = reinterpret_cast<const Word*>(r.ptr[3]);
    Word* out = reinterpret_cast<Word*>(r.ptr[0]);
    const int64_t sa = r.stride[2], sb = r.stride[3];
    // Unit strides and broadcast scalars (where(mask, g, 0)) vectorise.
    if (r.stride[0] == 1 && r.stride[1] == 1 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
      if (sa == 1 && sb == 1) return where_run(c, a, b, out, n, Unit(), Unit());
      if (sa == 1) return where_run(c, a, b, out, n, Unit(), Scalar());
      if (sb == 1) return where_run(c, a, b, out, n, Scalar(), Unit());
      return where_run(c, a, b, out, n, Scalar(), Scalar());
    }
    for (int64_t i = 0; i < n; ++i) {
      const Word mask = Word(0) - Word(c[i * r.stride[1]] != 0);
      out[i * r.stride[0]] = (a[i * sa] & mask) | (b[i * sb] & ~mask);
    }
  });
}

}  // namespace

nnp_status where(const nnp_kernel_ctx*, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                 const nnp_view* out) {
  const nnp_view* views[4] = {out, cond, a, b};
  switch (element_size(out->dtype)) {
    case 1: where_loop<uint8_t>(views); break;
    case 2: where_loop<uint16_t>(views); break;
    case 4: where_loop<uint32_t>(views); break;
    default: where_loop<uint64_t>(views); break;
  }
  return NNP_OK;
}

}  // namespace nnp::cpu
