// Backward of cat, index_select, gather and scatter_add.
#include <vector>

#include "../error.hpp"
#include "../onnx/trace.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"

namespace nnp::core::autograd {

using namespace math;

TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim) {
  onnx::OpScope trace;
  TensorRef out = core::cat(tensors, count, dim);
  if (auto* g = trace.recorder()) onnx::record_cat(*g, tensors, count, dim, *out);
  bool any = false;
  for (int32_t i = 0; i < count; ++i) any = any || should_record({tensors[i]});
  if (!any) return out;
  const int32_t d = wrap_dim("cat", dim, tensors[0]->shape.ndim);
  std::vector<int64_t> sizes;
  for (int32_t i = 0; i < count; ++i) sizes.push_back(tensors[i]->shape.d[d]);
  auto node = std::make_shared<FunctionNode>("CatBackward", [sizes, d](Grads& g) {
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
  return out;
}

TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  onnx::OpScope trace;
  TensorRef out = core::index_select(x, dim, index);
  if (auto* g = trace.recorder()) onnx::record_index_select(*g, x, dim, index, *out);
  if (!should_record({&x})) return out;
  const Dims shape = x.shape;
  const int32_t d = wrap_dim("index_select", dim, x.shape.ndim);
  SavedTensor idx = share(index);
  record("IndexSelectBackward", {&x, nullptr}, {out.get()}, [shape, d, idx](Grads& g) {
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
  return out;
}

TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index) {
  onnx::OpScope trace;
  TensorRef out = core::gather(x, dim, index);
  if (auto* g = trace.recorder()) onnx::record_gather(*g, x, dim, index, *out);
  if (!should_record({&x})) return out;
  const Dims shape = x.shape;
  SavedTensor idx = share(index);
  record("GatherBackward", {&x, nullptr}, {out.get()}, [shape, dim, idx](Grads& g) {
    return Grads{core::scatter_add(*zeros(shape, g[0]), dim, *idx, *g[0]), TensorRef()};
  });
  return out;
}

TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  onnx::OpScope trace;
  TensorRef out = core::scatter_add(x, dim, index, src);
  if (auto* g = trace.recorder()) onnx::record_scatter_add(*g, x, dim, index, src, *out);
  if (!should_record({&x, &src})) return out;
  SavedTensor idx = share(index);
  const Dims src_shape = src.shape;
  record("ScatterAddBackward", {&x, nullptr, &src}, {out.get()}, [dim, idx, src_shape](Grads& g) {
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
  return out;
}

}  // namespace nnp::core::autograd
