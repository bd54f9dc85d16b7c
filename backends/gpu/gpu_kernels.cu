// Every slot of the kernel table, written once for CUDA and HIP. Elementwise
// work is one thread per element over any strides; reductions and softmax
// are one block per output row; GEMM is a shared-memory tiled kernel (the
// CUDA plugin tries cuBLAS first). Values go through double or int64 as in
// the reference backend, which these kernels are checked against.
#include <nnp/philox.h>

#include <cmath>
#include <nnp/elements.hpp>
#include <string>
#include <type_traits>

#include "gpu_backend.hpp"
#include "gpu_flat.cuh"
#include "gpu_kernel_slots.hpp"

namespace nnp::gpu {
namespace {

using namespace nnp::elements;  // loads, stores and op bodies shared with the reference kernels

constexpr int kThreads = 256;

int blocks_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < (1 << 20) ? (blocks > 0 ? blocks : 1) : (1 << 20));
}

#define NNP_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)

nnp_status launched(const char* kernel) { return check(gpuGetLastError(), kernel); }

// ---- elementwise ----

__global__ void copy_kernel(nnp_view src, nnp_view dst, int64_t n) {
  NNP_GRID_STRIDE(i, n) {
    int64_t index[NNP_MAX_DIMS];
    unravel(i, dst.shape, dst.ndim, index);
    int64_t s = offset_of(src, index), d = offset_of(dst, index);
    if (is_float(src.dtype))
      store_f(dst, d, load_f(src, s));
    else
      store_i(dst, d, load_i(src, s));
  }
}

__global__ void fill_kernel(nnp_view dst, double value, int64_t n) {
  NNP_GRID_STRIDE(i, n) {
    int64_t index[NNP_MAX_DIMS];
    unravel(i, dst.shape, dst.ndim, index);
    store_f(dst, offset_of(dst, index), value);
  }
}

__global__ void unary_kernel(nnp_unary_op op, nnp_view x, nnp_view out, int64_t n) {
  NNP_GRID_STRIDE(i, n) {
    int64_t index[NNP_MAX_DIMS];
    unravel(i, out.shape, out.ndim, index);
    int64_t xo = offset_of(x, index), oo = offset_of(out, index);
    if (is_float(x.dtype))
      store_f(out, oo, unary_f(op, load_f(x, xo)));
    else
      store_i(out, oo, unary_i(op, load_i(x, xo)));
  }
}

__global__ void binary_kernel(nnp_binary_op op, nnp_view a, nnp_view b, nnp_view out, int64_t n, int32_t* bad) {
  const bool floating = is_float(a.dtype);
  NNP_GRID_STRIDE(i, n) {
    int64_t index[NNP_MAX_DIMS];
    unravel(i, out.shape, out.ndim, index);
    int64_t ao = offset_of(a, index), bo = offset_of(b, index), oo = offset_of(out, index);
    if (op >= NNP_BINARY_EQ) {
      bool r = floating ? compare(op, load_f(a, ao), load_f(b, bo)) : compare(op, load_i(a, ao), load_i(b, bo));
      store_i(out, oo, r ? 1 : 0);
    } else if (floating) {
      store_f(out, oo, binary_f(op, load_f(a, ao), load_f(b, bo)));
    } else {
      int64_t r = 0;
      if (binary_i(op, load_i(a, ao), load_i(b, bo), &r))
        store_i(out, oo, r);
      else
        *bad = 1;
    }
  }
}

__global__ void where_kernel(nnp_view cond, nnp_view a, nnp_view b, nnp_view out, int64_t n) {
  NNP_GRID_STRIDE(i, n) {
    int64_t index[NNP_MAX_DIMS];
    unravel(i, out.shape, out.ndim, index);
    const nnp_view& pick = load_i(cond, offset_of(cond, index)) ? a : b;
    int64_t po = offset_of(pick, index), oo = offset_of(out, index);
    if (is_float(out.dtype))
      store_f(out, oo, load_f(pick, po));
    else
      store_i(out, oo, load_i(pick, po));
  }
}

nnp_status k_copy(const nnp_kernel_ctx* ctx, const nnp_view* src, const nnp_view* dst) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t n = numel_of(*dst);
  if (n == 0) return NNP_OK;
  if (src->dtype == dst->dtype && flat::contiguous(*src) && flat::contiguous(*dst))
    return check(gpuMemcpyAsync(dst->data, src->data, static_cast<size_t>(n) * g_api->dtype_size(dst->dtype),
                                gpuMemcpyDeviceToDevice, d->stream),
                 "copy on the device");
  copy_kernel<<<blocks_for(n), kThreads, 0, d->stream>>>(*src, *dst, n);
  return launched("copy kernel");
}

nnp_status k_fill(const nnp_kernel_ctx* ctx, const nnp_view* dst, double value) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t n = numel_of(*dst);
  if (n == 0) return NNP_OK;
  if (flat::contiguous(*dst) && flat::for_float_dtype(dst->dtype, [&](auto dtype) {
        flat::fill_kernel<dtype.value><<<blocks_for(n), kThreads, 0, d->stream>>>(dst->data, value, n);
      }))
    return launched("fill kernel");
  fill_kernel<<<blocks_for(n), kThreads, 0, d->stream>>>(*dst, value, n);
  return launched("fill kernel");
}

nnp_status k_unary(const nnp_kernel_ctx* ctx, nnp_unary_op op, const nnp_view* x, const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t n = numel_of(*out);
  if (n == 0) return NNP_OK;
  if (flat::contiguous(*x) && flat::contiguous(*out) && flat::for_float_dtype(out->dtype, [&](auto dtype) {
        flat::unary_kernel<dtype.value><<<blocks_for(n), kThreads, 0, d->stream>>>(op, x->data, out->data, n);
      }))
    return launched("unary kernel");
  unary_kernel<<<blocks_for(n), kThreads, 0, d->stream>>>(op, *x, *out, n);
  return launched("unary kernel");
}

// Reads back an int the kernel may have set: costs a synchronisation, so
// only kernels that can meet bad values use it.
nnp_status read_flag(DeviceState& d, const void* flag, size_t bytes, void* host) {
  nnp_status status = check(gpuMemcpyAsync(host, flag, bytes, gpuMemcpyDeviceToHost, d.stream), "reading a flag");
  if (status == NNP_OK) status = check(gpuStreamSynchronize(d.stream), "synchronize");
  return status;
}

nnp_status clear_index_error(DeviceState& d) {
  static const IndexError zero{};
  return check(gpuMemcpyAsync(d.index_error, &zero, sizeof zero, gpuMemcpyHostToDevice, d.stream),
               "clearing the index-error word");
}

nnp_status k_binary(const nnp_kernel_ctx* ctx, nnp_binary_op op, const nnp_view* a, const nnp_view* b,
                    const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t n = numel_of(*out);
  if (n == 0) return NNP_OK;
  flat::Input fa{}, fb{};
  if (op < NNP_BINARY_EQ && flat::contiguous(*out) && flat::as_input(*a, &fa) && flat::as_input(*b, &fb) &&
      flat::for_float_dtype(out->dtype, [&](auto dtype) {
        flat::binary_kernel<dtype.value><<<blocks_for(n), kThreads, 0, d->stream>>>(op, fa, fb, out->data, n);
      }))
    return launched("binary kernel");
  const bool may_fail = op == NNP_BINARY_POW && !is_float(a->dtype);
  nnp_status status = may_fail ? clear_index_error(*d) : NNP_OK;
  if (status != NNP_OK) return status;
  binary_kernel<<<blocks_for(n), kThreads, 0, d->stream>>>(op, *a, *b, *out, n, &d->index_error->flag);
  if ((status = launched("binary kernel")) != NNP_OK || !may_fail) return status;
  int32_t bad = 0;
  if ((status = read_flag(*d, &d->index_error->flag, sizeof bad, &bad)) != NNP_OK) return status;
  return bad ? fail(NNP_INVALID_ARGUMENT, "pow: integers cannot be raised to negative integer powers") : NNP_OK;
}

nnp_status k_where(const nnp_kernel_ctx* ctx, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                   const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t n = numel_of(*out);
  if (n == 0) return NNP_OK;
  where_kernel<<<blocks_for(n), kThreads, 0, d->stream>>>(*cond, *a, *b, *out, n);
  return launched("where kernel");
}

// ---- reductions: one block per output ----

// The running max/min with its index, under the reference's rules: the first
// NaN wins; otherwise the first of equal extremes. index INT64_MAX: nothing
// seen yet.
template <typename V>
struct Best {
  V value;
  int64_t index;
};

template <typename V>
__device__ Best<V> better(Best<V> a, Best<V> b, bool want_max) {
  if (a.index == INT64_MAX) return b;
  if (b.index == INT64_MAX) return a;
  if constexpr (std::is_floating_point_v<V>) {
    bool an = isnan(a.value), bn = isnan(b.value);
    if (an || bn) return an && (!bn || a.index < b.index) ? a : b;
  }
  if (a.value == b.value) return a.index < b.index ? a : b;
  return (want_max ? a.value > b.value : a.value < b.value) ? a : b;
}

// Combines every thread's best across the block (every thread gets it).
template <typename V>
__device__ Best<V> block_best(Best<V> mine, bool want_max, V* values, int64_t* indices) {
  values[threadIdx.x] = mine.value;
  indices[threadIdx.x] = mine.index;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      Best<V> b = better(Best<V>{values[threadIdx.x], indices[threadIdx.x]},
                         Best<V>{values[threadIdx.x + s], indices[threadIdx.x + s]}, want_max);
      values[threadIdx.x] = b.value;
      indices[threadIdx.x] = b.index;
    }
    __syncthreads();
  }
  Best<V> result{values[0], indices[0]};
  __syncthreads();
  return result;
}

// Sums one double per thread across the block (every thread gets the total).
__device__ double block_sum(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  double total = scratch[0];
  __syncthreads();
  return total;
}

__global__ void reduce_kernel(nnp_reduce_op op, nnp_view x, int32_t nreduce, double correction, nnp_view out,
                              int64_t count) {
  __shared__ double scratch[kThreads];
  __shared__ int64_t iscratch[kThreads];
  __shared__ int64_t index_scratch[kThreads];
  const int32_t nkeep = x.ndim - nreduce;
  int64_t full[NNP_MAX_DIMS];
  unravel(blockIdx.x, x.shape, nkeep, full);
  const int64_t base = offset_of(out, full);
  int64_t xbase = 0;
  for (int32_t i = 0; i < nkeep; ++i) xbase += full[i] * x.strides[i];
  auto element = [&](int64_t r) {
    int64_t rindex[NNP_MAX_DIMS];
    unravel(r, x.shape + nkeep, nreduce, rindex);
    int64_t o = xbase;
    for (int32_t i = 0; i < nreduce; ++i) o += rindex[i] * x.strides[nkeep + i];
    return o;
  };
  const bool want_max = op == NNP_REDUCE_MAX || op == NNP_REDUCE_ARGMAX;
  const bool arg = op == NNP_REDUCE_ARGMAX || op == NNP_REDUCE_ARGMIN;

  if (is_float(x.dtype)) {
    if (op == NNP_REDUCE_SUM || op == NNP_REDUCE_MEAN || op == NNP_REDUCE_VAR) {
      double sum = 0;
      for (int64_t r = threadIdx.x; r < count; r += blockDim.x) sum += load_f(x, element(r));
      sum = block_sum(sum, scratch);
      double mean = sum / static_cast<double>(count);
      double result = op == NNP_REDUCE_SUM ? sum : mean;
      if (op == NNP_REDUCE_VAR) {
        double squares = 0;
        for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
          double v = load_f(x, element(r)) - mean;
          squares += v * v;
        }
        squares = block_sum(squares, scratch);
        double denominator = static_cast<double>(count) - correction;
        result = squares / (denominator > 0 ? denominator : 0.0);
      }
      if (threadIdx.x == 0) store_f(out, base, result);
      return;
    }
    Best<double> best{0.0, INT64_MAX};
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x)
      best = better(best, Best<double>{load_f(x, element(r)), r}, want_max);
    best = block_best(best, want_max, scratch, index_scratch);
    if (threadIdx.x == 0) {
      if (arg)
        store_i(out, base, best.index);
      else
        store_f(out, base, best.value);
    }
    return;
  }
  if (op == NNP_REDUCE_SUM) {
    unsigned long long sum = 0;
    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) sum += static_cast<uint64_t>(load_i(x, element(r)));
    iscratch[threadIdx.x] = static_cast<int64_t>(sum);
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s)
        iscratch[threadIdx.x] = static_cast<int64_t>(static_cast<uint64_t>(iscratch[threadIdx.x]) +
                                                     static_cast<uint64_t>(iscratch[threadIdx.x + s]));
      __syncthreads();
    }
    if (threadIdx.x == 0) store_i(out, base, iscratch[0]);
    return;
  }
  Best<int64_t> best{0, INT64_MAX};
  for (int64_t r = threadIdx.x; r < count; r += blockDim.x)
    best = better(best, Best<int64_t>{load_i(x, element(r)), r}, want_max);
  best = block_best(best, want_max, iscratch, index_scratch);
  if (threadIdx.x == 0) store_i(out, base, arg ? best.index : best.value);
}

// A power of two from 32 to kThreads covering the reduced elements.
int threads_for(int64_t count) {
  int threads = 32;
  while (threads < kThreads && threads < count) threads <<= 1;
  return threads;
}

nnp_status k_reduce(const nnp_kernel_ctx* ctx, nnp_reduce_op op, const nnp_view* x, int32_t nreduce, double correction,
                    const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t outputs = numel_of(*out);
  if (outputs == 0) return NNP_OK;
  if (outputs > 0x7fffffff) return fail(NNP_UNIMPLEMENTED, "reduce: more than 2^31 outputs");
  int64_t count = 1;
  for (int32_t i = x->ndim - nreduce; i < x->ndim; ++i) count *= x->shape[i];
  reduce_kernel<<<static_cast<unsigned>(outputs), threads_for(count), 0, d->stream>>>(op, *x, nreduce, correction, *out,
                                                                                      count);
  return launched("reduce kernel");
}

// ---- softmax: one block per row along dim ----

__global__ void softmax_kernel(nnp_view x, int32_t dim, int32_t log_out, nnp_view out) {
  __shared__ double scratch[kThreads];
  __shared__ int64_t index_scratch[kThreads];
  int64_t outer_shape[NNP_MAX_DIMS];
  for (int32_t i = 0; i < x.ndim; ++i) outer_shape[i] = i == dim ? 1 : x.shape[i];
  int64_t index[NNP_MAX_DIMS];
  unravel(blockIdx.x, outer_shape, x.ndim, index);
  index[dim] = 0;
  const int64_t xbase = offset_of(x, index), obase = offset_of(out, index);
  const int64_t length = x.shape[dim], xs = x.strides[dim], os = out.strides[dim];

  Best<double> best{0.0, INT64_MAX};  // the max, NaN winning, as the reference
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x)
    best = better(best, Best<double>{load_f(x, xbase + j * xs), j}, true);
  best = block_best(best, true, scratch, index_scratch);
  const double max = best.index == INT64_MAX ? -INFINITY : best.value;
  double sum = 0;
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) sum += exp(load_f(x, xbase + j * xs) - max);
  sum = block_sum(sum, scratch);
  const double log_sum = log(sum);
  for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
    double shifted = load_f(x, xbase + j * xs) - max;
    store_f(out, obase + j * os, log_out ? shifted - log_sum : exp(shifted) / sum);
  }
}

nnp_status k_softmax(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, int32_t log, const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t rows = numel_of(*x) / (x->shape[dim] > 0 ? x->shape[dim] : 1);
  if (numel_of(*x) == 0) return NNP_OK;
  if (rows > 0x7fffffff) return fail(NNP_UNIMPLEMENTED, "softmax: more than 2^31 rows");
  softmax_kernel<<<static_cast<unsigned>(rows), threads_for(x->shape[dim]), 0, d->stream>>>(*x, dim, log, *out);
  return launched("softmax kernel");
}

// ---- GEMM: 16x16 tiles through shared memory, one batch per blockIdx.z ----

constexpr int kTile = 16;

__global__ void gemm_kernel(nnp_view a, nnp_view b, nnp_view out, int64_t m, int64_t n, int64_t k) {
  __shared__ double as[kTile][kTile];
  __shared__ double bs[kTile][kTile];
  const int32_t nb = out.ndim - 2;
  int64_t batch[NNP_MAX_DIMS] = {};
  unravel(blockIdx.z, out.shape, nb, batch);
  int64_t abase = 0, bbase = 0, obase = 0;
  for (int32_t i = 0; i < nb; ++i) {
    abase += batch[i] * a.strides[i];
    bbase += batch[i] * b.strides[i];
    obase += batch[i] * out.strides[i];
  }
  const int64_t row = blockIdx.y * int64_t{kTile} + threadIdx.y, col = blockIdx.x * int64_t{kTile} + threadIdx.x;
  double sum = 0;
  for (int64_t t = 0; t < k; t += kTile) {
    int64_t ak = t + threadIdx.x, bk = t + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        row < m && ak < k ? load_f(a, abase + row * a.strides[nb] + ak * a.strides[nb + 1]) : 0.0;
    bs[threadIdx.y][threadIdx.x] =
        bk < k && col < n ? load_f(b, bbase + bk * b.strides[nb] + col * b.strides[nb + 1]) : 0.0;
    __syncthreads();
    for (int j = 0; j < kTile; ++j) sum += as[threadIdx.y][j] * bs[j][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) store_f(out, obase + row * out.strides[nb] + col * out.strides[nb + 1], sum);
}

// Backends with a vendor GEMM set this (cuBLAS); the tiled kernel is the rest.
nnp_status k_gemm(const nnp_kernel_ctx* ctx, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  const int32_t nb = out->ndim - 2;
  const int64_t m = out->shape[nb], n = out->shape[nb + 1], k = a->shape[nb + 1];
  int64_t batches = 1;
  for (int32_t i = 0; i < nb; ++i) batches *= out->shape[i];
  if (m == 0 || n == 0 || batches == 0) return NNP_OK;
  GemmFn vendor = static_cast<Backend*>(ctx->backend_state)->config.gemm;
  if (vendor) {
    nnp_status status = vendor(*d, a, b, out);
    if (status != NNP_UNIMPLEMENTED) return status;
  }
  if (batches > 65535) return fail(NNP_UNIMPLEMENTED, "gemm: more than 65535 batches on the tiled kernel");
  dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>((m + kTile - 1) / kTile),
            static_cast<unsigned>(batches));
  gemm_kernel<<<grid, dim3(kTile, kTile), 0, d->stream>>>(*a, *b, *out, m, n, k);
  return launched("gemm kernel");
}

// ---- indexing ----

__device__ void report_index(IndexError* error, int64_t index, int64_t size, int32_t dim) {
  if (atomicCAS(&error->flag, 0, 1) == 0) {
    error->index = index;
    error->size = size;
    error->dim = dim;
  }
}

// index_select (the 1-D index read at out's position along dim) and gather
// (an index shaped like out): out = x with dimension dim replaced by the index.
__global__ void select_kernel(nnp_view x, int32_t dim, nnp_view index, bool gather, nnp_view out, int64_t n,
                              IndexError* error) {
  NNP_GRID_STRIDE(i, n) {
    int64_t io[NNP_MAX_DIMS];
    unravel(i, out.shape, out.ndim, io);
    int64_t selected = load_i(index, gather ? offset_of(index, io) : io[dim] * index.strides[0]);
    if (selected < 0 || selected >= x.shape[dim]) {
      report_index(error, selected, x.shape[dim], dim);
      continue;
    }
    int64_t oo = offset_of(out, io);
    io[dim] = selected;
    int64_t xo = offset_of(x, io);
    if (is_float(x.dtype))
      store_f(out, oo, load_f(x, xo));
    else
      store_i(out, oo, load_i(x, xo));
  }
}

// Adds to a 1- or 2-byte element with a compare-and-swap on its 32-bit word.
template <typename Convert>
__device__ void atomic_update_narrow(void* address, int bytes, Convert update) {
  uintptr_t at = reinterpret_cast<uintptr_t>(address);
  unsigned int* word = reinterpret_cast<unsigned int*>(at & ~uintptr_t{3});
  const unsigned shift = static_cast<unsigned>(at & 3) * 8;
  const unsigned mask = (bytes == 1 ? 0xffu : 0xffffu) << shift;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    unsigned int current = (assumed & mask) >> shift;
    unsigned int next = update(current) << shift;
    old = atomicCAS(word, assumed, (assumed & ~mask) | (next & mask));
  } while (assumed != old);
}

__device__ void atomic_add(const nnp_view& out, int64_t o, const nnp_view& src, int64_t so) {
  switch (out.dtype) {
    case NNP_F32: atomicAdd(static_cast<float*>(out.data) + o, static_cast<float>(load_f(src, so))); break;
    case NNP_F64: atomicAdd(static_cast<double*>(out.data) + o, load_f(src, so)); break;
    case NNP_I32: atomicAdd(static_cast<int*>(out.data) + o, static_cast<int>(load_i(src, so))); break;
    case NNP_I64:
      atomicAdd(static_cast<unsigned long long*>(out.data) + o, static_cast<unsigned long long>(load_i(src, so)));
      break;
    case NNP_F16: {
      float add = static_cast<float>(load_f(src, so));
      atomic_update_narrow(static_cast<uint16_t*>(out.data) + o, 2, [add](unsigned v) {
        return static_cast<unsigned>(nnp_float_to_f16(nnp_f16_to_float(static_cast<uint16_t>(v)) + add));
      });
      break;
    }
    case NNP_BF16: {
      float add = static_cast<float>(load_f(src, so));
      atomic_update_narrow(static_cast<uint16_t*>(out.data) + o, 2, [add](unsigned v) {
        return static_cast<unsigned>(nnp_float_to_bf16(nnp_bf16_to_float(static_cast<uint16_t>(v)) + add));
      });
      break;
    }
    default: {  // U8 and I8: bytes add modulo 256 either way
      unsigned add = static_cast<unsigned>(load_i(src, so));
      atomic_update_narrow(static_cast<uint8_t*>(out.data) + o, 1, [add](unsigned v) { return (v + add) & 0xffu; });
      break;
    }
  }
}

__global__ void scatter_add_kernel(nnp_view out, int32_t dim, nnp_view index, nnp_view src, int64_t n,
                                   IndexError* error) {
  NNP_GRID_STRIDE(i, n) {
    int64_t is[NNP_MAX_DIMS];
    unravel(i, index.shape, index.ndim, is);
    int64_t selected = load_i(index, offset_of(index, is));
    if (selected < 0 || selected >= out.shape[dim]) {
      report_index(error, selected, out.shape[dim], dim);
      continue;
    }
    int64_t so = offset_of(src, is);
    is[dim] = selected;
    atomic_add(out, offset_of(out, is), src, so);
  }
}

// Launches an index kernel and turns a reported index into the message the
// reference backend gives.
template <typename Launch>
nnp_status run_indexed(const nnp_kernel_ctx* ctx, const char* op, int64_t n, Launch launch) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  if (n == 0) return NNP_OK;
  nnp_status status = clear_index_error(*d);
  if (status != NNP_OK) return status;
  launch(*d);
  if ((status = launched(op)) != NNP_OK) return status;
  IndexError error{};
  if ((status = read_flag(*d, d->index_error, sizeof error, &error)) != NNP_OK) return status;
  if (!error.flag) return NNP_OK;
  return fail(NNP_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(error.index) +
                                        " is out of range for dimension " + std::to_string(error.dim) + " of size " +
                                        std::to_string(error.size));
}

nnp_status k_index_select(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, const nnp_view* index,
                          const nnp_view* out) {
  int64_t n = numel_of(*out);
  return run_indexed(ctx, "index_select", n, [&](DeviceState& d) {
    select_kernel<<<blocks_for(n), kThreads, 0, d.stream>>>(*x, dim, *index, false, *out, n, d.index_error);
  });
}

nnp_status k_gather(const nnp_kernel_ctx* ctx, const nnp_view* x, int32_t dim, const nnp_view* index,
                    const nnp_view* out) {
  int64_t n = numel_of(*out);
  return run_indexed(ctx, "gather", n, [&](DeviceState& d) {
    select_kernel<<<blocks_for(n), kThreads, 0, d.stream>>>(*x, dim, *index, true, *out, n, d.index_error);
  });
}

nnp_status k_scatter_add(const nnp_kernel_ctx* ctx, const nnp_view* out, int32_t dim, const nnp_view* index,
                         const nnp_view* src) {
  int64_t n = numel_of(*index);
  return run_indexed(ctx, "scatter_add", n, [&](DeviceState& d) {
    scatter_add_kernel<<<blocks_for(n), kThreads, 0, d.stream>>>(*out, dim, *index, *src, n, d.index_error);
  });
}

// ---- random: Philox4x32-10, the same numbers as every backend ----

__global__ void random_kernel(nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b, nnp_view out,
                              int64_t n) {
  NNP_GRID_STRIDE(i, n) {
    uint64_t counter = offset + static_cast<uint64_t>(i);
    if (kind == NNP_RANDOM_INT)
      store_i(out, i,
              nnp_philox_int(nnp_philox4x32_10(counter, seed), static_cast<int64_t>(a), static_cast<int64_t>(b)));
    else
      store_f(out, i, nnp_philox_value(kind, seed, counter, a, b));
  }
}

nnp_status k_random(const nnp_kernel_ctx* ctx, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                    const nnp_view* out) {
  DeviceState* d = device_state(ctx);
  if (d == nullptr) return g_api->last_status();
  int64_t n = numel_of(*out);
  if (n == 0) return NNP_OK;
  random_kernel<<<blocks_for(n), kThreads, 0, d->stream>>>(kind, seed, offset, a, b, *out, n);
  return launched("random kernel");
}

// Every slot by name, from gpu_kernel_slots.hpp's list (which the deferred
// plugin forwards).
nnp_kernels make_kernels() {
  nnp_kernels k{};
  k.struct_size = sizeof(nnp_kernels);
#define NNP_SET_SLOT(slot) k.slot = k_##slot;
  NNP_GPU_KERNEL_SLOTS(NNP_SET_SLOT)
#undef NNP_SET_SLOT
  return k;
}

const nnp_kernels kKernels = make_kernels();

}  // namespace

const nnp_kernels* kernel_table() { return &kKernels; }

}  // namespace nnp::gpu
