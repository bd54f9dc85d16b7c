// What the CUDA and ROCm plugins share: the backend table, devices created on
// first use (a stream, pinned staging memory, a caching allocator), copies,
// and the kernel table of gpu_kernels.cu. Each plugin adds only its name and,
// for CUDA, a cuBLAS GEMM tried before the shared tiled one.
#pragma once

#include <nnp/plugin.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu_runtime.hpp"

namespace nnp::gpu {

extern const nnp_api* g_api;

// Sets the thread's error and returns status.
nnp_status fail(nnp_status status, const std::string& message);
// NNP_OK, or NNP_DEVICE_ERROR (NNP_OUT_OF_MEMORY) with the runtime's text.
nnp_status check(gpuError_t error, const char* what);

// Where an index kernel reports the first out-of-range index it met.
struct IndexError {
  int32_t flag;
  int32_t dim;
  int64_t index;
  int64_t size;
};

// Freed blocks kept per rounded size and reused: the op path does not call
// the runtime's allocator in steady state. One stream per device keeps reuse
// ordered after the work that used a block.
class CachingAllocator {
 public:
  nnp_status allocate(size_t bytes, void** out);
  void release(void* ptr, size_t bytes);
  void empty();  // returns every cached block to the runtime
  static size_t rounded(size_t bytes);

 private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
};

struct DeviceState {
  gpuStream_t stream = nullptr;
  void* staging = nullptr;  // pinned host memory for copies
  size_t staging_bytes = 0;
  IndexError* index_error = nullptr;  // device memory
  CachingAllocator allocator;
  void* blas = nullptr;  // the plugin's library handle (cuBLAS), or NULL
};

// A GEMM a plugin may offer (cuBLAS); returns NNP_UNIMPLEMENTED for layouts
// it does not take, and the shared tiled kernel runs instead.
using GemmFn = nnp_status (*)(DeviceState& device, const nnp_view* a, const nnp_view* b, const nnp_view* out);
// Creates the plugin's library handle for a device (after the stream).
using DeviceHook = nnp_status (*)(DeviceState& device);

struct BackendConfig {
  const char* name;  // "cuda", "rocm"
  int32_t score;
  GemmFn gemm = nullptr;
  DeviceHook on_device_created = nullptr;
};

struct Backend {
  BackendConfig config;
  int32_t device_count = 0;
  std::string unavailable;  // the runtime's words when there is no device
  std::unique_ptr<std::once_flag[]> once;
  std::unique_ptr<DeviceState[]> devices;
  std::unique_ptr<nnp_status[]> init_status;
  // Each device's model name and memory, read once (device_info hands out
  // the name, which must outlive the call).
  std::unique_ptr<std::once_flag[]> info_once;
  std::unique_ptr<std::string[]> names;
  std::unique_ptr<uint64_t[]> memory;
  std::unique_ptr<nnp_status[]> info_status;
};

// The device's state, created on its first use; NULL (error set) on failure.
DeviceState* device_state(Backend& backend, int32_t device);
DeviceState* device_state(const nnp_kernel_ctx* ctx);

const nnp_kernels* kernel_table();

// A plugin's init: counts devices (no context is created) and registers.
nnp_status register_gpu_backend(const nnp_api* api, nnp_plugin_host* host, const BackendConfig& config);

}  // namespace nnp::gpu
