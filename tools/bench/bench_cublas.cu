// G2's peer: the same 8192^3 GEMM through cuBLAS called directly (f32 without
// TF32, as nnplug's; bf16 with f32 accumulation).
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <string>

#include "cuda_device.hpp"

namespace {

// Uniform values in [-1, 1) from a hash of the index: never time a GEMM on
// zeros (it runs faster than on real data).
__global__ void fill_random(void* data, int64_t n, bool bf16, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x7feb352dU;
    h ^= h >> 15;
    const float v = static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f;
    if (bf16)
      static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16(v);
    else
      static_cast<float*>(data)[i] = v;
  }
}

void G2_cublas(benchmark::State& state) {
  if (!nnp::bench::require_cuda_device(state)) return;
  const bool bf16 = state.range(0) == 16;
  const int n = 8192;
  const size_t bytes = size_t{n} * n * (bf16 ? 2 : 4);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&c, bytes);
  fill_random<<<1024, 256>>>(a, int64_t{n} * n, bf16, 1);
  fill_random<<<1024, 256>>>(b, int64_t{n} * n, bf16, 2);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float one = 1, zero = 0;
  const cudaDataType_t type = bf16 ? CUDA_R_16BF : CUDA_R_32F;
  for (auto _ : state) {
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, type, n, a, type, n, &zero, c, type, n,
                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cudaDeviceSynchronize();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * double(n) * n, benchmark::Counter::kIsIterationInvariantRate);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}
BENCHMARK(G2_cublas)->Name("G2/cublas_f32")->Arg(32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(G2_cublas)->Name("G2/cublas_bf16")->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
