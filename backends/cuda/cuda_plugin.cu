// The CUDA backend plugin: the shared GPU backend (backends/gpu) under the
// name "cuda", with cuBLAS for GEMM (f32, f64, f16, bf16) wherever each
// matrix of the batch is row- or column-major and the batch has one stride.
#include <cublas_v2.h>

#include <algorithm>

#include "../gpu/gpu_backend.hpp"

namespace nnp::cuda {
namespace {

using gpu::DeviceState;

nnp_status check_blas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return NNP_OK;
  return gpu::fail(status == CUBLAS_STATUS_ALLOC_FAILED ? NNP_OUT_OF_MEMORY : NNP_DEVICE_ERROR,
                   std::string("cuBLAS ") + what + " failed: " + cublasGetStatusString(status));
}

nnp_status create_handle(DeviceState& device) {
  cublasHandle_t handle = nullptr;
  nnp_status status = check_blas(cublasCreate(&handle), "cublasCreate");
  if (status == NNP_OK) status = check_blas(cublasSetStream(handle, device.stream), "cublasSetStream");
  // Full f32 precision, as PyTorch's matmul defaults (no TF32).
  if (status == NNP_OK) status = check_blas(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  device.blas = handle;
  return status;
}

// How a matrix of a view reads as the column-major operand cuBLAS wants for
// its transpose (we compute out^T = b^T a^T, column-major).
struct Operand {
  cublasOperation_t op;
  int64_t ld;
  int64_t batch_stride;
};

bool describe(const nnp_view& v, int32_t nb, Operand* out) {
  const int64_t r = v.shape[nb], c = v.shape[nb + 1], s0 = v.strides[nb], s1 = v.strides[nb + 1];
  if ((s1 == 1 || c == 1) && (r == 1 || s0 >= std::max<int64_t>(c, 1))) {  // row-major
    out->op = CUBLAS_OP_N;
    out->ld = r == 1 ? std::max<int64_t>(c, 1) : s0;
  } else if ((s0 == 1 || r == 1) && (c == 1 || s1 >= std::max<int64_t>(r, 1))) {  // column-major
    out->op = CUBLAS_OP_T;
    out->ld = c == 1 ? std::max<int64_t>(r, 1) : s1;
  } else {
    return false;
  }
  // The batch dimensions must step by one stride (or not at all).
  out->batch_stride = nb > 0 ? v.strides[nb - 1] : 0;
  for (int32_t i = nb - 2; i >= 0; --i)
    if (v.shape[i] != 1 && v.strides[i] != v.strides[i + 1] * v.shape[i + 1]) return false;
  return out->ld <= INT32_MAX;
}

nnp_status cublas_gemm(DeviceState& device, const nnp_view* a, const nnp_view* b, const nnp_view* out) {
  const int32_t nb = out->ndim - 2;
  const int64_t m = out->shape[nb], n = out->shape[nb + 1], k = a->shape[nb + 1];
  int64_t batches = 1;
  for (int32_t i = 0; i < nb; ++i) batches *= out->shape[i];
  Operand oa{}, ob{}, oc{};
  if (!describe(*a, nb, &oa) || !describe(*b, nb, &ob) || !describe(*out, nb, &oc) || oc.op != CUBLAS_OP_N)
    return NNP_UNIMPLEMENTED;
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || batches > INT32_MAX) return NNP_UNIMPLEMENTED;

  cudaDataType_t type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (out->dtype) {
    case NNP_F32: type = CUDA_R_32F; break;
    case NNP_F64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      break;
    case NNP_F16: type = CUDA_R_16F; break;
    case NNP_BF16: type = CUDA_R_16BF; break;
    default: return NNP_UNIMPLEMENTED;
  }
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const void* alpha = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&one64) : &one32;
  const void* beta = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&zero64) : &zero32;
  if (k == 0) return NNP_UNIMPLEMENTED;  // the tiled kernel writes the zeros
  cublasHandle_t handle = static_cast<cublasHandle_t>(device.blas);
  if (batches == 1)  // one matrix: the plain entry, as a direct caller of cuBLAS uses
    return check_blas(
        cublasGemmEx(handle, ob.op, oa.op, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
                     b->data, type, static_cast<int>(ob.ld), a->data, type, static_cast<int>(oa.ld), beta, out->data,
                     type, static_cast<int>(oc.ld), compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  return check_blas(cublasGemmStridedBatchedEx(handle, ob.op, oa.op, static_cast<int>(n), static_cast<int>(m),
                                               static_cast<int>(k), alpha, b->data, type, static_cast<int>(ob.ld),
                                               ob.batch_stride, a->data, type, static_cast<int>(oa.ld), oa.batch_stride,
                                               beta, out->data, type, static_cast<int>(oc.ld), oc.batch_stride,
                                               static_cast<int>(batches), compute, CUBLAS_GEMM_DEFAULT),
                    "cublasGemmStridedBatchedEx");
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  gpu::BackendConfig config;
  config.name = "cuda";
  config.score = 1000;
  config.gemm = cublas_gemm;
  config.on_device_created = create_handle;
  return gpu::register_gpu_backend(api, host, config);
}

}  // namespace
}  // namespace nnp::cuda

NNP_PLUGIN("nnplug.cuda", NNP_PLUGIN_VERSION,
           "the CUDA backend: shared GPU kernels, cuBLAS GEMM, one stream per device", nnp::cuda::init)
