// Reference kernels: one plain loop per operation over multi-indices,
// double accumulation, no threads, no BLAS. Slow on purpose; this is the
// oracle every other backend is checked against.
#include "reference_kernels.hpp"

#include <nnp/philox.h>

#include <cmath>
#include <limits>
#include <nnp/elements.hpp>
#include <string>
#include <vector>

namespace nnp::reference {

using namespace nnp::elements;  // loads, stores and op bodies shared with the GPU kernels

const nnp_api* g_api = nullptr;

namespace {

nnp_status error(nnp_status status, const std::string& message) {
  g_api->set_error(status, message.c_str());
  return status;
}

nnp_status k_copy(const nnp_kernel_ctx*, const nnp_view* src, const nnp_view* dst) {
  int64_t index[NNP_MAX_DIMS] = {};
  if (numel_of(*dst) == 0) return NNP_OK;
  do {
    int64_t so = offset_of(*src, index), d = offset_of(*dst, index);
    // u64 into a floating dtype by value (its int64 bits would read negative past 2^63).
    if (is_float(src->dtype) || (src->dtype == NNP_U64 && is_float(dst->dtype)))
      store_f(*dst, d, load_f(*src, so));
    else
      store_i(*dst, d, load_i(*src, so));
  } while (next_index(index, dst->shape, dst->ndim));
  return NNP_OK;
}

nnp_status k_fill(const nnp_kernel_ctx*, const nnp_view* dst, double value) {
  int64_t index[NNP_MAX_DIMS] = {};
  if (numel_of(*dst) == 0) return NNP_OK;
  do store_f(*dst, offset_of(*dst, index), value);
  while (next_index(index, dst->shape, dst->ndim));
  return NNP_OK;
}

nnp_status k_unary(const nnp_kernel_ctx*, nnp_unary_op op, const nnp_view* x, const nnp_view* out) {
  int64_t index[NNP_MAX_DIMS] = {};
  if (numel_of(*out) == 0) return NNP_OK;
  do {
    int64_t xo = offset_of(*x, index), oo = offset_of(*out, index);
    if (is_float(x->dtype))
      store_f(*out, oo, unary_f(op, load_f(*x, xo)));
    else if (x->dtype == NNP_U64)
      store_i(*out, oo, unary_u64(op, load_i(*x, xo)));
    else
      store_i(*out, oo, unary_i(op, load_i(*x, xo)));
  } while (next_index(index, out->shape, out->ndim));
  return NNP_OK;
}

nnp_status k_binary(const nnp_kernel_ctx*, nnp_binary_op op, const nnp_view* a, const nnp_view* b,
                    const nnp_view* out) {
  int64_t index[NNP_MAX_DIMS] = {};
  if (numel_of(*out) == 0) return NNP_OK;
  const bool floating = is_float(a->dtype), unsigned64 = a->dtype == NNP_U64;
  do {
    int64_t ao = offset_of(*a, index), bo = offset_of(*b, index), oo = offset_of(*out, index);
    if (op >= NNP_BINARY_EQ) {
      bool r = floating     ? compare(op, load_f(*a, ao), load_f(*b, bo))
               : unsigned64 ? compare(op, static_cast<uint64_t>(load_i(*a, ao)), static_cast<uint64_t>(load_i(*b, bo)))
                            : compare(op, load_i(*a, ao), load_i(*b, bo));
      store_i(*out, oo, r ? 1 : 0);
    } else if (floating) {
      store_f(*out, oo, binary_f(op, load_f(*a, ao), load_f(*b, bo)));
    } else {
      int64_t r;
      const bool done = unsigned64 ? binary_u64(op, load_i(*a, ao), load_i(*b, bo), &r)
                                   : binary_i(op, load_i(*a, ao), load_i(*b, bo), &r);
      if (!done)
        return error(NNP_INVALID_ARGUMENT, "pow: integers cannot be raised to negative integer powers");
      store_i(*out, oo, r);
    }
  } while (next_index(index, out->shape, out->ndim));
  return NNP_OK;
}

nnp_status k_where(const nnp_kernel_ctx*, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                   const nnp_view* out) {
  int64_t index[NNP_MAX_DIMS] = {};
  if (numel_of(*out) == 0) return NNP_OK;
  do {
    const nnp_view& pick = load_i(*cond, offset_of(*cond, index)) ? *a : *b;
    int64_t po = offset_of(pick, index), oo = offset_of(*out, index);
    if (is_float(out->dtype))
      store_f(*out, oo, load_f(pick, po));
    else
      store_i(*out, oo, load_i(pick, po));
  } while (next_index(index, out->shape, out->ndim));
  return NNP_OK;
}

nnp_status k_reduce(const nnp_kernel_ctx*, nnp_reduce_op op, const nnp_view* x, int32_t nreduce, double correction,
                    const nnp_view* out) {
  const int32_t nkeep = x->ndim - nreduce;
  const int64_t* rshape = x->shape + nkeep;
  int64_t count = 1;
  for (int32_t i = 0; i < nreduce; ++i) count *= rshape[i];
  const bool floating = is_float(x->dtype);
  int64_t keep[NNP_MAX_DIMS] = {};
  do {
    int64_t full[NNP_MAX_DIMS] = {};
    for (int32_t i = 0; i < nkeep; ++i) full[i] = keep[i];
    std::vector<double> values;  // the reduced elements, in row-major order
    std::vector<int64_t> ivalues;
    if (count > 0) {
      int64_t* r = full + nkeep;
      do {
        int64_t o = offset_of(*x, full);
        if (floating)
          values.push_back(load_f(*x, o));
        else
          ivalues.push_back(load_i(*x, o));
      } while (next_index(r, rshape, nreduce));
    }
    int64_t oo = offset_of(*out, keep);
    if (floating) {
      double result = 0;
      int64_t arg = 0;
      if (op == NNP_REDUCE_SUM || op == NNP_REDUCE_MEAN || op == NNP_REDUCE_VAR) {
        double sum = 0;
        for (double v : values) sum += v;
        double mean = sum / static_cast<double>(count);
        result = op == NNP_REDUCE_SUM ? sum : mean;
        if (op == NNP_REDUCE_VAR) {
          double squares = 0;
          for (double v : values) squares += (v - mean) * (v - mean);
          double denominator = static_cast<double>(count) - correction;
          result = squares / (denominator > 0 ? denominator : 0.0);
        }
      } else {
        bool want_max = op == NNP_REDUCE_MAX || op == NNP_REDUCE_ARGMAX;
        result = values[0];
        for (int64_t i = 0; i < count; ++i) {
          double v = values[i];
          if (std::isnan(result)) break;  // NaN wins and keeps its first index
          if (std::isnan(v) || (want_max ? v > result : v < result)) {
            result = v;
            arg = i;
          }
        }
      }
      if (op == NNP_REDUCE_ARGMAX || op == NNP_REDUCE_ARGMIN)
        store_i(*out, oo, arg);
      else
        store_f(*out, oo, result);
    } else {
      int64_t result = 0, arg = 0;
      if (op == NNP_REDUCE_SUM) {
        uint64_t sum = 0;
        for (int64_t v : ivalues) sum += static_cast<uint64_t>(v);
        result = static_cast<int64_t>(sum);
      } else {
        bool want_max = op == NNP_REDUCE_MAX || op == NNP_REDUCE_ARGMAX;
        const bool unsigned64 = x->dtype == NNP_U64;  // ordered as unsigned
        auto key = [unsigned64](int64_t v) { return unsigned64 ? u64_order(v) : v; };
        result = ivalues[0];
        for (int64_t i = 1; i < count; ++i)
          if (want_max ? key(ivalues[i]) > key(result) : key(ivalues[i]) < key(result)) {
            result = ivalues[i];
            arg = i;
          }
      }
      store_i(*out, oo, op == NNP_REDUCE_ARGMAX || op == NNP_REDUCE_ARGMIN ? arg : result);
    }
  } while (nkeep > 0 && next_index(keep, x->shape, nkeep));
  return NNP_OK;
}

nnp_status k_gemm(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  const int32_t nb = out->ndim - 2;
  const int64_t m = out->shape[nb], n = out->shape[nb + 1], k = a->shape[nb + 1];
  int64_t batch[NNP_MAX_DIMS] = {};
  do {
    int64_t ia[NNP_MAX_DIMS] = {}, ib[NNP_MAX_DIMS] = {}, io[NNP_MAX_DIMS] = {};
    for (int32_t i = 0; i < nb; ++i) ia[i] = ib[i] = io[i] = batch[i];
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double sum = 0;
        for (int64_t j = 0; j < k; ++j) {
          ia[nb] = r;
          ia[nb + 1] = j;
          ib[nb] = j;
          ib[nb + 1] = c;
          sum += load_f(*a, offset_of(*a, ia)) * load_f(*b, offset_of(*b, ib));
        }
        io[nb] = r;
        io[nb + 1] = c;
        store_f(*out, offset_of(*out, io), sum);
      }
  } while (nb > 0 && next_index(batch, out->shape, nb));
  return NNP_OK;
}

nnp_status k_softmax(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, int32_t log, const nnp_view* out) {
  const int64_t length = x->shape[dim];
  int64_t index[NNP_MAX_DIMS] = {};
  int64_t outer_shape[NNP_MAX_DIMS];
  for (int32_t i = 0; i < x->ndim; ++i) outer_shape[i] = i == dim ? 1 : x->shape[i];
  do {
    double max = -INFINITY;
    for (int64_t j = 0; j < length; ++j) {
      index[dim] = j;
      double v = load_f(*x, offset_of(*x, index));
      if (std::isnan(v) || v > max) max = v;
    }
    double sum = 0;
    for (int64_t j = 0; j < length; ++j) {
      index[dim] = j;
      sum += std::exp(load_f(*x, offset_of(*x, index)) - max);
    }
    for (int64_t j = 0; j < length; ++j) {
      index[dim] = j;
      double shifted = load_f(*x, offset_of(*x, index)) - max;
      store_f(*out, offset_of(*out, index), log ? shifted - std::log(sum) : std::exp(shifted) / sum);
    }
    index[dim] = 0;
  } while (next_index(index, outer_shape, x->ndim));
  return NNP_OK;
}

nnp_status index_error(const char* op, int64_t index, int64_t size, int32_t dim) {
  return error(NNP_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(index) +
                                         " is out of range for dimension " + std::to_string(dim) + " of size " +
                                         std::to_string(size));
}

nnp_status k_index_select(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index,
                          const nnp_view* out) {
  int64_t io[NNP_MAX_DIMS] = {};
  do {
    int64_t ix[NNP_MAX_DIMS];
    for (int32_t i = 0; i < out->ndim; ++i) ix[i] = io[i];
    int64_t at = io[dim];
    int64_t selected = load_i(*index, at * index->strides[0]);
    if (selected < 0 || selected >= x->shape[dim]) return index_error("index_select", selected, x->shape[dim], dim);
    ix[dim] = selected;
    int64_t xo = offset_of(*x, ix), oo = offset_of(*out, io);
    if (is_float(x->dtype))
      store_f(*out, oo, load_f(*x, xo));
    else
      store_i(*out, oo, load_i(*x, xo));
  } while (next_index(io, out->shape, out->ndim));
  return NNP_OK;
}

nnp_status k_gather(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index, const nnp_view* out) {
  int64_t io[NNP_MAX_DIMS] = {};
  do {
    int64_t selected = load_i(*index, offset_of(*index, io));
    if (selected < 0 || selected >= x->shape[dim]) return index_error("gather", selected, x->shape[dim], dim);
    int64_t ix[NNP_MAX_DIMS];
    for (int32_t i = 0; i < out->ndim; ++i) ix[i] = io[i];
    ix[dim] = selected;
    int64_t xo = offset_of(*x, ix), oo = offset_of(*out, io);
    if (is_float(x->dtype))
      store_f(*out, oo, load_f(*x, xo));
    else
      store_i(*out, oo, load_i(*x, xo));
  } while (out->ndim > 0 && next_index(io, out->shape, out->ndim));
  return NNP_OK;
}

nnp_status k_scatter_add(const nnp_kernel_ctx*, const nnp_view* out, int32_t dim, const nnp_view* index,
                         const nnp_view* src) {
  int64_t is[NNP_MAX_DIMS] = {};
  do {
    int64_t selected = load_i(*index, offset_of(*index, is));
    if (selected < 0 || selected >= out->shape[dim]) return index_error("scatter_add", selected, out->shape[dim], dim);
    int64_t io[NNP_MAX_DIMS];
    for (int32_t i = 0; i < src->ndim; ++i) io[i] = is[i];
    io[dim] = selected;
    int64_t oo = offset_of(*out, io), so = offset_of(*src, is);
    if (is_float(out->dtype))
      store_f(*out, oo, load_f(*out, oo) + load_f(*src, so));
    else
      store_i(*out, oo,
              static_cast<int64_t>(static_cast<uint64_t>(load_i(*out, oo)) + static_cast<uint64_t>(load_i(*src, so))));
  } while (src->ndim > 0 && next_index(is, index->shape, index->ndim));
  return NNP_OK;
}

nnp_status k_random(const nnp_kernel_ctx*, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                    const nnp_view* out) {
  const int64_t n = numel_of(*out);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t counter = offset + static_cast<uint64_t>(i);
    if (kind == NNP_RANDOM_INT)
      store_i(*out, i,
              nnp_philox_int(nnp_philox4x32_10(counter, seed), static_cast<int64_t>(a), static_cast<int64_t>(b)));
    else
      store_f(*out, i, nnp_philox_value(kind, seed, counter, a, b));
  }
  return NNP_OK;
}

// Contiguous i8 a [M, K] and b [N, K]: out[m, n] = sum_k a[m, k] * b[n, k].
nnp_status k_gemm_i8(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  const int64_t m = a->shape[0], n = b->shape[0], k = a->shape[1];
  const auto* pa = static_cast<const int8_t*>(a->data);
  const auto* pb = static_cast<const int8_t*>(b->data);
  auto* po = static_cast<int32_t*>(out->data);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      int64_t sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += int64_t{pa[r * k + j]} * int64_t{pb[c * k + j]};
      po[r * n + c] = static_cast<int32_t>(sum);
    }
  return NNP_OK;
}

// Every slot by name, from plugin.h's list, then the optional ones.
nnp_kernels make_kernels() {
  nnp_kernels k{};
  k.struct_size = sizeof(nnp_kernels);
#define NNP_SET_SLOT(slot) k.slot = k_##slot;
  NNP_KERNELS_REQUIRED_SLOTS(NNP_SET_SLOT)
#undef NNP_SET_SLOT
  k.gemm_i8 = k_gemm_i8;
  return k;
}

const nnp_kernels kKernels = make_kernels();

}  // namespace

const nnp_kernels* kernel_table() { return &kKernels; }

}  // namespace nnp::reference
