// norm.RMSNorm on CUDA: one block per row; the same arithmetic as the host
// loops in rmsnorm_plugin.cpp (accumulation in double).
#include <cuda_runtime.h>

#include "rmsnorm_cuda.hpp"

namespace nnp::norms {
namespace {

constexpr int kThreads = 256;

__device__ double block_sum(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  double total = scratch[0];
  __syncthreads();
  return total;
}

template <typename T>
__global__ void forward_kernel(const T* x, const T* weight, T* y, T* rstd, int64_t width, double eps) {
  __shared__ double scratch[kThreads];
  const T* xr = x + blockIdx.x * width;
  T* yr = y + blockIdx.x * width;
  double squares = 0;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) squares += static_cast<double>(xr[j]) * xr[j];
  squares = block_sum(squares, scratch);
  const double inv = 1.0 / sqrt(squares / static_cast<double>(width) + eps);
  if (threadIdx.x == 0) rstd[blockIdx.x] = static_cast<T>(inv);
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    double v = xr[j] * inv;
    yr[j] = static_cast<T>(weight ? v * weight[j] : v);
  }
}

// dx = rstd * (gh - xh * mean(gh * xh)) per row, with gh = g * weight.
template <typename T>
__global__ void backward_x_kernel(const T* g, const T* x, const T* weight, const T* rstd, T* dx, int64_t width) {
  __shared__ double scratch[kThreads];
  const int64_t base = blockIdx.x * width;
  const double inv = rstd[blockIdx.x];
  double dot = 0;
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    double gh = weight ? static_cast<double>(g[base + j]) * weight[j] : g[base + j];
    dot += gh * (x[base + j] * inv);
  }
  const double mean_dot = block_sum(dot, scratch) / static_cast<double>(width);
  for (int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    double xh = x[base + j] * inv;
    double gh = weight ? static_cast<double>(g[base + j]) * weight[j] : g[base + j];
    dx[base + j] = static_cast<T>(inv * (gh - xh * mean_dot));
  }
}

// dweight[j] = sum over rows of g * xh: one thread per column.
template <typename T>
__global__ void backward_weight_kernel(const T* g, const T* x, const T* rstd, T* dweight, int64_t rows, int64_t width) {
  const int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (j >= width) return;
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) sum += static_cast<double>(g[r * width + j]) * (x[r * width + j] * rstd[r]);
  dweight[j] = static_cast<T>(sum);
}

const char* launched() {
  cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

template <typename T>
const char* forward(const void* x, const void* w, void* y, void* rstd, int64_t rows, int64_t width, double eps,
                    cudaStream_t stream) {
  forward_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<const T*>(x), static_cast<const T*>(w), static_cast<T*>(y), static_cast<T*>(rstd), width, eps);
  return launched();
}

template <typename T>
const char* backward(const void* g, const void* x, const void* w, const void* rstd, void* dx, void* dw, int64_t rows,
                     int64_t width, cudaStream_t stream) {
  if (rows > 0) {
    backward_x_kernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(g), static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(rstd),
        static_cast<T*>(dx), width);
    if (const char* error = launched()) return error;
  }
  if (dw == nullptr) return nullptr;
  backward_weight_kernel<T><<<static_cast<unsigned>((width + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      static_cast<const T*>(g), static_cast<const T*>(x), static_cast<const T*>(rstd), static_cast<T*>(dw), rows,
      width);
  return launched();
}

}  // namespace

const char* rmsnorm_forward_cuda(nnp_dtype dtype, const void* x, const void* weight, void* y, void* rstd, int64_t rows,
                                 int64_t width, double eps, void* stream) {
  if (rows == 0) return nullptr;
  if (rows > INT32_MAX) return "more than 2^31 rows";
  auto s = static_cast<cudaStream_t>(stream);
  return dtype == NNP_F64 ? forward<double>(x, weight, y, rstd, rows, width, eps, s)
                          : forward<float>(x, weight, y, rstd, rows, width, eps, s);
}

const char* rmsnorm_backward_cuda(nnp_dtype dtype, const void* grad, const void* x, const void* weight,
                                  const void* rstd, void* dx, void* dweight, int64_t rows, int64_t width,
                                  void* stream) {
  if (rows > INT32_MAX) return "more than 2^31 rows";
  auto s = static_cast<cudaStream_t>(stream);
  return dtype == NNP_F64 ? backward<double>(grad, x, weight, rstd, dx, dweight, rows, width, s)
                          : backward<float>(grad, x, weight, rstd, dx, dweight, rows, width, s);
}

}  // namespace nnp::norms
