// softmax and log_softmax along one dimension.
#include "error.hpp"
#include "op_checks.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core {

TensorRef compute::softmax(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_floating(name, x);
  int32_t d = wrap_dim(name, dim, x.shape.ndim);
  if (x.shape.ndim == 0) {  // a scalar is its own single-element row
    TensorRef row = unsqueeze(x, 0);
    TensorRef result = softmax(*row, 0, log);
    return squeeze(*result, 0, false);
  }
  TensorRef out = make_tensor_like(x.shape, x.dtype, x);
  if (out->numel == 0) return out;
  nnp_view vx = kernel_view(x), vo = kernel_view(*out);
  run_kernel(x, name, x.backend().kernels().softmax(&kernel_ctx(x), &vx, d, log ? 1 : 0, &vo));
  return out;
}

}  // namespace nnp::core
