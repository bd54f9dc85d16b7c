// A chain of elementwise ops in one pass (nnp_kernels.elementwise_chain):
// the output is computed in blocks that stay in L1, each step over the whole
// block before the next, so memory is read once per input and written once,
// instead of once per op. Each element is what the unary and binary kernels
// compute (cpu_scalar_math.hpp), so a chain equals its ops one at a time.
#include <algorithm>
#include <vector>

#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"
#include "cpu_scalar_math.hpp"
#include "cpu_vector_math.hpp"

namespace nnp::cpu {
namespace {

// Elements per block: 16 operands of 1 KB fit L1 with the steps' results.
constexpr int64_t kBlock = 256;

// The ops a step may be, each loop specialised on its op.
template <nnp_unary_op Op>
__attribute__((always_inline)) inline void unary_block(const float* a, float* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = unary_value<float>(Op, a[j]);
}

// exp and the functions made of it, N lanes at a time (cpu_vector_math.hpp:
// within 2 ulp of libm's, which the unary kernel calls per element).
template <int N, typename F>
__attribute__((always_inline)) inline void vector_block(const float* a, float* out, int64_t n, F f) {
  using V = typename vmath::Vec<N>::f;
  int64_t j = 0;
  for (; j + N <= n; j += N) vmath::store(out + j, f(vmath::load<V>(a + j)));
  if (j < n) {
    float lanes[N] = {};
    std::copy(a + j, a + n, lanes);
    vmath::store(lanes, f(vmath::load<V>(lanes)));
    std::copy(lanes, lanes + (n - j), out + j);
  }
}

template <nnp_binary_op Op>
__attribute__((always_inline)) inline void binary_block(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = arithmetic<float>(Op, a[j], b[j]);
}

// Each compiled for the widest vectors the CPU has (NNP_CPU_CLONES; the
// blocks inline into every build), the vector functions at the build's width.
template <int N>
NNP_CPU_INLINE void run_unary_body(nnp_unary_op op, const float* a, float* out, int64_t n) {
  switch (op) {
#define NNP_CHAIN_UNARY(OP) \
  case OP: unary_block<OP>(a, out, n); return;
    NNP_CHAIN_UNARY(NNP_UNARY_NEG)
    NNP_CHAIN_UNARY(NNP_UNARY_ABS)
    case NNP_UNARY_EXP: vector_block<N>(a, out, n, [](auto v) { return vmath::exp(v); }); return;
    case NNP_UNARY_SIGMOID: vector_block<N>(a, out, n, [](auto v) { return vmath::sigmoid(v); }); return;
    case NNP_UNARY_TANH: vector_block<N>(a, out, n, [](auto v) { return vmath::tanh(v); }); return;
    case NNP_UNARY_SILU:
      vector_block<N>(a, out, n, [](auto v) { return vmath::silu(v); });
      return;
      NNP_CHAIN_UNARY(NNP_UNARY_LOG)
      NNP_CHAIN_UNARY(NNP_UNARY_SQRT)
      NNP_CHAIN_UNARY(NNP_UNARY_RSQRT)
      NNP_CHAIN_UNARY(NNP_UNARY_SIN)
      NNP_CHAIN_UNARY(NNP_UNARY_COS)
      NNP_CHAIN_UNARY(NNP_UNARY_RELU)
      NNP_CHAIN_UNARY(NNP_UNARY_GELU)
      NNP_CHAIN_UNARY(NNP_UNARY_ERF)
      NNP_CHAIN_UNARY(NNP_UNARY_ROUND)
      NNP_CHAIN_UNARY(NNP_UNARY_SIGN)
#undef NNP_CHAIN_UNARY
    default: return;  // refused before the chain runs
  }
}

NNP_CPU_CLONES_BY_WIDTH(void, run_unary, (nnp_unary_op op, const float* a, float* out, int64_t n), (op, a, out, n),
                        run_unary_body)

NNP_CPU_INLINE void run_binary_body(nnp_binary_op op, const float* a, const float* b, float* out, int64_t n) {
  switch (op) {
    case NNP_BINARY_ADD: binary_block<NNP_BINARY_ADD>(a, b, out, n); return;
    case NNP_BINARY_SUB: binary_block<NNP_BINARY_SUB>(a, b, out, n); return;
    case NNP_BINARY_MUL: binary_block<NNP_BINARY_MUL>(a, b, out, n); return;
    case NNP_BINARY_DIV: binary_block<NNP_BINARY_DIV>(a, b, out, n); return;
    case NNP_BINARY_MAXIMUM: binary_block<NNP_BINARY_MAXIMUM>(a, b, out, n); return;
    default: binary_block<NNP_BINARY_MINIMUM>(a, b, out, n); return;
  }
}
NNP_CPU_CLONES(void, run_binary, (nnp_binary_op op, const float* a, const float* b, float* out, int64_t n),
               (op, a, b, out, n), run_binary_body)

bool contiguous_like(const nnp_view& v, const nnp_view& out) {
  int64_t expected = 1;
  for (int32_t d = out.ndim - 1; d >= 0; --d) {
    if (out.shape[d] != 1 && v.strides[d] != expected) return false;
    expected *= out.shape[d];
  }
  return true;
}

// Elements [start, start + n) of v (shaped as out, in out's row-major
// order) into dst, a run along the last dimension at a time: a row that is
// contiguous is copied, one broadcast along it is filled.
void gather(const nnp_view& v, int64_t start, int64_t n, float* dst) {
  const float* base = static_cast<const float*>(v.data);
  if (v.ndim == 0) {
    std::fill(dst, dst + n, base[0]);
    return;
  }
  const int32_t last = v.ndim - 1;
  const int64_t row = v.shape[last], stride = v.strides[last];
  int64_t index[NNP_MAX_DIMS] = {};
  int64_t offset = 0, rest = start / row;
  for (int32_t d = last - 1; d >= 0; --d) {
    index[d] = rest % v.shape[d];
    rest /= v.shape[d];
    offset += index[d] * v.strides[d];
  }
  int64_t at = start % row;  // position in the current row
  for (int64_t done = 0; done < n;) {
    const int64_t run = std::min(row - at, n - done);
    const float* src = base + offset + at * stride;
    if (stride == 1)
      std::copy(src, src + run, dst + done);
    else if (stride == 0)
      std::fill(dst + done, dst + done + run, *src);
    else
      for (int64_t j = 0; j < run; ++j) dst[done + j] = src[j * stride];
    done += run;
    at = 0;
    for (int32_t d = last - 1; d >= 0; --d) {  // the next row
      offset += v.strides[d];
      if (++index[d] < v.shape[d]) break;
      offset -= v.strides[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace

nnp_status elementwise_chain(const nnp_kernel_ctx*, const nnp_view* const* inputs, int32_t n_inputs,
                             const nnp_elementwise_step* steps, int32_t n_steps, const nnp_view* out) {
  if (n_inputs < 1 || n_inputs > 16 || n_steps < 1 || n_steps > 64 || out->dtype != NNP_F32)
    return fail(NNP_INVALID_ARGUMENT, "elementwise_chain: expects 1 to 16 f32 inputs, 1 to 64 steps and an f32 out");
  for (int32_t i = 0; i < n_inputs; ++i)
    if (inputs[i]->dtype != NNP_F32 || inputs[i]->ndim != out->ndim)
      return fail(NNP_INVALID_ARGUMENT, "elementwise_chain: every input is an f32 view shaped as out");
  for (int32_t s = 0; s < n_steps; ++s) {
    const nnp_elementwise_step& st = steps[s];
    const bool unary = st.kind == NNP_STEP_UNARY;
    const bool known = unary ? st.op >= 0 && st.op < NNP_UNARY_COUNT
                             : st.kind == NNP_STEP_BINARY && st.op >= NNP_BINARY_ADD && st.op <= NNP_BINARY_MINIMUM &&
                                   st.op != NNP_BINARY_POW;
    if (!known || st.a < 0 || st.a >= n_inputs + s || (!unary && (st.b < 0 || st.b >= n_inputs + s)))
      return fail(NNP_INVALID_ARGUMENT, "elementwise_chain: step " + std::to_string(s) +
                                            " names an unknown op or an operand that is not an input or earlier step");
  }
  const int64_t total = view_numel(*out);
  float* result = static_cast<float*>(out->data);
  const int64_t blocks = (total + kBlock - 1) / kBlock;
  // An input whose block is the same in every block (one value, or a last
  // dimension that divides the block and is all that varies: a bias row)
  // is laid out once per thread.
  bool repeats[16];
  for (int32_t i = 0; i < n_inputs; ++i) {
    const nnp_view& v = *inputs[i];
    bool one_value = true;  // a scalar broadcast to out's shape (Clip's bounds)
    for (int32_t d = 0; d < v.ndim; ++d) one_value = one_value && (v.shape[d] == 1 || v.strides[d] == 0);
    bool periodic = one_value || (kBlock % v.shape[v.ndim - 1] == 0 && total % v.shape[v.ndim - 1] == 0);
    for (int32_t d = 0; periodic && d + 1 < v.ndim; ++d) periodic = v.shape[d] == 1 || v.strides[d] == 0;
    repeats[i] = periodic && !contiguous_like(v, *out);
  }
  // A vector step costs about an eighth of the scalar op parallel_for's
  // grain assumes (a block in L1); libm's functions, per element, more.
  int64_t cost = 0;
  for (int32_t s = 0; s < n_steps; ++s) {
    const int32_t op = steps[s].op;
    const bool scalar =
        steps[s].kind == NNP_STEP_UNARY && (op == NNP_UNARY_LOG || op == NNP_UNARY_SIN || op == NNP_UNARY_COS ||
                                            op == NNP_UNARY_GELU || op == NNP_UNARY_ERF);
    cost += scalar ? 8 * kBlock : kBlock / 8;
  }
  parallel_for(blocks, cost, [&](int64_t first, int64_t last) {
    thread_local std::vector<float> scratch;
    const size_t need = static_cast<size_t>((n_inputs + n_steps) * kBlock);
    if (scratch.size() < need) scratch.resize(need);
    const float* operand[16 + 64];
    for (int32_t i = 0; i < n_inputs; ++i)
      if (repeats[i]) {
        float* buffer = scratch.data() + static_cast<size_t>(i) * kBlock;
        gather(*inputs[i], 0, std::min(kBlock, total), buffer);
        operand[i] = buffer;
      }
    for (int64_t blk = first; blk < last; ++blk) {
      const int64_t start = blk * kBlock, n = std::min(kBlock, total - start);
      for (int32_t i = 0; i < n_inputs; ++i) {
        const nnp_view& v = *inputs[i];
        if (repeats[i]) continue;
        if (contiguous_like(v, *out)) {
          operand[i] = static_cast<const float*>(v.data) + start;
        } else {
          float* buffer = scratch.data() + static_cast<size_t>(i) * kBlock;
          gather(v, start, n, buffer);
          operand[i] = buffer;
        }
      }
      for (int32_t s = 0; s < n_steps; ++s) {
        float* dst = s == n_steps - 1 ? result + start : scratch.data() + static_cast<size_t>(n_inputs + s) * kBlock;
        const nnp_elementwise_step& st = steps[s];
        if (st.kind == NNP_STEP_UNARY)
          run_unary(static_cast<nnp_unary_op>(st.op), operand[st.a], dst, n);
        else
          run_binary(static_cast<nnp_binary_op>(st.op), operand[st.a], operand[st.b], dst, n);
        operand[n_inputs + s] = dst;
      }
    }
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
