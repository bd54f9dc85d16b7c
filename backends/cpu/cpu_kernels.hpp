// The CPU kernel entry points (one file per family) and the API table they
// report errors through.
#pragma once

#include <nnp/plugin.h>

#include <string>

namespace nnp::cpu {

extern const nnp_api* g_api;

inline nnp_status fail(nnp_status status, const std::string& message) {
  g_api->set_error(status, message.c_str());
  return status;
}

// A packing kernel's output view (conv2d_pack and the like): NNP_OK where
// packed is a contiguous u8 view of at least need bytes, else the error
// naming op.
inline nnp_status check_packed_room(const nnp_view& packed, int64_t need, const char* op) {
  if (packed.dtype == NNP_U8 && packed.ndim == 1 && packed.shape[0] >= need && packed.strides[0] == 1) return NNP_OK;
  return fail(NNP_INVALID_ARGUMENT, std::string(op) + ": packed must be a contiguous u8 view of " +
                                        std::to_string(need) + " bytes (ask with packed NULL first)");
}

nnp_status copy(const nnp_kernel_ctx*, const nnp_view* src, const nnp_view* dst);
nnp_status fill(const nnp_kernel_ctx*, const nnp_view* dst, double value);
nnp_status unary(const nnp_kernel_ctx*, nnp_unary_op op, const nnp_view* x, const nnp_view* out);
nnp_status binary(const nnp_kernel_ctx*, nnp_binary_op op, const nnp_view* a, const nnp_view* b, const nnp_view* out);
nnp_status where(const nnp_kernel_ctx*, const nnp_view* cond, const nnp_view* a, const nnp_view* b,
                 const nnp_view* out);
nnp_status reduce(const nnp_kernel_ctx*, nnp_reduce_op op, const nnp_view* x, int32_t nreduce, double correction,
                  const nnp_view* out);
nnp_status gemm(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out);
nnp_status gemm_epilogue(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* bias,
                         int32_t activation, const nnp_view* out);
nnp_status gemm_pack(const nnp_kernel_ctx*, const nnp_view* b, const nnp_view* packed, int64_t* bytes);
nnp_status gemm_packed(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* packed, const nnp_view* bias,
                       int32_t activation, const nnp_view* out);
// c[m, n] (leading dimension ldc) = op(a) @ op(b) + beta * c for row-major
// f32 matrices (op(a) is [m, k]: a itself, or a stored [k, m] when trans_a),
// as the gemm kernel runs its products: OpenBLAS on one thread, a large
// product split over the pool. For the kernels that multiply scratch
// matrices of their own (convolution).
void sgemm_on_pool(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
nnp_status conv2d_backward(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* w, const nnp_view* grad_out,
                           const nnp_conv2d_params* p, const nnp_view* grad_x, const nnp_view* grad_w,
                           const nnp_view* grad_bias);
nnp_status gemm_i8(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* out);
nnp_status elementwise_chain(const nnp_kernel_ctx*, const nnp_view* const* inputs, int32_t n_inputs,
                             const nnp_elementwise_step* steps, int32_t n_steps, const nnp_view* out);
nnp_status attention(const nnp_kernel_ctx*, const nnp_view* q, const nnp_view* k, const nnp_view* v,
                     const nnp_view* mask, float scale, const nnp_view* out);
nnp_status quantized_gemm(const nnp_kernel_ctx*, const nnp_view* x, float inv_scale, int32_t offset_min,
                          const nnp_view* w, const nnp_view* scale, const nnp_view* bias, const nnp_view* out);
nnp_status conv2d(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* w, const nnp_view* bias,
                  const nnp_conv2d_params* p, const nnp_view* out);
nnp_status conv2d_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_conv2d_params* p, const int64_t* pool,
                       const nnp_view* packed, int64_t* bytes);
nnp_status conv2d_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* packed, const nnp_view* bias,
                         const nnp_conv2d_params* p, const int64_t* pool, const nnp_view* out);
nnp_status quantized_conv2d_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_conv2d_params* p,
                                 const int64_t* pool, const nnp_view* packed, int64_t* bytes);
nnp_status quantized_conv2d_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* packed,
                                   const nnp_view* scale, const nnp_view* bias, const nnp_quantized_conv2d_params* q,
                                   const nnp_conv2d_params* p, const int64_t* pool, const nnp_view* out);
nnp_status conv2d_integer_pack(const nnp_kernel_ctx*, const nnp_view* w, const nnp_view* w_zero,
                               const nnp_conv2d_params* p, const nnp_view* packed, int64_t* bytes);
nnp_status conv2d_integer_packed(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* x_zero,
                                 const nnp_view* packed, const nnp_conv2d_params* p, const nnp_view* out);
nnp_status dynamic_quantize_linear(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* y, const nnp_view* scale,
                                   const nnp_view* zero);
nnp_status max_pool2d(const nnp_kernel_ctx*, const nnp_view* x, const nnp_pool2d_params* p, const nnp_view* out,
                      const nnp_view* indices);
nnp_status sgd_step(const nnp_kernel_ctx*, const nnp_sgd_params* p, const nnp_view* param, const nnp_view* grad,
                    const nnp_view* buffer, const nnp_view* param_out, const nnp_view* buffer_out);
nnp_status softmax(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, int32_t log, const nnp_view* out);
nnp_status layer_norm(const nnp_kernel_ctx*, const nnp_view* x, const nnp_view* weight, const nnp_view* bias,
                      double eps, const nnp_view* out);
nnp_status add_layer_norm(const nnp_kernel_ctx*, const nnp_view* a, const nnp_view* b, const nnp_view* weight,
                          const nnp_view* bias, double eps, const nnp_view* out);
nnp_status relu_backward(const nnp_kernel_ctx*, const nnp_view* result, const nnp_view* grad, const nnp_view* grad_in,
                         const nnp_view* column_sums);
nnp_status unscale_check(const nnp_kernel_ctx*, const nnp_view* grad, double inv_scale, const nnp_view* found);
nnp_status index_select(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index,
                        const nnp_view* out);
nnp_status gather(const nnp_kernel_ctx*, const nnp_view* x, int32_t dim, const nnp_view* index, const nnp_view* out);
nnp_status scatter_add(const nnp_kernel_ctx*, const nnp_view* out, int32_t dim, const nnp_view* index,
                       const nnp_view* src);
nnp_status random(const nnp_kernel_ctx*, nnp_random_kind kind, uint64_t seed, uint64_t offset, double a, double b,
                  const nnp_view* out);

}  // namespace nnp::cpu
