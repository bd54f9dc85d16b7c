// Backward of fake quantization: the straight-through estimator, as
// PyTorch's cachemask kernels: the gradient passes where round-and-clamp
// left the value inside [quant_min, quant_max], and is zero elsewhere.
#include "../onnx/trace.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"

namespace nnp::core::autograd {

using namespace math;

namespace {

TensorRef record_straight_through(const char* name, const Tensor& x, FakeQuantized result) {
  if (!should_record({&x})) return result.out;
  TensorRef mask = result.mask;
  record(name, {&x}, {result.out.get()}, [mask](Grads& g) { return Grads{where(mask, g[0], zeros_like(g[0]))}; });
  return result.out;
}

}  // namespace

TensorRef fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                   int64_t quant_max) {
  onnx::OpScope trace;
  if (trace.recorder()) onnx::refuse_op("fake_quantize_per_tensor");
  return record_straight_through("FakeQuantizePerTensorAffineCachemaskBackward", x,
                                 core::fake_quantize_per_tensor(x, scale, zero_point, quant_min, quant_max));
}

TensorRef fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                    int64_t quant_min, int64_t quant_max) {
  onnx::OpScope trace;
  if (trace.recorder()) onnx::refuse_op("fake_quantize_per_channel");
  return record_straight_through("FakeQuantizePerChannelAffineCachemaskBackward", x,
                                 core::fake_quantize_per_channel(x, scales, zero_points, axis, quant_min, quant_max));
}

}  // namespace nnp::core::autograd
