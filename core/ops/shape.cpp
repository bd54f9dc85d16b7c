// Zero-copy views (every view shares the input's storage; reshape copies
// only when no view can express the result), copies within and across
// devices, dtype conversion, contiguous and clone, the in-place copy and
// assignment: compute, backward, descriptions.
#include <vector>

#include "../autograd/functions.hpp"
#include "../autograd/grad_math.hpp"
#include "../autograd/record.hpp"
#include "../autograd/views.hpp"
#include "../capture/tape.hpp"
#include "../device.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

// The ops' own work (their compute), called by their descriptions below.
namespace nnp::core::compute {
void copy_into(Tensor& dst, const Tensor& src);
TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype);
TensorRef contiguous(const Tensor& t);
TensorRef clone(const Tensor& t);
TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1);
TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim);
TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims);
TensorRef unsqueeze(const Tensor& t, int64_t dim);
}  // namespace nnp::core::compute

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

namespace nnp::core {
namespace {

// Same device, or both devices in plain host memory (one kernel can read
// the other's data), so the destination's copy kernel does all the work.
bool directly_copyable(const Tensor& dst, const Tensor& src) {
  bool same = dst.device.backend == src.device.backend && dst.device.index == src.device.index;
  return same || (dst.backend().host_memory() && src.backend().host_memory());
}

void kernel_copy(Tensor& dst, const Tensor& src) {
  nnp_view vsrc = broadcast_view(src, dst.shape);
  nnp_view vdst = kernel_view(dst);
  nnp_view* views[] = {&vdst, &vsrc};
  coalesce(views, 2);
  run_kernel(dst, "copy", dst.backend().kernels().copy(&kernel_ctx(dst), &vsrc, &vdst));
}

// Moves src's elements to dst's device unchanged (contiguous, same dtype).
TensorRef stage_on(const Tensor& src, nnp_device device) {
  TensorRef packed = contiguous(src);
  TensorRef staged = make_tensor(src.shape, src.dtype, device);
  size_t bytes = staged->storage->bytes;
  if (bytes == 0) return staged;
  const BackendRecord& from = packed->backend();
  const BackendRecord& to_backend = staged->backend();
  const void* host = packed->data();
  if (capture::any_recording())
    capture::refuse("the step copies a tensor from " + device_name(packed->device) + " to " + device_name(device) +
                    " through the host: keep the step on one device");
  std::vector<unsigned char> buffer;
  if (!from.host_memory()) {
    buffer.resize(bytes);
    check_plugin_status(
        from.table().copy_to_host(from.table().state, packed->device.index, buffer.data(), packed->data(), bytes),
        from.name().c_str(), "copy to host");
    host = buffer.data();
  }
  check_plugin_status(
      to_backend.table().copy_from_host(to_backend.table().state, device.index, staged->data(), host, bytes),
      to_backend.name().c_str(), "copy from host");
  return staged;
}

}  // namespace

void compute::copy_into(Tensor& dst, const Tensor& src) {
  if (broadcast_shapes("copy_into", src.shape, dst.shape) != dst.shape)
    fail(NNP_SHAPE_MISMATCH, "copy_into: source shape ", format_dims(src.shape),
         " cannot be broadcast to destination shape ", format_dims(dst.shape));
  if (dst.numel == 0) return;
  dst.storage->version.fetch_add(1, std::memory_order_relaxed);  // an in-place write
  if (!directly_copyable(dst, src)) {
    TensorRef staged = stage_on(src, dst.device);
    kernel_copy(dst, *staged);
    return;
  }
  if (dst.storage == src.storage) {  // kernels assume no overlap
    TensorRef copy = clone(src);
    kernel_copy(dst, *copy);
    return;
  }
  kernel_copy(dst, src);
}

void copy_to_host(const Tensor& t, void* dst, size_t bytes) {
  size_t expected = static_cast<size_t>(t.numel) * dtype_size(t.dtype);
  if (bytes != expected)
    fail(NNP_INVALID_ARGUMENT, "copy_to_host: buffer holds ", bytes, " bytes but the ", dtype_name(t.dtype),
         " tensor of shape ", format_dims(t.shape), " needs ", expected);
  if (expected == 0) return;
  if (dst == nullptr) fail(NNP_INVALID_ARGUMENT, "copy_to_host: destination is NULL");
  TensorRef packed = contiguous(t);
  const nnp_backend& table = packed->backend().table();
  check_plugin_status(table.copy_to_host(table.state, packed->device.index, dst, packed->data(), bytes),
                      packed->backend().name().c_str(), "copy_to_host");
  if (capture::any_recording()) capture::note_host_read(*packed, dst, bytes);
}

TensorRef compute::to(const Tensor& t, nnp_device device, nnp_dtype dtype) {
  check_dtype("to", dtype);
  check_device("to", device);
  if (t.device.backend == device.backend && t.device.index == device.index && t.dtype == dtype)
    return TensorRef::share(&t);
  // To another device unchanged: the staged copy is the result (copying it
  // again there would take a second pass, and a kernel the device may lack).
  if (t.dtype == dtype && !(t.device.backend == device.backend && t.device.index == device.index) &&
      !(backend_of(device).host_memory() && t.backend().host_memory()))
    return stage_on(t, device);
  TensorRef out = make_tensor(t.shape, dtype, device);
  copy_into(*out, t);
  return out;
}

TensorRef compute::contiguous(const Tensor& t) { return t.is_contiguous() ? TensorRef::share(&t) : clone(t); }

TensorRef compute::clone(const Tensor& t) {
  TensorRef out = make_tensor_like(t.shape, t.dtype, t);
  if (t.numel > 0) kernel_copy(*out, t);
  return out;
}

}  // namespace nnp::core

namespace nnp::core::autograd {

using namespace math;

namespace {

// The Transpose permutations of transpose() and permute().
std::vector<int32_t> transpose_order(const Tensor& t, int64_t dim0, int64_t dim1) {
  std::vector<int32_t> order(static_cast<size_t>(t.shape.ndim));
  for (int32_t i = 0; i < t.shape.ndim; ++i) order[static_cast<size_t>(i)] = i;
  std::swap(order[static_cast<size_t>(wrap_dim("transpose", dim0, t.shape.ndim))],
            order[static_cast<size_t>(wrap_dim("transpose", dim1, t.shape.ndim))]);
  return order;
}
std::vector<int32_t> permute_order(const int32_t* dims, int32_t ndim) {
  std::vector<int32_t> order;
  for (int32_t i = 0; i < ndim; ++i) order.push_back(wrap_dim("permute", dims[i], ndim));
  return order;
}

// Views and copies whose gradient is the incoming one reshaped back.
void record_reshape_back(const char* name, const Tensor& input, Tensor& out) {
  const Dims shape = input.shape;
  record(name, {&input}, {&out}, [shape](Grads& g) { return Grads{core::reshape(*g[0], shape.d, shape.ndim)}; });
}

using dispatch::OpId;

// A view op's description: one input, its result a view of it (the
// dispatcher tracks it as a differentiable view on the public face).
struct ViewOpBase {
  const Tensor* in[1];
  static constexpr bool is_view = true;
  dispatch::Inputs inputs() const { return {in, 1}; }
  const Tensor& t() const { return *in[0]; }
};

// view, reshape, squeeze, unsqueeze: the gradient is reshaped back, the
// ONNX form is a Reshape to the result's shape.
struct ViewOp : ViewOpBase {
  const int64_t* shape;
  int32_t ndim;
  OpId id() const { return OpId::VIEW; }
  TensorRef compute() const { return compute::view(t(), shape, ndim); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_reshape(g, t(), *out); }
  void differentiate(TensorRef& out) const { record_reshape_back(dispatch::schema(id()).backward, t(), *out); }
};

struct ReshapeOp : ViewOpBase {
  const int64_t* shape;
  int32_t ndim;
  OpId id() const { return OpId::RESHAPE; }
  TensorRef compute() const { return compute::reshape(t(), shape, ndim); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_reshape(g, t(), *out); }
  void differentiate(TensorRef& out) const { record_reshape_back(dispatch::schema(id()).backward, t(), *out); }
};

struct SqueezeOp : ViewOpBase {
  int64_t dim;
  bool all_dims;
  OpId id() const { return OpId::SQUEEZE; }
  TensorRef compute() const { return compute::squeeze(t(), dim, all_dims); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_reshape(g, t(), *out); }
  void differentiate(TensorRef& out) const { record_reshape_back(dispatch::schema(id()).backward, t(), *out); }
};

struct UnsqueezeOp : ViewOpBase {
  int64_t dim;
  OpId id() const { return OpId::UNSQUEEZE; }
  TensorRef compute() const { return compute::unsqueeze(t(), dim); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_reshape(g, t(), *out); }
  void differentiate(TensorRef& out) const { record_reshape_back(dispatch::schema(id()).backward, t(), *out); }
};

struct TransposeOp : ViewOpBase {
  int64_t dim0, dim1;
  OpId id() const { return OpId::TRANSPOSE; }
  TensorRef compute() const { return compute::transpose(t(), dim0, dim1); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_permute(g, t(), transpose_order(t(), dim0, dim1), *out);
  }
  void differentiate(TensorRef& out) const {
    const int64_t d0 = dim0, d1 = dim1;
    record(dispatch::schema(id()).backward, {&t()}, {out.get()},
           [d0, d1](Grads& g) { return Grads{core::transpose(*g[0], d0, d1)}; });
  }
};

struct PermuteOp : ViewOpBase {
  const int32_t* dims;
  int32_t ndim;
  OpId id() const { return OpId::PERMUTE; }
  TensorRef compute() const { return compute::permute(t(), dims, ndim); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_permute(g, t(), permute_order(dims, ndim), *out);
  }
  void differentiate(TensorRef& out) const {
    std::vector<int32_t> inverse(static_cast<size_t>(ndim));
    for (int32_t i = 0; i < ndim; ++i) inverse[static_cast<size_t>(wrap_dim("permute", dims[i], ndim))] = i;
    record(dispatch::schema(id()).backward, {&t()}, {out.get()}, [inverse](Grads& g) {
      return Grads{core::permute(*g[0], inverse.data(), static_cast<int32_t>(inverse.size()))};
    });
  }
};

struct SliceOp : ViewOpBase {
  int64_t dim, start, end, step;
  OpId id() const { return OpId::SLICE; }
  TensorRef compute() const { return compute::slice(t(), dim, start, end, step); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_slice(g, t(), dim, start, end, step, *out); }
  void differentiate(TensorRef& out) const {
    const Dims shape = t().shape;
    const int64_t d = dim, from = start, to = end, by = step;
    record(dispatch::schema(id()).backward, {&t()}, {out.get()}, [shape, d, from, to, by](Grads& g) {
      TensorRef full_grad = zeros(shape, g[0]);
      TensorRef window = core::slice(*full_grad, d, from, to, by);
      core::copy_into(*window, *g[0]);
      return Grads{full_grad};
    });
  }
};

struct ExpandOp : ViewOpBase {
  const int64_t* shape;
  int32_t ndim;
  OpId id() const { return OpId::EXPAND; }
  TensorRef compute() const { return compute::expand(t(), shape, ndim); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_expand(g, t(), *out); }
  void differentiate(TensorRef& out) const {
    const Dims input = t().shape;
    record(dispatch::schema(id()).backward, {&t()}, {out.get()},
           [input](Grads& g) { return Grads{sum_to(g[0], input)}; });
  }
};

// contiguous, clone, to: the same values; the gradient passes through
// (converted back for to).
struct ContiguousOp {
  const Tensor* in[1];
  OpId id() const { return OpId::CONTIGUOUS; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::contiguous(*in[0]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_copy(g, *in[0], *out); }
  void differentiate(TensorRef& out) const {
    if (out.get() == in[0]) return;  // already contiguous: the input itself
    record(dispatch::schema(id()).backward, {in[0]}, {out.get()}, [](Grads& g) { return Grads{g[0]}; });
  }
};

struct CloneOp {
  const Tensor* in[1];
  OpId id() const { return OpId::CLONE; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::clone(*in[0]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_copy(g, *in[0], *out); }
  void differentiate(TensorRef& out) const {
    record(dispatch::schema(id()).backward, {in[0]}, {out.get()}, [](Grads& g) { return Grads{g[0]}; });
  }
};

struct ToOp {
  const Tensor* in[1];
  nnp_device device;
  nnp_dtype dtype;
  OpId id() const { return OpId::TO; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::to(*in[0], device, dtype); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_copy(g, *in[0], *out); }
  void differentiate(TensorRef& out) const {
    if (out.get() == in[0] || !is_floating(dtype)) return;  // unchanged, or integers: no gradient
    const nnp_device from_device = in[0]->device;
    const nnp_dtype from_dtype = in[0]->dtype;
    record(dispatch::schema(id()).backward, {in[0]}, {out.get()},
           [from_device, from_dtype](Grads& g) { return Grads{core::to(*g[0], from_device, from_dtype)}; });
  }
};

}  // namespace

using dispatch::Face;

TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim) {
  return dispatch::dispatch(ViewOp{{{&t}}, shape, ndim}, Face::PUBLIC);
}
TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim) {
  return dispatch::dispatch(ReshapeOp{{{&t}}, shape, ndim}, Face::PUBLIC);
}
TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims) {
  return dispatch::dispatch(SqueezeOp{{{&t}}, dim, all_dims}, Face::PUBLIC);
}
TensorRef unsqueeze(const Tensor& t, int64_t dim) { return dispatch::dispatch(UnsqueezeOp{{{&t}}, dim}, Face::PUBLIC); }
TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  return dispatch::dispatch(TransposeOp{{{&t}}, dim0, dim1}, Face::PUBLIC);
}
TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim) {
  return dispatch::dispatch(PermuteOp{{{&t}}, dims, ndim}, Face::PUBLIC);
}
TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return dispatch::dispatch(SliceOp{{{&t}}, dim, start, end, step}, Face::PUBLIC);
}
TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim) {
  return dispatch::dispatch(ExpandOp{{{&t}}, shape, ndim}, Face::PUBLIC);
}
TensorRef contiguous(const Tensor& t) { return dispatch::dispatch(ContiguousOp{{&t}}, Face::PUBLIC); }
TensorRef clone(const Tensor& t) { return dispatch::dispatch(CloneOp{{&t}}, Face::PUBLIC); }
TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype) {
  return dispatch::dispatch(ToOp{{&t}, device, dtype}, Face::PUBLIC);
}

namespace {

struct CopyOp {
  const Tensor* in[2];  // dst, src
  OpId id() const { return OpId::COPY; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  void compute() const { compute::copy_into(const_cast<Tensor&>(*in[0]), *in[1]); }
};

// An in-place write continues dst's own history rather than starting a node
// from its inputs, so it records as its compute runs (the table's backward
// names what it records when value has no history).
void assign_values(Tensor& dst, const Tensor& value);

struct AssignOp {
  const Tensor* in[2];  // dst, value
  OpId id() const { return OpId::ASSIGN; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  void compute() const { assign_values(const_cast<Tensor&>(*in[0]), *in[1]); }
};

}  // namespace

void copy_into(Tensor& dst, const Tensor& src) {
  if (grad_enabled() && requires_grad(dst))
    fail(NNP_INVALID_ARGUMENT, "copy_into: the destination (shape ", format_dims(dst.shape),
         ") requires grad; in-place writes to it would corrupt autograd. Write under no_grad (as optimizers do) "
         "or into a detached tensor");
  dispatch::dispatch(CopyOp{{&dst, &src}}, dispatch::Face::PUBLIC);
}

void assign(Tensor& dst, const Tensor& value) { dispatch::dispatch(AssignOp{{&dst, &value}}, dispatch::Face::PUBLIC); }

namespace {

void assign_values(Tensor& dst, const Tensor& value) {
  const bool recording = grad_enabled() && (requires_grad(dst) || requires_grad(value));
  if (grad_enabled() && requires_grad(dst) && !dst.autograd->grad_fn)
    fail(NNP_INVALID_ARGUMENT, "a leaf Variable that requires grad is being used in an in-place operation (shape ",
         format_dims(dst.shape), "); write under no_grad (as optimizers and initialisers do), or to a clone()");
  check_no_internal_overlap(dst);
  const bool view = recording && dst.is_view;
  if (view && !is_tracked_view(dst))
    fail(NNP_UNIMPLEMENTED, "an in-place operation on an alias (shape ", format_dims(dst.shape),
         ": a detach() result, or a view made under no_grad) while autograd records; use the out-of-place op, or "
         "clone() it first");
  TensorRef v = TensorRef::share(&value);
  if (v->dtype != dst.dtype || v->device.backend != dst.device.backend || v->device.index != dst.device.index)
    v = to(*v, dst.device, dst.dtype);
  if (!(v->shape == dst.shape)) v = expand(*v, dst.shape.d, dst.shape.ndim);
  if (view) return assign_to_view(dst, v);
  core::copy_into(dst, *v);
  if (!recording) return;
  if (!requires_grad(*v)) {  // constant values: the old ones get a zero gradient, dst keeps requiring grad
    record(dispatch::schema(OpId::ASSIGN).backward, {&dst}, {&dst}, [](Grads& g) { return Grads{zeros_like(g[0])}; });
    return;
  }
  const AutogradMeta& from = *v->autograd;
  const bool observed = from.grad_fn && (from.retains_grad || [&] {
                          for (const auto& entry : from.grad_fn->tensor_hooks)
                            if (entry.second.first == from.output_nr) return true;
                          return false;
                        }());
  if (from.grad_fn && !observed) {  // dst continues value's history (AddBackward after add_)
    set_history(dst, from.grad_fn, from.output_nr);
    return;
  }
  record("CopyBackwards", {v.get()}, {&dst}, [](Grads& g) { return Grads{g[0]}; });
}

}  // namespace

}  // namespace nnp::core::autograd

namespace nnp::core {

using dispatch::Face;

TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim) {
  return dispatch::dispatch(autograd::ViewOp{{{&t}}, shape, ndim}, Face::INTERNAL);
}
TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim) {
  return dispatch::dispatch(autograd::ReshapeOp{{{&t}}, shape, ndim}, Face::INTERNAL);
}
TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims) {
  return dispatch::dispatch(autograd::SqueezeOp{{{&t}}, dim, all_dims}, Face::INTERNAL);
}
TensorRef unsqueeze(const Tensor& t, int64_t dim) {
  return dispatch::dispatch(autograd::UnsqueezeOp{{{&t}}, dim}, Face::INTERNAL);
}
TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  return dispatch::dispatch(autograd::TransposeOp{{{&t}}, dim0, dim1}, Face::INTERNAL);
}
TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim) {
  return dispatch::dispatch(autograd::PermuteOp{{{&t}}, dims, ndim}, Face::INTERNAL);
}
TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return dispatch::dispatch(autograd::SliceOp{{{&t}}, dim, start, end, step}, Face::INTERNAL);
}
TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim) {
  return dispatch::dispatch(autograd::ExpandOp{{{&t}}, shape, ndim}, Face::INTERNAL);
}
TensorRef contiguous(const Tensor& t) { return dispatch::dispatch(autograd::ContiguousOp{{&t}}, Face::INTERNAL); }
TensorRef clone(const Tensor& t) { return dispatch::dispatch(autograd::CloneOp{{&t}}, Face::INTERNAL); }
TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype) {
  return dispatch::dispatch(autograd::ToOp{{&t}, device, dtype}, Face::INTERNAL);
}
void copy_into(Tensor& dst, const Tensor& src) { dispatch::dispatch(autograd::CopyOp{{&dst, &src}}, Face::INTERNAL); }

}  // namespace nnp::core
