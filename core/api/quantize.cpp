// Adapters: quantization. Only fake quantization is differentiable; the
// others produce integers or read them.
#include "../autograd/functions.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status quantize_per_tensor(const nnp_tensor* x, double scale, int64_t zero_point, nnp_dtype dtype,
                               nnp_tensor** out) {
  return handle_out(out, "quantize_per_tensor", [&] {
    return core::quantize_per_tensor(tensor_arg(x, "quantize_per_tensor", "x"), scale, zero_point, dtype);
  });
}
nnp_status quantize_per_channel(const nnp_tensor* x, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                int64_t axis, nnp_dtype dtype, nnp_tensor** out) {
  const char* op = "quantize_per_channel";
  return handle_out(out, op, [&] {
    return core::quantize_per_channel(tensor_arg(x, op, "x"), tensor_arg(scales, op, "scales"),
                                      tensor_arg(zero_points, op, "zero_points"), axis, dtype);
  });
}
nnp_status dequantize_per_tensor(const nnp_tensor* q, double scale, int64_t zero_point, nnp_tensor** out) {
  return handle_out(out, "dequantize_per_tensor", [&] {
    return core::dequantize_per_tensor(tensor_arg(q, "dequantize_per_tensor", "q"), scale, zero_point);
  });
}
nnp_status dequantize_per_channel(const nnp_tensor* q, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                  int64_t axis, nnp_tensor** out) {
  const char* op = "dequantize_per_channel";
  return handle_out(out, op, [&] {
    return core::dequantize_per_channel(tensor_arg(q, op, "q"), tensor_arg(scales, op, "scales"),
                                        tensor_arg(zero_points, op, "zero_points"), axis);
  });
}
nnp_status fake_quantize_per_tensor(const nnp_tensor* x, double scale, int64_t zero_point, int64_t quant_min,
                                    int64_t quant_max, nnp_tensor** out) {
  const char* op = "fake_quantize_per_tensor";
  return handle_out(out, op, [&] {
    return autograd::fake_quantize_per_tensor(tensor_arg(x, op, "x"), scale, zero_point, quant_min, quant_max);
  });
}
nnp_status fake_quantize_per_channel(const nnp_tensor* x, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                     int64_t axis, int64_t quant_min, int64_t quant_max, nnp_tensor** out) {
  const char* op = "fake_quantize_per_channel";
  return handle_out(out, op, [&] {
    return autograd::fake_quantize_per_channel(tensor_arg(x, op, "x"), tensor_arg(scales, op, "scales"),
                                               tensor_arg(zero_points, op, "zero_points"), axis, quant_min, quant_max);
  });
}
nnp_status matmul_i8(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return handle_out(out, "matmul_i8",
                    [&] { return core::matmul_i8(tensor_arg(a, "matmul_i8", "a"), tensor_arg(b, "matmul_i8", "b")); });
}
nnp_status quantized_matmul(const nnp_tensor* x, double scale, int64_t zero_point, const nnp_tensor* w,
                            const nnp_tensor* col_scale, const nnp_tensor* bias, nnp_tensor** out) {
  constexpr const char* op = "quantized_matmul";
  return handle_out(out, op, [&] {
    return core::quantized_matmul(tensor_arg(x, op, "x"), scale, zero_point, tensor_arg(w, op, "w"),
                                  tensor_arg(col_scale, op, "col_scale"),
                                  bias ? &tensor_arg(bias, op, "bias") : nullptr);
  });
}

}  // namespace nnp::core::api
