// Whether a CUDA device is here for the direct-CUDA peers (G1, G2); without
// one the benchmark is skipped with the runtime's reason.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <string>

namespace nnp::bench {

inline bool require_cuda_device(benchmark::State& state) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess && count > 0) return true;
  const std::string why = std::string("no CUDA device: ") + (error != cudaSuccess ? cudaGetErrorString(error) : "none");
  state.SkipWithError(why.c_str());
  return false;
}

}  // namespace nnp::bench
