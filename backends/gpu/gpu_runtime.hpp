// The GPU runtime under one set of names, so backends/gpu is written once and
// compiled by nvcc (CUDA) and by hipcc (HIP, defines NNP_GPU_HIP). Only what
// the shared sources use is mapped.
#pragma once

#if defined(NNP_GPU_HIP)
#include <hip/hip_runtime.h>
#define NNP_GPU_RUNTIME_NAME "HIP"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
#define gpuSuccess hipSuccess
#define gpuErrorNoDevice hipErrorNoDevice
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceProp hipDeviceProp_t
#define gpuSetDevice hipSetDevice
#define gpuGetDevice hipGetDevice
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc(ptr, bytes) hipHostMalloc(ptr, bytes, hipHostMallocDefault)
#define gpuFreeHost hipHostFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuMemGetInfo hipMemGetInfo
using gpuEvent_t = hipEvent_t;
#define gpuEventCreate hipEventCreate
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDestroy hipEventDestroy
#else
#include <cuda_runtime.h>
#define NNP_GPU_RUNTIME_NAME "CUDA"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
#define gpuSuccess cudaSuccess
#define gpuErrorNoDevice cudaErrorNoDevice
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceProp cudaDeviceProp
#define gpuSetDevice cudaSetDevice
#define gpuGetDevice cudaGetDevice
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc(ptr, bytes) cudaMallocHost(ptr, bytes)
#define gpuFreeHost cudaFreeHost
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuMemGetInfo cudaMemGetInfo
using gpuEvent_t = cudaEvent_t;
#define gpuEventCreate cudaEventCreate
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDestroy cudaEventDestroy
#endif
