// G2's peer: the same 8192^3 GEMM through cuBLAS called directly (f32 without
// TF32, as nnplug's; bf16 with f32 accumulation).
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace {

void G2_cublas(benchmark::State& state) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    std::string why = std::string("no CUDA device: ") + (error != cudaSuccess ? cudaGetErrorString(error) : "none");
    state.SkipWithError(why.c_str());
    return;
  }
  const bool bf16 = state.range(0) == 16;
  const int n = 8192;
  const size_t bytes = size_t{n} * n * (bf16 ? 2 : 4);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&c, bytes);
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
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
