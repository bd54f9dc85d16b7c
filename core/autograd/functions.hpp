// The public face of every op: what the API, the layers and the functionals
// call. Each reaches its kernel through the dispatcher, which traces it
// during an ONNX export and, when an input requires grad and grad mode is
// on, records its backward node. Each family's compute, backward formulas
// and description are in one file of core/ops/; the internal face is ops.hpp.
#pragma once

#include "../ops.hpp"

namespace nnp::core::autograd {

// ops/elementwise.cpp
TensorRef unary(nnp_unary_op op, const Tensor& x);
TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b);
TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b);
// ops/reduce.cpp
TensorRef reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction);
TensorRef softmax(const Tensor& x, int64_t dim, bool log);
// ops/matmul.cpp
TensorRef matmul(const Tensor& a, const Tensor& b);
// ops/shape.cpp
TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1);
TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim);
TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims);
TensorRef unsqueeze(const Tensor& t, int64_t dim);
TensorRef contiguous(const Tensor& t);
TensorRef clone(const Tensor& t);
TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype);
// ops/indexing.cpp
TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim);
TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// ops/quantize.cpp: the straight-through estimator (the gradient passes
// where the value was not clamped).
TensorRef fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                   int64_t quant_max);
TensorRef fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                    int64_t quant_min, int64_t quant_max);
// In-place copy: refused on tensors that take part in autograd under grad mode.
void copy_into(Tensor& dst, const Tensor& src);
// An in-place op's write, as PyTorch's: value (broadcast to dst's shape,
// converted to its dtype and device) into dst's data, whose version goes
// up; when autograd records, dst's history continues from value's (old dst
// values get no gradient). Refused for a leaf that requires grad, and for a
// view taking part in autograd.
void assign(Tensor& dst, const Tensor& value);

}  // namespace nnp::core::autograd
