// The core's tensor operations, internal face: what the core composes inside
// other ops and backward formulas (profiled; neither traced nor recorded).
// Each reaches its kernel through the dispatcher (dispatch/dispatcher.hpp);
// its compute checks its arguments (shapes, dtypes, devices) first, throwing
// an Error that names both operands, then prepares raw views and calls the
// owning backend's kernel. The public face is autograd/functions.hpp.
#pragma once

#include <nnp/nnp.h>

#include <vector>

#include "tensor.hpp"

namespace nnp::core {

// creation (ops/creation.cpp)
TensorRef empty(const Dims& shape, nnp_dtype dtype, nnp_device device);
TensorRef full(const Dims& shape, double value, nnp_dtype dtype, nnp_device device);
TensorRef arange(double start, double end, double step, nnp_dtype dtype, nnp_device device);
TensorRef from_host(const void* data, const Dims& shape, nnp_dtype dtype, nnp_device device);
TensorRef random(nnp_random_kind kind, double a, double b, const Dims& shape, nnp_dtype dtype, nnp_device device);
void manual_seed(uint64_t seed);
void get_rng_state(uint64_t* seed, uint64_t* offset);
void set_rng_state(uint64_t seed, uint64_t offset);

// data movement (ops/shape.cpp)
void copy_to_host(const Tensor& t, void* dst, size_t bytes);
void copy_into(Tensor& dst, const Tensor& src);
TensorRef to(const Tensor& t, nnp_device device, nnp_dtype dtype);
TensorRef contiguous(const Tensor& t);
TensorRef clone(const Tensor& t);

// views (ops/shape.cpp)
TensorRef view(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef reshape(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef transpose(const Tensor& t, int64_t dim0, int64_t dim1);
TensorRef permute(const Tensor& t, const int32_t* dims, int32_t ndim);
TensorRef slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
TensorRef expand(const Tensor& t, const int64_t* shape, int32_t ndim);
TensorRef squeeze(const Tensor& t, int64_t dim, bool all_dims);
TensorRef unsqueeze(const Tensor& t, int64_t dim);

// compute
TensorRef unary(nnp_unary_op op, const Tensor& x);  // ops/elementwise.cpp
TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b);
// out = a op b in place; out has the broadcast shape and the result dtype and
// may be a or b itself (optimizers update their buffers this way).
void binary_into(nnp_binary_op op, const Tensor& a, const Tensor& b, Tensor& out);
TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b);
TensorRef reduce(nnp_reduce_op op, const Tensor& x, const int32_t* dims, int32_t ndims, bool keepdim,
                 double correction);                 // ops/reduce.cpp
TensorRef matmul(const Tensor& a, const Tensor& b);  // ops/matmul.cpp
// 2-D convolution through the backend's optional conv2d kernel (ops/conv.cpp):
// an empty ref when that path does not apply (no kernel, not f32, a gradient
// to record, an export tracing), and the caller takes its general path.
TensorRef conv2d_kernel(const Tensor& x, const Tensor& w, const Tensor* bias, const nnp_conv2d_params& p);
// 2-D max pooling through the backend's optional max_pool2d kernel
// (ops/pool.cpp), the output size [OH, OW] chosen by the caller; empty refs
// when that path does not apply, as conv2d_kernel.
struct MaxPool2dResult {
  TensorRef values, indices;  // indices only when asked for
};
MaxPool2dResult max_pool2d_kernel(const Tensor& x, const nnp_pool2d_params& p, int64_t oh, int64_t ow,
                                  bool with_indices);
// ops/layer_norm.cpp: the backend's fused layer normalization of x over its
// last normalized_ndim dimensions; null where it does not apply (no kernel,
// not f32, mixed devices, a gradient wanted, an export below opset 17).
TensorRef layer_norm_kernel(const Tensor& x, const Tensor* weight, const Tensor* bias, int32_t normalized_ndim,
                            double eps);
// ops/layer_norm.cpp: layer_norm_kernel of a + b over the last dimension
// in one pass (nnp_kernels.add_layer_norm); null where it does not apply
// (no kernel, not f32, shapes that broadcast, a last dimension that is not
// contiguous, a gradient wanted, an export below opset 17).
TensorRef add_layer_norm_kernel(const Tensor& a, const Tensor& b, const Tensor* weight, const Tensor* bias, double eps);
// ops/gemm_epilogue.cpp: x [..., K] @ w [K, N] + bias [N] (bias may be
// null), then the activation, by the backend's fused kernel; null where it
// does not apply (no kernel, not f32, other shapes, a gradient wanted).
TensorRef gemm_epilogue_kernel(const Tensor& x, const Tensor& w, const Tensor* bias, int32_t activation);
// ops/elementwise_chain.cpp: the steps (unary ops, and Add, Sub, Mul, Div)
// over the inputs broadcast together, in one pass by the backend's kernel;
// null where it does not apply (no kernel, not all f32 on one device, a
// gradient wanted, an op the backend lacks, shapes that do not broadcast),
// and the caller runs the ops one at a time.
TensorRef elementwise_chain_kernel(const std::vector<const Tensor*>& inputs,
                                   const std::vector<nnp_elementwise_step>& steps);
// ops/attention.cpp: softmax(scale * q k^T + mask) v over the last two axes
// (q [..., L, E], k [..., S, E], v [..., S, Ev], the same leading sizes; mask
// null or broadcast to [..., L, S]) by the backend's fused kernel; null where
// it does not apply (no kernel, not all f32 on one device, a gradient
// wanted, leading axes that do not merge into one), and the caller composes.
TensorRef attention_kernel(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, double scale);
// ops/conv_packed.cpp (ABI 1.21): a convolution's weight packed once by
// its backend for convolutions of geometry p followed by the max pooling
// pool ({0, 0}: none; else windows = strides), as an NNP_U8 tensor on w's
// device; null where the backend has no packed form for it. And the
// convolution with it: pool(activation(conv(x, w) + bias)), null where it
// does not apply (gradients wanted, other dtypes or devices). w is the
// weight it was packed from, which an ONNX export writes.
// ops/gemm_epilogue.cpp (ABI 1.21): w [K, N] packed once by its backend
// (an NNP_U8 tensor on w's device; null where the backend has no packed
// form for it), and gemm_epilogue_kernel's product from it: null where it
// does not apply. w is the weight it was packed from.
TensorRef gemm_pack_weight(const Tensor& w);
TensorRef gemm_packed_kernel(const Tensor& x, const Tensor& w, const Tensor& packed, const Tensor* bias,
                             int32_t activation);
TensorRef conv2d_pack_weight(const Tensor& w, const nnp_conv2d_params& p, const int64_t (&pool)[2]);
TensorRef conv2d_packed_kernel(const Tensor& x, const Tensor& w, const Tensor& packed, const Tensor* bias,
                               const nnp_conv2d_params& p, const int64_t (&pool)[2]);
// The same for a static int8 convolution (ABI 1.22): w its NNP_I8 weight,
// and the convolution with x quantized, the sums rescaled by scale [C_out]
// and biased, requantized to the output's grid (q) and pooled, as
// nnp_kernels.quantized_conv2d_packed defines; null where it does not apply.
// layer: the nn.quantized.Conv2d it runs for, which an ONNX export writes.
// A 2-D w [O, K] is an nn.quantized.Linear's, packed as [O, K, 1, 1]: x
// [..., K] gives [..., O] (pool {0, 0}).
TensorRef quantized_conv2d_pack_weight(const Tensor& w, const nnp_conv2d_params& p, const int64_t (&pool)[2]);
TensorRef quantized_conv2d_packed_kernel(const Tensor& x, nnp_module& layer, const Tensor& w, const Tensor& packed,
                                         const Tensor& scale, const Tensor* bias, const nnp_quantized_conv2d_params& q,
                                         const nnp_conv2d_params& p, const int64_t (&pool)[2]);
// ONNX's ConvInteger from a weight packed once (ABI 1.29): w its u8 or i8
// weight [C_out, C_in, kH, kW] and w_zero its zero point (null, one value
// or C_out, of w's dtype), packed for geometry p (groups 1); and the int32
// sums (x - x_zero) * (w - w_zero) of x (u8 or i8, x_zero null or one
// value of x's dtype), as nnp_kernels.conv2d_integer_packed defines. Null
// where it does not apply; w and w_zero are what an ONNX export writes.
TensorRef conv2d_integer_pack_weight(const Tensor& w, const Tensor* w_zero, const nnp_conv2d_params& p);
TensorRef conv2d_integer_packed_kernel(const Tensor& x, const Tensor* x_zero, const Tensor& w, const Tensor* w_zero,
                                       const Tensor& packed, const nnp_conv2d_params& p);
// ONNX's DynamicQuantizeLinear with its range computed on x's device (ABI
// 1.29): y (u8, x's shape), scale (0-d f32) and zero (0-d u8) as
// nnp_kernels.dynamic_quantize_linear defines; false where it does not
// apply (no kernel, x not f32 or empty, a gradient wanted).
bool dynamic_quantize_linear_kernel(const Tensor& x, TensorRef& y, TensorRef& scale, TensorRef& zero);
// ops/quantize.cpp: dtype is NNP_U8 (quint8) or NNP_I8 (qint8).
TensorRef quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, nnp_dtype dtype);
TensorRef quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                               nnp_dtype dtype);
TensorRef dequantize_per_tensor(const Tensor& q, double scale, int64_t zero_point);
TensorRef dequantize_per_channel(const Tensor& q, const Tensor& scales, const Tensor& zero_points, int64_t axis);
TensorRef matmul_i8(const Tensor& a, const Tensor& b);  // i8 [M,K] @ i8 [N,K]^T -> i32 [M,N], exact
// ops/quantized_matmul.cpp: f32 x [M,K] quantized to offsets
// max(quantize_per_tensor(x, scale, 0, i8), -zero_point), times i8 w [N,K]
// transposed, then * col_scale [N] + bias [N] (bias may be null): f32 [M,N].
TensorRef quantized_matmul(const Tensor& x, double scale, int64_t zero_point, const Tensor& w, const Tensor& col_scale,
                           const Tensor* bias);
// Quantize-then-dequantize in f32; mask: where the clamp left x alone.
struct FakeQuantized {
  TensorRef out, mask;
};
FakeQuantized fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max);
FakeQuantized fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                        int64_t quant_min, int64_t quant_max);
TensorRef softmax(const Tensor& x, int64_t dim, bool log);                // ops/reduce.cpp
TensorRef cat(const Tensor* const* tensors, int32_t count, int64_t dim);  // ops/indexing.cpp
TensorRef index_select(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef gather(const Tensor& x, int64_t dim, const Tensor& index);
TensorRef scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

}  // namespace nnp::core
