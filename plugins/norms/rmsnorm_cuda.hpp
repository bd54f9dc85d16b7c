// norm.RMSNorm's CUDA kernels (rmsnorm_cuda.cu), built when the plugins are
// configured where nvcc is. Work is queued on the stream the core's kernels
// use for the device (nnp::Device::stream()). Each returns NULL, or the CUDA
// runtime's error text.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>

namespace nnp::norms {

const char* rmsnorm_forward_cuda(nnp_dtype dtype, const void* x, const void* weight, void* y, void* rstd, int64_t rows,
                                 int64_t width, double eps, void* stream);
const char* rmsnorm_backward_cuda(nnp_dtype dtype, const void* grad, const void* x, const void* weight,
                                  const void* rstd, void* dx, void* dweight, int64_t rows, int64_t width, void* stream);

}  // namespace nnp::norms
