// Zero-copy views: every function here shares the input's storage (reshape
// copies only when no view can express the result).
#include "error.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core {
namespace {

// Resolves one -1 entry and checks the element count.
Dims infer_shape(const char* op, const Tensor& t, const int64_t* shape, int32_t ndim) {
  if (ndim < 0 || ndim > NNP_MAX_DIMS)
    fail(NNP_INVALID_ARGUMENT, op, ": ", ndim, " dimensions requested; nnplug supports 0 to ", NNP_MAX_DIMS);
  if (ndim > 0 && shape == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": shape is NULL but ndim is ", ndim);
  Dims out;
  out.ndim = ndim;
  int32_t infer = -1;
  int64_t known = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail(NNP_INVALID_ARGUMENT, op, ": only one dimension can be -1, got ", format_dims(shape, ndim));
      infer = i;
    } else if (shape[i] < 0) {
      fail(NNP_INVALID_ARGUMENT, op, ": invalid size ", shape[i], " at dimension ", i, " of ",
           format_dims(shape, ndim));
    } else if (known > 0 && __builtin_mul_overflow(known, shape[i], &known)) {
      known = -1;  // past int64: no tensor has that many elements (0 stays 0)
    }
    out.d[i] = shape[i];
  }
  if (known < 0 || (infer < 0 && !sizes_fit(out.d, ndim, nullptr)))
    fail(NNP_SHAPE_MISMATCH, op, ": shape ", format_dims(shape, ndim), " is too large for a tensor of shape ",
         format_dims(t.shape), " (", t.numel, " elements): its sizes multiply past 2^63-1");
  if (infer >= 0) {
    if (known == 0 || t.numel % known != 0)
      fail(NNP_SHAPE_MISMATCH, op, ": shape ", format_dims(shape, ndim), " is invalid for a tensor of shape ",
           format_dims(t.shape), " (", t.numel, " elements)");
    out.d[infer] = t.numel / known;
  } else if (known != t.numel) {
    fail(NNP_SHAPE_MISMATCH, op, ": shape ", format_dims(shape, ndim), " is invalid for a tensor of shape ",
         format_dims(t.shape), " (", t.numel, " elements)");
  }
  return out;
}

// Strides that let t's storage be seen with new_shape, if any exist: the
// dimensions of t are split into runs that are contiguous in memory, and
// each run must map onto whole dimensions of new_shape.
bool view_strides(const Tensor& t, const Dims& new_shape, Dims& strides) {
  strides.ndim = new_shape.ndim;
  if (t.shape.ndim == 0 || t.numel == 0) {
    strides = contiguous_strides(new_shape);
    return true;
  }
  int32_t view_d = new_shape.ndim - 1;
  int64_t chunk_base_stride = t.strides.d[t.shape.ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int32_t tensor_d = t.shape.ndim - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= t.shape.d[tensor_d];
    bool run_ends = tensor_d == 0 ||
                    (t.shape.d[tensor_d - 1] != 1 && t.strides.d[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!run_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_shape.d[view_d] == 1)) {
      strides.d[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_shape.d[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return false;
    if (tensor_d > 0) {
      chunk_base_stride = t.strides.d[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  return view_d == -1;
}

}  // namespace

TensorRef compute::view(const Tensor& t, const int64_t* shape, int32_t ndim) {
  Dims new_shape = infer_shape("view", t, shape, ndim);
  Dims strides;
  if (!view_strides(t, new_shape, strides))
    fail(NNP_INVALID_ARGUMENT, "view: shape ", format_dims(new_shape), " is not compatible with the input's shape ",
         format_dims(t.shape), " and strides ", format_dims(t.strides),
         " (at least one dimension spans two contiguous runs); use reshape, which copies when needed");
  return make_view(t, new_shape, strides, t.offset);
}

TensorRef compute::reshape(const Tensor& t, const int64_t* shape, int32_t ndim) {
  Dims new_shape = infer_shape("reshape", t, shape, ndim);
  Dims strides;
  if (view_strides(t, new_shape, strides)) return make_view(t, new_shape, strides, t.offset);
  TensorRef packed = contiguous(t);
  TensorRef out = make_view(*packed, new_shape, contiguous_strides(new_shape), packed->offset);
  out->is_view = false;  // of a fresh copy: nothing else sees this data
  return out;
}

TensorRef compute::transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  int32_t a = wrap_dim("transpose", dim0, t.shape.ndim), b = wrap_dim("transpose", dim1, t.shape.ndim);
  if (t.shape.ndim == 0) return TensorRef::share(&t);
  Dims shape = t.shape, strides = t.strides;
  std::swap(shape.d[a], shape.d[b]);
  std::swap(strides.d[a], strides.d[b]);
  return make_view(t, shape, strides, t.offset);
}

TensorRef compute::permute(const Tensor& t, const int32_t* dims, int32_t ndim) {
  if (ndim != t.shape.ndim)
    fail(NNP_INVALID_ARGUMENT, "permute: got ", ndim, " dimensions for a tensor of shape ", format_dims(t.shape), " (",
         t.shape.ndim, " dimensions)");
  if (ndim > 0 && dims == nullptr) fail(NNP_INVALID_ARGUMENT, "permute: dims is NULL");
  Dims shape, strides;
  shape.ndim = strides.ndim = ndim;
  bool seen[NNP_MAX_DIMS] = {};
  for (int32_t i = 0; i < ndim; ++i) {
    int32_t d = wrap_dim("permute", dims[i], ndim);
    if (seen[d]) fail(NNP_INVALID_ARGUMENT, "permute: dimension ", d, " appears more than once");
    seen[d] = true;
    shape.d[i] = t.shape.d[d];
    strides.d[i] = t.strides.d[d];
  }
  return make_view(t, shape, strides, t.offset);
}

TensorRef compute::slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (t.shape.ndim == 0) fail(NNP_INVALID_ARGUMENT, "slice: cannot slice a 0-d tensor");
  int32_t d = wrap_dim("slice", dim, t.shape.ndim);
  if (step <= 0) fail(NNP_INVALID_ARGUMENT, "slice: step must be positive, got ", step);
  int64_t size = t.shape.d[d];
  auto clamp = [size](int64_t i) {
    if (i < 0) i += size;
    return i < 0 ? 0 : (i > size ? size : i);
  };
  start = clamp(start);
  end = clamp(end);
  Dims shape = t.shape, strides = t.strides;
  // Written so that no huge step overflows (PyTorch's answer: one element).
  shape.d[d] = end > start ? 1 + (end - start - 1) / step : 0;
  // A stride of a dimension of one element or none is never used; step * stride
  // overflows only then (step is at most the size otherwise).
  strides.d[d] = shape.d[d] > 1 ? t.strides.d[d] * step : t.strides.d[d];
  return make_view(t, shape, strides, t.offset + start * t.strides.d[d]);
}

TensorRef compute::expand(const Tensor& t, const int64_t* shape, int32_t ndim) {
  if (ndim < t.shape.ndim || ndim > NNP_MAX_DIMS)
    fail(NNP_INVALID_ARGUMENT, "expand: the number of sizes (", ndim, ") must be at least the tensor's dimensions (",
         t.shape.ndim, ") and at most ", NNP_MAX_DIMS);
  if (ndim > 0 && shape == nullptr) fail(NNP_INVALID_ARGUMENT, "expand: shape is NULL");
  Dims out, strides;
  out.ndim = strides.ndim = ndim;
  int32_t lead = ndim - t.shape.ndim;
  for (int32_t i = 0; i < ndim; ++i) {
    int32_t src = i - lead;
    if (src < 0) {
      if (shape[i] < 0)
        fail(NNP_INVALID_ARGUMENT, "expand: size -1 is not allowed in a leading, new dimension (",
             format_dims(shape, ndim), ")");
      out.d[i] = shape[i];
      strides.d[i] = 0;
      continue;
    }
    int64_t have = t.shape.d[src];
    int64_t want = shape[i] == -1 ? have : shape[i];
    if (want < 0) fail(NNP_INVALID_ARGUMENT, "expand: invalid size ", shape[i], " in ", format_dims(shape, ndim));
    if (have != want && have != 1)
      fail(NNP_SHAPE_MISMATCH, "expand: the expanded size ", want, " must match the existing size ", have,
           " at non-singleton dimension ", i, "; target sizes ", format_dims(shape, ndim), ", tensor sizes ",
           format_dims(t.shape));
    out.d[i] = want;
    strides.d[i] = have == want ? t.strides.d[src] : 0;
  }
  require_sizes_fit("expand", out.d, ndim);
  return make_view(t, out, strides, t.offset);
}

TensorRef compute::squeeze(const Tensor& t, int64_t dim, bool all_dims) {
  int32_t only = all_dims ? -1 : wrap_dim("squeeze", dim, t.shape.ndim);
  Dims shape, strides;
  for (int32_t i = 0; i < t.shape.ndim; ++i) {
    bool drop = t.shape.d[i] == 1 && (all_dims || i == only);
    if (drop) continue;
    shape.d[shape.ndim++] = t.shape.d[i];
    strides.d[strides.ndim++] = t.strides.d[i];
  }
  return make_view(t, shape, strides, t.offset);
}

TensorRef compute::unsqueeze(const Tensor& t, int64_t dim) {
  int32_t ndim = t.shape.ndim;
  if (dim < -(ndim + 1) || dim > ndim)
    fail(NNP_INVALID_ARGUMENT, "unsqueeze: dimension ", dim, " is out of range for a tensor of ", ndim,
         " dimensions (expected ", -(ndim + 1), " to ", ndim, ")");
  if (ndim == NNP_MAX_DIMS)
    fail(NNP_INVALID_ARGUMENT, "unsqueeze: the tensor already has the maximum of ", NNP_MAX_DIMS, " dimensions");
  int32_t d = static_cast<int32_t>(dim < 0 ? dim + ndim + 1 : dim);
  Dims shape, strides;
  shape.ndim = strides.ndim = ndim + 1;
  for (int32_t i = 0, src = 0; i <= ndim; ++i) {
    if (i == d) {
      shape.d[i] = 1;
      strides.d[i] = d < ndim ? t.strides.d[d] * t.shape.d[d] : 1;
      continue;
    }
    shape.d[i] = t.shape.d[src];
    strides.d[i] = t.strides.d[src];
    ++src;
  }
  return make_view(t, shape, strides, t.offset);
}

}  // namespace nnp::core
