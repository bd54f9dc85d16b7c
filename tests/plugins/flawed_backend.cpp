// Backends that are right but for one flaw, for the conformance kit to catch
// (issue 14, class 9). Each is the reference backend's kernels with one slot
// replaced, chosen by NNP_FLAW:
//   1 crash     binary add of f32 kills the process (SIGSEGV)
//   2 offset    random ignores its offset (every draw restarts the stream)
//   3 softmax   softmax without taking off the row's max (overflows)
//   4 rounding  conversion to f16/bf16 rounds toward zero, not to even
//   5 hang      where never returns
#include <nnp/half.h>
#include <nnp/host_backend.h>

#include <cmath>
#include <csignal>
#include <nnp/elements.hpp>
#include <thread>

#include "../../backends/reference/reference_kernels.hpp"
#include "test_backend_memory.hpp"

#ifndef NNP_FLAW
#error "NNP_FLAW must be set"
#endif

namespace {

using namespace nnp::elements;

nnp_kernels flawed;

// The flaws: each plugin built from this file installs one (NNP_FLAW), so
// the others are unused there.
[[maybe_unused]] nnp_status crashing_binary(const nnp_kernel_ctx* ctx, nnp_binary_op op, const nnp_view* a,
                                            const nnp_view* b, const nnp_view* out) {
  if (op == NNP_BINARY_ADD && a->dtype == NNP_F32) std::raise(SIGSEGV);
  return nnp::reference::kernel_table()->binary(ctx, op, a, b, out);
}

[[maybe_unused]] nnp_status offset_ignoring_random(const nnp_kernel_ctx* ctx, nnp_random_kind kind, uint64_t seed,
                                                   uint64_t, double a, double b, const nnp_view* out) {
  return nnp::reference::kernel_table()->random(ctx, kind, seed, 0, a, b, out);
}

// exp(x) / sum(exp(x)) along dim, no max taken off.
[[maybe_unused]] nnp_status naive_softmax(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, int32_t log,
                                          const nnp_view* out) {
  int64_t outer[NNP_MAX_DIMS];
  for (int32_t i = 0; i < x->ndim; ++i) outer[i] = i == dim ? 1 : x->shape[i];
  int64_t rows = 1;
  for (int32_t i = 0; i < x->ndim; ++i) rows *= outer[i];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t index[NNP_MAX_DIMS] = {};
    unravel(r, outer, x->ndim, index);
    double sum = 0;
    const int64_t length = x->ndim ? x->shape[dim] : 1;
    for (int64_t j = 0; j < length; ++j) {
      if (x->ndim) index[dim] = j;
      sum += std::exp(load_f(*x, offset_of(*x, index)));
    }
    for (int64_t j = 0; j < length; ++j) {
      if (x->ndim) index[dim] = j;
      const double e = std::exp(load_f(*x, offset_of(*x, index)));
      store_f(*out, offset_of(*out, index), log ? std::log(e / sum) : e / sum);
    }
  }
  return NNP_OK;
}

// Rounds toward zero: the float just below |value| rounds where value would
// round up, so ties and overflow come out wrong.
[[maybe_unused]] nnp_status truncating_copy(const nnp_kernel_ctx* ctx, const nnp_view* src, const nnp_view* dst) {
  if ((dst->dtype != NNP_F16 && dst->dtype != NNP_BF16) || !is_float(src->dtype))
    return nnp::reference::kernel_table()->copy(ctx, src, dst);
  int64_t index[NNP_MAX_DIMS] = {};
  if (numel_of(*dst) == 0) return NNP_OK;
  do {
    const float v = static_cast<float>(load_f(*src, offset_of(*src, index)));
    const float toward_zero = std::isfinite(v) && v != 0 ? std::nextafter(v, 0.0f) : v;
    store_f(*dst, offset_of(*dst, index), toward_zero);
  } while (next_index(index, dst->shape, dst->ndim));
  return NNP_OK;
}

[[maybe_unused]] nnp_status hanging_where(const nnp_kernel_ctx*, const nnp_view*, const nnp_view*, const nnp_view*,
                                          const nnp_view*) {
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  nnp::reference::g_api = api;
  flawed = *nnp::reference::kernel_table();
  bool declares_sets = true;  // the reference kernels' dtypes and unary ops (ABI 1.16)
#if NNP_FLAW == 1
  flawed.binary = crashing_binary;
  const char* name = "flawed_crash";
#elif NNP_FLAW == 2
  flawed.random = offset_ignoring_random;
  const char* name = "flawed_offset";
#elif NNP_FLAW == 3
  flawed.softmax = naive_softmax;
  const char* name = "flawed_softmax";
#elif NNP_FLAW == 4
  flawed.copy = truncating_copy;
  const char* name = "flawed_rounding";
#elif NNP_FLAW == 5
  flawed.where = hanging_where;
  const char* name = "flawed_hang";
#else
  // Not a flaw: a kernel table as a backend built before ABI 1.7 has it,
  // which the core must never hand an i8 tensor or round.
  flawed.struct_size = NNP_KERNELS_SIZE_1_0;
  flawed.gemm_i8 = nullptr;
  declares_sets = false;
  const char* name = "flawed_pre17";
#endif
  static nnp_backend backend;
  nnp_host_backend_init(&backend, name, 1, &flawed);
  if (declares_sets) {
    backend.dtypes = NNP_DTYPES_1_7;
    backend.unary_ops = NNP_UNARY_OPS_1_7;
  }
  nnp::test_backend::use_host_heap(backend, "a flawed copy of the reference backend (tests only)");
  return api->register_backend(host, &backend);
}

}  // namespace

NNP_PLUGIN("test.flawed_backend", "0", "the reference kernels with one flaw (tests only)", init)
