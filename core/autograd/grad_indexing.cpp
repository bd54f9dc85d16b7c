// Backward of cat, index_select, gather and scatter_add.
#include <vector>

#include "../error.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../op_compute.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"

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
