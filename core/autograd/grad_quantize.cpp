// Fake quantization and its backward: the straight-through estimator, as
// PyTorch's cachemask kernels: the gradient passes where round-and-clamp
// left the value inside [quant_min, quant_max], and is zero elsewhere.
#include "../dispatch/dispatcher.hpp"
#include "../op_compute.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"

namespace nnp::core::autograd {

using namespace math;

namespace {

void straight_through(dispatch::OpId id, const Tensor& x, FakeQuantized& result) {
  if (!requires_grad(x)) return;  // the scales and zero points take no gradient
  TensorRef mask = result.mask;
  record(dispatch::schema(id).backward, {&x}, {result.out.get()},
         [mask](Grads& g) { return Grads{where(mask, g[0], zeros_like(g[0]))}; });
}

struct FakeQuantizePerTensorOp {
  const Tensor* in[1];
  double scale;
  int64_t zero_point, quant_min, quant_max;
  dispatch::OpId id() const { return dispatch::OpId::FAKE_QUANTIZE_PER_TENSOR; }
  dispatch::Inputs inputs() const { return {in, 1}; }
  FakeQuantized compute() const {
    return compute::fake_quantize_per_tensor(*in[0], scale, zero_point, quant_min, quant_max);
  }
  void differentiate(FakeQuantized& out) const { straight_through(id(), *in[0], out); }
};

struct FakeQuantizePerChannelOp {
  const Tensor* in[3];  // x, scales, zero points
  int64_t axis, quant_min, quant_max;
  dispatch::OpId id() const { return dispatch::OpId::FAKE_QUANTIZE_PER_CHANNEL; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  FakeQuantized compute() const {
    return compute::fake_quantize_per_channel(*in[0], *in[1], *in[2], axis, quant_min, quant_max);
  }
  void differentiate(FakeQuantized& out) const { straight_through(id(), *in[0], out); }
};

}  // namespace

TensorRef fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                   int64_t quant_max) {
  return dispatch::dispatch(FakeQuantizePerTensorOp{{&x}, scale, zero_point, quant_min, quant_max},
                            dispatch::Face::PUBLIC)
      .out;
}

TensorRef fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                    int64_t quant_min, int64_t quant_max) {
  return dispatch::dispatch(FakeQuantizePerChannelOp{{&x, &scales, &zero_points}, axis, quant_min, quant_max},
                            dispatch::Face::PUBLIC)
      .out;
}

}  // namespace nnp::core::autograd

namespace nnp::core {

FakeQuantized fake_quantize_per_tensor(const Tensor& x, double scale, int64_t zero_point, int64_t quant_min,
                                       int64_t quant_max) {
  return dispatch::dispatch(autograd::FakeQuantizePerTensorOp{{&x}, scale, zero_point, quant_min, quant_max},
                            dispatch::Face::INTERNAL);
}

FakeQuantized fake_quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zero_points, int64_t axis,
                                        int64_t quant_min, int64_t quant_max) {
  return dispatch::dispatch(
      autograd::FakeQuantizePerChannelOp{{&x, &scales, &zero_points}, axis, quant_min, quant_max},
      dispatch::Face::INTERNAL);
}

}  // namespace nnp::core
