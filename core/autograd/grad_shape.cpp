// Backward of views, copies and conversions.
#include "../dtype.hpp"
#include "../error.hpp"
#include "../onnx/trace.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"
#include "views.hpp"

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

}  // namespace

TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim) {
  onnx::OpScope trace;
  TensorRef out = core::view(t, shape, ndim);
  if (auto* g = trace.recorder()) onnx::record_reshape(*g, t, *out);
  track_view(*out, t);
  if (should_record({&t})) record_reshape_back("ViewBackward", t, *out);
  return out;
}

TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim) {
  onnx::OpScope trace;
  TensorRef out = core::reshape(t, shape, ndim);
  if (auto* g = trace.recorder()) onnx::record_reshape(*g, t, *out);
  track_view(*out, t);
  if (should_record({&t})) record_reshape_back("ReshapeBackward", t, *out);
  return out;
}

TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims) {
  onnx::OpScope trace;
  TensorRef out = core::squeeze(t, dim, all_dims);
  if (auto* g = trace.recorder()) onnx::record_reshape(*g, t, *out);
  track_view(*out, t);
  if (should_record({&t})) record_reshape_back("SqueezeBackward", t, *out);
  return out;
}

TensorRef unsqueeze(const Tensor& t, int64_t dim) {
  onnx::OpScope trace;
  TensorRef out = core::unsqueeze(t, dim);
  if (auto* g = trace.recorder()) onnx::record_reshape(*g, t, *out);
  track_view(*out, t);
  if (should_record({&t})) record_reshape_back("UnsqueezeBackward", t, *out);
  return out;
}

TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  onnx::OpScope trace;
  TensorRef out = core::transpose(t, dim0, dim1);
  if (auto* g = trace.recorder()) onnx::record_permute(*g, t, transpose_order(t, dim0, dim1), *out);
  track_view(*out, t);
  if (should_record({&t}))
    record("TransposeBackward", {&t}, {out.get()},
           [dim0, dim1](Grads& g) { return Grads{core::transpose(*g[0], dim0, dim1)}; });
  return out;
}

TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim) {
  onnx::OpScope trace;
  TensorRef out = core::permute(t, dims, ndim);
  if (auto* g = trace.recorder()) onnx::record_permute(*g, t, permute_order(dims, ndim), *out);
  track_view(*out, t);
  if (!should_record({&t})) return out;
  std::vector<int32_t> inverse(static_cast<size_t>(ndim));
  for (int32_t i = 0; i < ndim; ++i) inverse[static_cast<size_t>(wrap_dim("permute", dims[i], ndim))] = i;
  record("PermuteBackward", {&t}, {out.get()}, [inverse](Grads& g) {
    return Grads{core::permute(*g[0], inverse.data(), static_cast<int32_t>(inverse.size()))};
  });
  return out;
}

TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  onnx::OpScope trace;
  TensorRef out = core::slice(t, dim, start, end, step);
  if (auto* g = trace.recorder()) onnx::record_slice(*g, t, dim, start, end, step, *out);
  track_view(*out, t);
  if (!should_record({&t})) return out;
  const Dims shape = t.shape;
  record("SliceBackward", {&t}, {out.get()}, [shape, dim, start, end, step](Grads& g) {
    TensorRef full_grad = zeros(shape, g[0]);
    TensorRef window = core::slice(*full_grad, dim, start, end, step);
    core::copy_into(*window, *g[0]);
    return Grads{full_grad};
  });
  return out;
}

TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim) {
  onnx::OpScope trace;
  TensorRef out = core::expand(t, shape, ndim);
  if (auto* g = trace.recorder()) onnx::record_expand(*g, t, *out);
  track_view(*out, t);
  if (!should_record({&t})) return out;
  const Dims input = t.shape;
  record("ExpandBackward", {&t}, {out.get()}, [input](Grads& g) { return Grads{sum_to(g[0], input)}; });
  return out;
}

TensorRef contiguous(const Tensor& t) {
  onnx::OpScope trace;
  TensorRef out = core::contiguous(t);
  if (auto* g = trace.recorder()) onnx::record_copy(*g, t, *out);
  if (out.get() != &t && should_record({&t}))
    record("ContiguousBackward", {&t}, {out.get()}, [](Grads& g) { return Grads{g[0]}; });
  return out;
}

TensorRef clone(const Tensor& t) {
  onnx::OpScope trace;
  TensorRef out = core::clone(t);
  if (auto* g = trace.recorder()) onnx::record_copy(*g, t, *out);
  if (should_record({&t})) record("CloneBackward", {&t}, {out.get()}, [](Grads& g) { return Grads{g[0]}; });
  return out;
}

TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype) {
  onnx::OpScope trace;
  TensorRef out = core::to(t, device, dtype);
  if (auto* g = trace.recorder()) onnx::record_copy(*g, t, *out);
  if (out.get() == &t || !should_record({&t})) return out;
  if (!is_floating(dtype)) return out;  // integer results carry no gradient
  const nnp_device from_device = t.device;
  const nnp_dtype from_dtype = t.dtype;
  record("ToCopyBackward", {&t}, {out.get()},
         [from_device, from_dtype](Grads& g) { return Grads{core::to(*g[0], from_device, from_dtype)}; });
  return out;
}

void copy_into(Tensor& dst, const Tensor& src) {
  onnx::OpScope trace;
  if (trace.recorder()) onnx::refuse_op("an in-place copy (copy_into) during forward");
  if (grad_enabled() && requires_grad(dst))
    fail(NNP_INVALID_ARGUMENT, "copy_into: the destination (shape ", format_dims(dst.shape),
         ") requires grad; in-place writes to it would corrupt autograd. Write under no_grad (as optimizers do) "
         "or into a detached tensor");
  core::copy_into(dst, src);
}

void assign(Tensor& dst, const Tensor& value) {
  onnx::OpScope trace;
  if (trace.recorder()) onnx::refuse_op("an in-place write (assign) during forward");
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
    record("FillBackward", {&dst}, {&dst}, [](Grads& g) { return Grads{zeros_like(g[0])}; });
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

}  // namespace nnp::core::autograd
