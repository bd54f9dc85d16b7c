// index_select, gather and scatter_add on the CPU.
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

bool is_contiguous(const nnp_view& v) {
  int64_t expected = 1;
  for (int32_t i = v.ndim - 1; i >= 0; --i) {
    if (v.shape[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.shape[i];
  }
  return true;
}

// Visits every multi-index of `shape` with the matching offsets in two views
// whose strides are given; `skip` (if >= 0) is a dimension left at 0.
template <typename Visit>
void walk_pair(const nnp_view& shape, const nnp_view& a, const nnp_view& b, Visit&& visit) {
  int64_t index[NNP_MAX_DIMS] = {};
  int64_t count = view_numel(shape);
  int64_t oa = 0, ob = 0;
  for (int64_t e = 0; e < count; ++e) {
    visit(index, oa, ob);
    for (int32_t i = shape.ndim - 1; i >= 0; --i) {
      oa += a.strides[i];
      ob += b.strides[i];
      if (++index[i] < shape.shape[i]) break;
      oa -= a.strides[i] * index[i];
      ob -= b.strides[i] * index[i];
      index[i] = 0;
    }
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
  // General case: walk out with x's strides, dimension `dim` redirected.
  nnp_view xs = *x;
  xs.strides[dim] = 0;
  walk_pair(*out, xs, *out, [&](const int64_t* at, int64_t ox, int64_t oo) {
    const int64_t source = ox + idx[at[dim] * istride] * x->strides[dim];
    std::memcpy(static_cast<char*>(out->data) + oo * item, static_cast<const char*>(x->data) + source * item, item);
  });
  return NNP_OK;
}

nnp_status gather(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index, const nnp_view* out) {
  const size_t item = element_size(x->dtype);
  const int64_t size = x->ndim > 0 ? x->shape[dim] : 1;
  const int64_t xstride = x->ndim > 0 ? x->strides[dim] : 0;
  nnp_view xs = *x;
  if (x->ndim > 0) xs.strides[dim] = 0;
  nnp_status status = NNP_OK;
  // index and out share a shape; walk them together, x alongside.
  int64_t count = view_numel(*index), coords[NNP_MAX_DIMS] = {};
  for (int64_t e = 0; e < count && status == NNP_OK; ++e) {
    int64_t oi = 0, oo = 0, ox = 0;
    for (int32_t i = 0; i < index->ndim; ++i) {
      oi += coords[i] * index->strides[i];
      oo += coords[i] * out->strides[i];
      ox += coords[i] * xs.strides[i];
    }
    const int64_t selected = static_cast<const int64_t*>(index->data)[oi];
    if (selected < 0 || selected >= size) {
      status = out_of_range("gather", selected, size, dim);
      break;
    }
    std::memcpy(static_cast<char*>(out->data) + oo * item,
                static_cast<const char*>(x->data) + (ox + selected * xstride) * item, item);
    for (int32_t i = index->ndim - 1; i >= 0; --i) {
      if (++coords[i] < index->shape[i]) break;
      coords[i] = 0;
    }
  }
  return status;
}

nnp_status scatter_add(const nnp_kernel_ctx*, const nnp_view* out, int32_t dim, const nnp_view* index,
                       const nnp_view* src) {
  const int64_t size = out->ndim > 0 ? out->shape[dim] : 1;
  // Validate first so a bad index leaves out untouched.
  nnp_status status = NNP_OK;
  walk_pair(*index, *index, *index, [&](const int64_t*, int64_t oi, int64_t) {
    const int64_t selected = static_cast<const int64_t*>(index->data)[oi];
    if (status == NNP_OK && (selected < 0 || selected >= size))
      status = out_of_range("scatter_add", selected, size, dim);
  });
  if (status != NNP_OK) return status;
  nnp_view os = *out;
  const int64_t ostride = out->ndim > 0 ? out->strides[dim] : 0;
  if (out->ndim > 0) os.strides[dim] = 0;
  dispatch(out->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Tr = Traits<T>;
    T* o = static_cast<T*>(out->data);
    const T* s = static_cast<const T*>(src->data);
    const int64_t* idx = static_cast<const int64_t*>(index->data);
    int64_t count = view_numel(*index), coords[NNP_MAX_DIMS] = {};
    for (int64_t e = 0; e < count; ++e) {
      int64_t oi = 0, so = 0, oo = 0;
      for (int32_t i = 0; i < index->ndim; ++i) {
        oi += coords[i] * index->strides[i];
        so += coords[i] * src->strides[i];
        oo += coords[i] * os.strides[i];
      }
      T& target = o[oo + idx[oi] * ostride];
      if constexpr (is_floating_v<T>) {
        target = Tr::store(Tr::load(target) + Tr::load(s[so]));
      } else {
        using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;
        target = static_cast<T>(static_cast<U>(target) + static_cast<U>(s[so]));
      }
      for (int32_t i = index->ndim - 1; i >= 0; --i) {
        if (++coords[i] < index->shape[i]) break;
        coords[i] = 0;
      }
    }
  });
  return NNP_OK;
}

}  // namespace nnp::cpu
