// The GEMM of the quantized layers in one op: f32 activations quantized to
// int8 offsets from their zero point, times int8 weights in exact int32,
// each column rescaled to floats and shifted by the bias. On a backend with
// the quantized_gemm kernel (ABI 1.19) that is one pass: the quantization
// happens as the kernel packs the activations and the rescaling as it
// stores the sums. Elsewhere the same values come from quantize_per_tensor,
// matmul_i8 and elementwise ops, as the layers composed them before.
#include <cmath>
#include <string>

#include "../dispatch/dispatcher.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

namespace nnp::core {
namespace {

constexpr const char* kOp = "quantized_matmul";

void check_arguments(const Tensor& x, double scale, int64_t zero_point, const Tensor& w, const Tensor& col_scale,
                     const Tensor* bias) {
  check_same_device(kOp, x, w);
  check_same_device(kOp, x, col_scale);
  if (bias) check_same_device(kOp, x, *bias);
  if (x.dtype != NNP_F32 || w.dtype != NNP_I8 || col_scale.dtype != NNP_F32 || (bias && bias->dtype != NNP_F32))
    fail(NNP_DTYPE_MISMATCH, kOp, ": needs f32 x, i8 w, f32 col_scale and f32 bias, got ", dtype_name(x.dtype), ", ",
         dtype_name(w.dtype), ", ", dtype_name(col_scale.dtype), (bias ? ", " : ""),
         (bias ? dtype_name(bias->dtype) : ""));
  const bool columns_fit = w.shape.ndim == 2 && col_scale.shape.ndim == 1 && col_scale.shape.d[0] == w.shape.d[0] &&
                           (!bias || (bias->shape.ndim == 1 && bias->shape.d[0] == w.shape.d[0]));
  if (x.shape.ndim != 2 || !columns_fit || x.shape.d[1] != w.shape.d[1])
    fail(NNP_SHAPE_MISMATCH, kOp, ": needs x [M,K], w [N,K], col_scale [N] and bias [N], got ", format_dims(x.shape),
         ", ", format_dims(w.shape), ", ", format_dims(col_scale.shape),
         (bias ? ", " + format_dims(bias->shape) : std::string()));
  if (!(scale > 0) || !std::isfinite(scale) || !std::isfinite(1.0f / static_cast<float>(scale)))
    fail(NNP_INVALID_ARGUMENT, kOp, ": scale ", scale, " must be positive and finite, with 1/scale a finite float");
  if (zero_point < 0 || zero_point > 128)
    fail(NNP_INVALID_ARGUMENT, kOp, ": zero_point ", zero_point,
         " is outside [0, 128] (the offsets from it must fit int8)");
  constexpr int64_t kMaxK = 65536;  // as matmul_i8: no int32 sum overflows
  if (x.shape.d[1] > kMaxK)
    fail(NNP_INVALID_ARGUMENT, kOp, ": inner dimension ", x.shape.d[1], " exceeds ", kMaxK,
         ", beyond which int32 sums could overflow; split the reduction");
}

// The same values from ops every backend has.
TensorRef composed(const Tensor& x, double scale, int64_t zero_point, const Tensor& w, const Tensor& col_scale,
                   const Tensor* bias) {
  // Offsets below -zero_point (0 included) are quint8 values under 0: kept at it.
  TensorRef q = binary(NNP_BINARY_MAXIMUM, *quantize_per_tensor(x, scale, 0, NNP_I8),
                       *full(Dims{}, static_cast<double>(-zero_point), NNP_I8, x.device));
  TensorRef y = binary(NNP_BINARY_MUL, *to(*matmul_i8(*q, w), x.device, NNP_F32), col_scale);
  return bias ? binary(NNP_BINARY_ADD, *y, *bias) : y;
}

struct QuantizedMatmulOp {
  const Tensor* in[4];  // x, w, col_scale, bias (or null)
  double scale;
  int64_t zero_point;
  dispatch::OpId id() const { return dispatch::OpId::QUANTIZED_MATMUL; }
  dispatch::Inputs inputs() const { return {in, 4}; }
  TensorRef compute() const {
    const Tensor &x = *in[0], &w = *in[1], &col_scale = *in[2];
    const Tensor* bias = in[3];
    check_arguments(x, scale, zero_point, w, col_scale, bias);
    auto kernel = x.backend().quantized_gemm();
    if (!kernel || x.numel == 0 || w.numel == 0) return composed(x, scale, zero_point, w, col_scale, bias);
    TensorRef xc = contiguous(x), wc = contiguous(w), sc = contiguous(col_scale), bc;
    if (bias) bc = contiguous(*bias);
    Dims out_shape;
    out_shape.ndim = 2;
    out_shape.d[0] = x.shape.d[0];
    out_shape.d[1] = w.shape.d[0];
    TensorRef out = make_tensor_like(out_shape, NNP_F32, x);
    const nnp_view vx = kernel_view(*xc), vw = kernel_view(*wc), vs = kernel_view(*sc), vo = kernel_view(*out);
    nnp_view vb{};
    if (bias) vb = kernel_view(*bc);
    run_kernel(x, kOp,
               kernel(&kernel_ctx(x), &vx, 1.0f / static_cast<float>(scale), static_cast<int32_t>(-zero_point), &vw,
                      &vs, bias ? &vb : nullptr, &vo));
    return out;
  }
};

}  // namespace

TensorRef quantized_matmul(const Tensor& x, double scale, int64_t zero_point, const Tensor& w, const Tensor& col_scale,
                           const Tensor* bias) {
  return dispatch::dispatch(QuantizedMatmulOp{{&x, &w, &col_scale, bias}, scale, zero_point}, dispatch::Face::PUBLIC);
}

}  // namespace nnp::core
