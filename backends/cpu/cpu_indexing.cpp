// index_select, gather and scatter_add on the CPU.
#include <atomic>
#include <cstring>
#include <string>

#include "cpu_kernels.hpp"
#include "cpu_loops.hpp"

namespace nnp::cpu {
namespace {

nnp_status out_of_range(const char* op, int64_t index, int64_t size, int32_t dim) {
  return fail(NNP_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(index) +
                                        " is out of range for dimension " + std::to_string(dim) + " of size " +
                                        std::to_string(size));
}

// The lines of `shape` along `dim`: every multi-index of the other
// dimensions. for_each_line calls body(offsets) with the offset of each
// line's first element in each of the K views (their strides on the other
// dimensions), splitting the lines over threads. Indexing kernels move data
// along `dim` only, so different lines never write the same element and the
// split is race-free.
template <int K, typename Body>
void for_each_line(const nnp_view& shape, int32_t dim, const nnp_view* const (&views)[K], Body body) {
  const int64_t length = shape.ndim > 0 ? shape.shape[dim] : 1;
  const int64_t total = view_numel(shape);
  if (total == 0) return;
  const int64_t lines = total / length;
  parallel_for(lines, length, [&](int64_t begin, int64_t end) {
    int64_t index[NNP_MAX_DIMS] = {};
    int64_t offsets[K] = {};
    int64_t rest = begin;
    for (int32_t i = shape.ndim - 1; i >= 0; --i) {
      if (i == dim) continue;
      index[i] = rest % shape.shape[i];
      rest /= shape.shape[i];
      for (int k = 0; k < K; ++k) offsets[k] += index[i] * views[k]->strides[i];
    }
    for (int64_t line = begin; line < end; ++line) {
      body(static_cast<const int64_t*>(offsets));
      for (int32_t i = shape.ndim - 1; i >= 0; --i) {  // odometer over the other dimensions
        if (i == dim) continue;
        for (int k = 0; k < K; ++k) offsets[k] += views[k]->strides[i];
        if (++index[i] < shape.shape[i]) break;
        for (int k = 0; k < K; ++k) offsets[k] -= views[k]->strides[i] * index[i];
        index[i] = 0;
      }
    }
  });
}

// Checks every index against size before anything is written (in
// parallel: the index is as large as the data it moves).
nnp_status check_indices(const char* op, const nnp_view& index, int64_t size, int32_t dim) {
  if (index.ndim == 0) {
    const int64_t value = *static_cast<const int64_t*>(index.data);
    return value < 0 || value >= size ? out_of_range(op, value, size, dim) : NNP_OK;
  }
  std::atomic<bool> bad{false};
  std::atomic<int64_t> bad_value{0};
  auto check_run = [&](const int64_t* idx, int64_t length, int64_t stride) {
    bool ok = true;
    for (int64_t j = 0; j < length; ++j) ok &= idx[j * stride] >= 0 && idx[j * stride] < size;
    if (ok) return;
    for (int64_t j = 0; j < length; ++j)
      if (idx[j * stride] < 0 || idx[j * stride] >= size) {
        if (!bad.exchange(true)) bad_value = idx[j * stride];
        return;
      }
  };
  const int64_t* data = static_cast<const int64_t*>(index.data);
  if (is_contiguous(index)) {  // one flat range (pooling's indices have lines of one element)
    parallel_for(view_numel(index), 1, [&](int64_t begin, int64_t end) { check_run(data + begin, end - begin, 1); });
  } else {
    const int32_t last = index.ndim - 1;
    const nnp_view* views[1] = {&index};
    for_each_line<1>(index, last, views,
                     [&](const int64_t* at) { check_run(data + at[0], index.shape[last], index.strides[last]); });
  }
  return bad ? out_of_range(op, bad_value, size, dim) : NNP_OK;
}

// Calls f(Word{}) with an unsigned integer as wide as one element: moving
// data needs its size only.
template <typename F>
void by_element_size(nnp_dtype dtype, F&& f) {
  switch (element_size(dtype)) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
  }
}

}  // namespace

nnp_status index_select(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index,
                        const nnp_view* out) {
  const int64_t* idx = static_cast<const int64_t*>(index->data);
  const int64_t n = index->shape[0], size = x->shape[dim], istride = index->strides[0];
  for (int64_t j = 0; j < n; ++j)
    if (idx[j * istride] < 0 || idx[j * istride] >= size)
      return out_of_range("index_select", idx[j * istride], size, dim);
  const size_t item = element_size(x->dtype);
  if (dim == 0 && is_contiguous(*x) && is_contiguous(*out)) {
    // Whole rows (embedding lookups): one memcpy each.
    const size_t row = static_cast<size_t>(view_numel(*out) / (n > 0 ? n : 1)) * item;
    parallel_for(n, static_cast<int64_t>(row), [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j)
        std::memcpy(static_cast<char*>(out->data) + j * row, static_cast<const char*>(x->data) + idx[j * istride] * row,
                    row);
    });
    return NNP_OK;
  }
  // General case: lines of out along dim, each read through the index.
  const nnp_view* views[2] = {out, x};
  const int64_t os = out->strides[dim], xs = x->strides[dim];
  by_element_size(x->dtype, [&](auto word) {
    using Word = decltype(word);
    for_each_line<2>(*out, dim, views, [&](const int64_t* at) {
      Word* o = static_cast<Word*>(out->data) + at[0];
      const Word* src = static_cast<const Word*>(x->data) + at[1];
      for (int64_t j = 0; j < n; ++j) o[j * os] = src[idx[j * istride] * xs];
    });
  });
  return NNP_OK;
}

nnp_status gather(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index, const nnp_view* out) {
  // A 0-d x is read as one element broadcast over index's shape.
  nnp_view x_wide = *x;
  if (x->ndim == 0) {
    x_wide.ndim = index->ndim;
    for (int32_t i = 0; i < index->ndim; ++i) x_wide.shape[i] = 1, x_wide.strides[i] = 0;
  }
  const int64_t size = x->ndim > 0 ? x->shape[dim] : 1;
  if (nnp_status status = check_indices("gather", *index, size, dim); status != NNP_OK) return status;
  x = &x_wide;
  // index and out share a shape; x is read at the index along dim.
  const nnp_view* views[3] = {out, index, x};
  const int64_t length = index->ndim > 0 ? index->shape[dim] : 1;
  const int64_t os = out->ndim > 0 ? out->strides[dim] : 0, is = index->ndim > 0 ? index->strides[dim] : 0;
  const int64_t xs = x->ndim > 0 ? x->strides[dim] : 0;
  by_element_size(x->dtype, [&](auto word) {
    using Word = decltype(word);
    for_each_line<3>(*index, dim, views, [&](const int64_t* at) {
      Word* o = static_cast<Word*>(out->data) + at[0];
      const int64_t* idx = static_cast<const int64_t*>(index->data) + at[1];
      const Word* src = static_cast<const Word*>(x->data) + at[2];
      for (int64_t j = 0; j < length; ++j) o[j * os] = src[idx[j * is] * xs];
    });
  });
  return NNP_OK;
}

nnp_status scatter_add(const nnp_kernel_ctx*, const nnp_view* out, int32_t dim, const nnp_view* index,
                       const nnp_view* src) {
  // Validate first so a bad index leaves out untouched.
  const int64_t size = out->ndim > 0 ? out->shape[dim] : 1;
  if (nnp_status status = check_indices("scatter_add", *index, size, dim); status != NNP_OK) return status;
  const nnp_view* views[3] = {out, index, src};
  const int64_t length = index->ndim > 0 ? index->shape[dim] : 1;
  const int64_t os = out->ndim > 0 ? out->strides[dim] : 0;
  const int64_t is = index->ndim > 0 ? index->strides[dim] : 0, ss = src->ndim > 0 ? src->strides[dim] : 0;
  dispatch(out->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Tr = Traits<T>;
    for_each_line<3>(*index, dim, views, [&](const int64_t* at) {
      T* o = static_cast<T*>(out->data) + at[0];
      const int64_t* idx = static_cast<const int64_t*>(index->data) + at[1];
      const T* s = static_cast<const T*>(src->data) + at[2];
      for (int64_t j = 0; j < length; ++j) {
        T& target = o[idx[j * is] * os];
        if constexpr (is_floating_v<T>) {
          target = Tr::store(Tr::load(target) + Tr::load(s[j * ss]));
        } else {
          using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;
          target = static_cast<T>(static_cast<U>(target) + static_cast<U>(s[j * ss]));
        }
      }
    });
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
