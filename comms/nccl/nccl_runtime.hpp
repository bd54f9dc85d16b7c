// The CUDA runtime and NCCL, opened with dlopen on first use rather than
// linked: the nccl plugin then loads on any machine (no GPU, no driver, no
// libnccl) and says why it cannot form groups there. The headers are used
// for their types only.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace nnp::nccl_comm {

struct Runtime {
  cudaError_t (*cudaGetDeviceCount)(int*);
  cudaError_t (*cudaSetDevice)(int);
  const char* (*cudaGetErrorString)(cudaError_t);
  cudaError_t (*cudaStreamCreateWithFlags)(cudaStream_t*, unsigned);
  cudaError_t (*cudaStreamDestroy)(cudaStream_t);
  cudaError_t (*cudaStreamWaitEvent)(cudaStream_t, cudaEvent_t, unsigned);
  cudaError_t (*cudaEventCreateWithFlags)(cudaEvent_t*, unsigned);
  cudaError_t (*cudaEventRecord)(cudaEvent_t, cudaStream_t);
  cudaError_t (*cudaEventQuery)(cudaEvent_t);
  cudaError_t (*cudaEventDestroy)(cudaEvent_t);
  cudaError_t (*cudaMalloc)(void**, size_t);
  cudaError_t (*cudaFree)(void*);
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId*);
  ncclResult_t (*ncclCommInitRank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*ncclCommDestroy)(ncclComm_t);
  ncclResult_t (*ncclCommAbort)(ncclComm_t);
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t, ncclResult_t*);
  const char* (*ncclGetErrorString)(ncclResult_t);
  ncclResult_t (*ncclAllReduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclBroadcast)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclAllGather)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*ncclReduceScatter)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
};

// Opens both libraries and counts the devices, once per process. Returns
// the table, or nullptr with *reason (a string kept until exit) saying what
// is missing.
const Runtime* runtime(const char** reason);

}  // namespace nnp::nccl_comm
