// cat, index_select, gather and scatter_add: compute, backward, descriptions.
#include <vector>

#include "../autograd/functions.hpp"
#include "../autograd/grad_math.hpp"
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

// The ops' own work (their compute), called by their descriptions below.
namespace nnp::core::compute {
TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim);
TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
}  // namespace nnp::core::compute

namespace nnp::core {
namespace {

// Index tensors are i64 on the kernel side; i32 indices are widened.
TensorRef as_index(const char* op, const Tensor& x, const Tensor& index) {
  check_same_device(op, x, index);
  if (index.dtype == NNP_I64) return TensorRef::share(&index);
  if (index.dtype == NNP_I32) return to(index, index.device, NNP_I64);
  fail(NNP_DTYPE_MISMATCH, op, ": index must be i64 (or i32), got ", dtype_name(index.dtype), " of shape ",
       format_dims(index.shape));
}

}  // namespace

TensorRef compute::cat(const Tensor* const* tensors, int32_t count, int64_t dim) {
  if (count <= 0 || tensors == nullptr) fail(NNP_INVALID_ARGUMENT, "cat: needs at least one tensor");
  for (int32_t i = 0; i < count; ++i)
    if (tensors[i] == nullptr) fail(NNP_INVALID_ARGUMENT, "cat: tensor ", i, " is NULL");
  const Tensor& first = *tensors[0];
  if (first.shape.ndim == 0) fail(NNP_INVALID_ARGUMENT, "cat: zero-dimensional tensor 0 cannot be concatenated");
  int32_t d = wrap_dim("cat", dim, first.shape.ndim);
  Dims shape = first.shape;
  shape.d[d] = 0;
  for (int32_t i = 0; i < count; ++i) {
    const Tensor& t = *tensors[i];
    check_same_device("cat", first, t);
    check_same_dtype("cat", first, t);
    bool same_rank = t.shape.ndim == first.shape.ndim;
    for (int32_t j = 0; same_rank && j < first.shape.ndim; ++j)
      if (j != d && t.shape.d[j] != first.shape.d[j]) same_rank = false;
    if (!same_rank)
      fail(NNP_SHAPE_MISMATCH, "cat: tensor ", i, " has shape ", format_dims(t.shape), " but tensor 0 has shape ",
           format_dims(first.shape), "; sizes must match except in dimension ", d);
    shape.d[d] += t.shape.d[d];
  }
  TensorRef out = make_tensor_like(shape, first.dtype, first);
  int64_t offset = 0;
  for (int32_t i = 0; i < count; ++i) {
    int64_t size = tensors[i]->shape.d[d];
    if (size == 0 || tensors[i]->numel == 0) {
      offset += size;
      continue;
    }
    TensorRef part = slice(*out, d, offset, offset + size, 1);
    copy_into(*part, *tensors[i]);
    offset += size;
  }
  return out;
}

TensorRef compute::index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  TensorRef idx = as_index("index_select", x, index);
  if (idx->shape.ndim > 1)
    fail(NNP_SHAPE_MISMATCH, "index_select: index must be 1-D, got shape ", format_dims(idx->shape));
  if (x.shape.ndim == 0) fail(NNP_INVALID_ARGUMENT, "index_select: x must have at least one dimension");
  int32_t d = wrap_dim("index_select", dim, x.shape.ndim);
  Dims shape = x.shape;
  shape.d[d] = idx->numel;
  TensorRef out = make_tensor_like(shape, x.dtype, x);
  if (out->numel == 0) return out;
  if (x.shape.d[d] == 0)
    fail(NNP_INVALID_ARGUMENT, "index_select: cannot select from dimension ", d, " of size 0 (shape ",
         format_dims(x.shape), ")");
  TensorRef flat = idx->shape.ndim == 0 ? unsqueeze(*idx, 0) : idx;
  nnp_view vx = kernel_view(x), vi = kernel_view(*flat), vo = kernel_view(*out);
  run_kernel(x, "index_select", x.backend().kernels().index_select(&kernel_ctx(x), &vx, d, &vi, &vo));
  return out;
}

TensorRef compute::gather(const Tensor& x, int64_t dim, const Tensor& index) {
  TensorRef idx = as_index("gather", x, index);
  int32_t d = wrap_dim("gather", dim, x.shape.ndim);
  if (idx->shape.ndim != x.shape.ndim)
    fail(NNP_SHAPE_MISMATCH, "gather: index shape ", format_dims(idx->shape), " and input shape ", format_dims(x.shape),
         " must have the same number of dimensions");
  for (int32_t i = 0; i < x.shape.ndim; ++i)
    if (i != d && idx->shape.d[i] > x.shape.d[i])
      fail(NNP_SHAPE_MISMATCH, "gather: index shape ", format_dims(idx->shape), " exceeds input shape ",
           format_dims(x.shape), " at dimension ", i);
  TensorRef out = make_tensor_like(idx->shape, x.dtype, x);
  if (out->numel == 0) return out;
  nnp_view vx = kernel_view(x), vi = kernel_view(*idx), vo = kernel_view(*out);
  run_kernel(x, "gather", x.backend().kernels().gather(&kernel_ctx(x), &vx, d, &vi, &vo));
  return out;
}

TensorRef compute::scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  TensorRef idx = as_index("scatter_add", x, index);
  check_same_device("scatter_add", x, src);
  check_same_dtype("scatter_add", x, src);
  if (x.dtype == NNP_BOOL) fail(NNP_DTYPE_MISMATCH, "scatter_add: not defined for bool tensors");
  int32_t d = wrap_dim("scatter_add", dim, x.shape.ndim);
  if (idx->shape.ndim != x.shape.ndim || src.shape.ndim != x.shape.ndim)
    fail(NNP_SHAPE_MISMATCH, "scatter_add: input ", format_dims(x.shape), ", index ", format_dims(idx->shape),
         " and src ", format_dims(src.shape), " must have the same number of dimensions");
  for (int32_t i = 0; i < x.shape.ndim; ++i)
    if (idx->shape.d[i] > src.shape.d[i] || (i != d && idx->shape.d[i] > x.shape.d[i]))
      fail(NNP_SHAPE_MISMATCH, "scatter_add: index shape ", format_dims(idx->shape), " exceeds src shape ",
           format_dims(src.shape), " or input shape ", format_dims(x.shape), " at dimension ", i);
  TensorRef out = clone(x);
  if (idx->numel == 0) return out;
  // src is read over the index's extent only.
  TensorRef src_part = make_view(src, idx->shape, src.strides, src.offset);
  nnp_view vo = kernel_view(*out), vi = kernel_view(*idx), vs = kernel_view(*src_part);
  run_kernel(x, "scatter_add", x.backend().kernels().scatter_add(&kernel_ctx(x), &vo, d, &vi, &vs));
  return out;
}

}  // namespace nnp::core

namespace nnp::core::autograd {

using namespace math;
using dispatch::OpId;
using dispatch::schema;

namespace {

void cat_backward(const Tensor* const* tensors, int32_t count, int64_t dim, TensorRef& out) {
  const int32_t d = wrap_dim("cat", dim, tensors[0]->shape.ndim);
  std::vector<int64_t> sizes;
  for (int32_t i = 0; i < count; ++i) sizes.push_back(tensors[i]->shape.d[d]);
  auto node = std::make_shared<FunctionNode>(schema(OpId::CAT).backward, [sizes, d](Grads& g) {
    Grads parts;
    int64_t offset = 0;
    for (int64_t size : sizes) {
      parts.push_back(core::slice(*g[0], d, offset, offset + size, 1));
      offset += size;
    }
    return parts;
  });
  node->sequence_nr = next_sequence_nr();
  for (int32_t i = 0; i < count; ++i) node->next_edges.push_back(gradient_edge(*tensors[i]));
  node->outputs.push_back(OutputMeta{out->shape, out->dtype, out->device});
  set_history(*out, node, 0);
  return;
}

void index_select_backward(const Tensor& x, int64_t dim, const Tensor& index, TensorRef& out) {
  const Dims shape = x.shape;
  const int32_t d = wrap_dim("index_select", dim, x.shape.ndim);
  SavedTensor idx = share(index);
  record(schema(OpId::INDEX_SELECT).backward, {&x, nullptr}, {out.get()}, [shape, d, idx](Grads& g) {
    // Scatter each selected slice back: the index laid along dim, broadcast
    // over the other dimensions of the gradient.
    TensorRef wide = core::to(*idx, idx->device, NNP_I64);
    Dims along;
    along.ndim = g[0]->shape.ndim;
    for (int32_t i = 0; i < along.ndim; ++i) along.d[i] = i == d ? g[0]->shape.d[d] : 1;
    TensorRef laid = core::reshape(*wide, along.d, along.ndim);
    TensorRef spread = core::expand(*laid, g[0]->shape.d, g[0]->shape.ndim);
    return Grads{core::scatter_add(*zeros(shape, g[0]), d, *spread, *g[0]), TensorRef()};
  });
  return;
}

void gather_backward(const Tensor& x, int64_t dim, const Tensor& index, TensorRef& out) {
  const Dims shape = x.shape;
  SavedTensor idx = share(index);
  record(schema(OpId::GATHER).backward, {&x, nullptr}, {out.get()}, [shape, dim, idx](Grads& g) {
    return Grads{core::scatter_add(*zeros(shape, g[0]), dim, *idx, *g[0]), TensorRef()};
  });
  return;
}

void scatter_add_backward(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, TensorRef& out) {
  SavedTensor idx = share(index);
  const Dims src_shape = src.shape;
  record(schema(OpId::SCATTER_ADD).backward, {&x, nullptr, &src}, {out.get()}, [dim, idx, src_shape](Grads& g) {
    // src's gradient is read where src was added; outside the index's extent
    // src did not take part.
    TensorRef picked = core::gather(*g[0], dim, *idx);
    TensorRef gsrc = picked;
    if (picked->shape != src_shape) {
      gsrc = zeros(src_shape, g[0]);
      TensorRef window = gsrc;
      for (int32_t i = 0; i < src_shape.ndim; ++i) window = core::slice(*window, i, 0, picked->shape.d[i], 1);
      core::copy_into(*window, *picked);
    }
    return Grads{g[0], TensorRef(), gsrc};
  });
  return;
}

struct CatOp {
  const Tensor* const* tensors;
  int32_t count;
  int64_t dim;
  OpId id() const { return OpId::CAT; }
  dispatch::Inputs inputs() const { return {tensors, tensors && count > 0 ? count : 0}; }
  TensorRef compute() const { return compute::cat(tensors, count, dim); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_cat(g, tensors, count, dim, *out); }
  void differentiate(TensorRef& out) const { cat_backward(tensors, count, dim, out); }
};

struct IndexSelectOp {
  const Tensor* in[2];  // x, index
  int64_t dim;
  OpId id() const { return OpId::INDEX_SELECT; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  TensorRef compute() const { return compute::index_select(*in[0], dim, *in[1]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_index_select(g, *in[0], dim, *in[1], *out);
  }
  void differentiate(TensorRef& out) const { index_select_backward(*in[0], dim, *in[1], out); }
};

struct GatherOp {
  const Tensor* in[2];  // x, index
  int64_t dim;
  OpId id() const { return OpId::GATHER; }
  dispatch::Inputs inputs() const { return {in, 2}; }
  TensorRef compute() const { return compute::gather(*in[0], dim, *in[1]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_gather(g, *in[0], dim, *in[1], *out); }
  void differentiate(TensorRef& out) const { gather_backward(*in[0], dim, *in[1], out); }
};

struct ScatterAddOp {
  const Tensor* in[3];  // x, index, src
  int64_t dim;
  OpId id() const { return OpId::SCATTER_ADD; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const { return compute::scatter_add(*in[0], dim, *in[1], *in[2]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_scatter_add(g, *in[0], dim, *in[1], *in[2], *out);
  }
  void differentiate(TensorRef& out) const { scatter_add_backward(*in[0], dim, *in[1], *in[2], out); }
};

}  // namespace

using dispatch::Face;

TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim) {
  return dispatch::dispatch(CatOp{tensors, count, dim}, Face::PUBLIC);
}
TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return dispatch::dispatch(IndexSelectOp{{&x, &index}, dim}, Face::PUBLIC);
}
TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return dispatch::dispatch(GatherOp{{&x, &index}, dim}, Face::PUBLIC);
}
TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return dispatch::dispatch(ScatterAddOp{{&x, &index, &src}, dim}, Face::PUBLIC);
}

}  // namespace nnp::core::autograd

namespace nnp::core {

using dispatch::Face;

TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim) {
  return dispatch::dispatch(autograd::CatOp{tensors, count, dim}, Face::INTERNAL);
}
TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return dispatch::dispatch(autograd::IndexSelectOp{{&x, &index}, dim}, Face::INTERNAL);
}
TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return dispatch::dispatch(autograd::GatherOp{{&x, &index}, dim}, Face::INTERNAL);
}
TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return dispatch::dispatch(autograd::ScatterAddOp{{&x, &index, &src}, dim}, Face::INTERNAL);
}

}  // namespace nnp::core
