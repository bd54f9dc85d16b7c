// The ops' own work, below the dispatcher: argument checks, dtype rules,
// views and the backend kernel call (or the composition of other ops). Only
// the ops' descriptions (dispatch/dispatcher.hpp) call these; everything
// else calls the dispatched faces (ops.hpp, autograd/functions.hpp), so that
// every call is profiled, traced and recorded alike.
#pragma once

#include <nnp/nnp.h>

#include "ops.hpp"
#include "tensor.hpp"

namespace nnp::core::compute {

// ops_creation.cpp
TensorRef full(const Dims& shape, double value, nnp_dtype dtype, nnp_device device);
TensorRef arange(double start, double end, double step, nnp_dtype dtype, nnp_device device);
TensorRef from_host(const void* data, const Dims& shape, nnp_dtype dtype, nnp_device device);
TensorRef random(nnp_random_kind kind, double a, double b, const Dims& shape, nnp_dtype dtype, nnp_device device);
// ops_copy.cpp
void copy_into(Tensor& dst, const Tensor& src);
TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype);
TensorRef contiguous(const Tensor& t);
TensorRef clone(const Tensor& t);
// ops_view.cpp
TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1);
TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim);
TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims);
TensorRef unsqueeze(const Tensor& t, int64_t dim);
// ops_elementwise.cpp
TensorRef unary(nnp_unary_op op, const Tensor& x);
TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b);
void binary_into(nnp_binary_op op, const Tensor& a, const Tensor& b, Tensor& out);
TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b);
// ops_reduce.cpp, ops_softmax.cpp, ops_matmul.cpp
TensorRef reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction);
TensorRef softmax(const Tensor& x, int64_t dim, bool log);
TensorRef matmul(const Tensor& a, const Tensor& b);
// ops_indexing.cpp
TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim);
TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// ops_quantize.cpp
TensorRef quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, nnp_dtype dtype);
TensorRef quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                               nnp_dtype dtype);
TensorRef dequantize_per_tensor(const Tensor& q, double scale, int64_t zero_point);
TensorRef dequantize_per_channel(const Tensor& q, const Tensor& scales, const Tensor& zero_points, int64_t axis);
TensorRef matmul_i8(const Tensor& a, const Tensor& b);
FakeQuantized fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max);
FakeQuantized fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                        int64_t quant_min, int64_t quant_max);

}  // namespace nnp::core::compute
