// Backward of views, copies and conversions.
#include "../dtype.hpp"
#include "../error.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_compute.hpp"
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
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_slice(g, t(), dim, start, end, step, *out);
  }
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
