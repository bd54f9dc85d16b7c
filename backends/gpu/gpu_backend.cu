#include <cstring>
#include <new>

#include "gpu_backend.hpp"

namespace nnp::gpu {

const nnp_api* g_api = nullptr;

namespace {

constexpr size_t kStagingBytes = size_t{8} << 20;  // pinned; larger copies go direct

Backend* as_backend(void* state) { return static_cast<Backend*>(state); }

}  // namespace

nnp_status fail(nnp_status status, const std::string& message) {
  g_api->set_error(status, message.c_str());
  return status;
}

nnp_status check(gpuError_t error, const char* what) {
  if (error == gpuSuccess) return NNP_OK;
  (void)gpuGetLastError();  // clear the sticky copy of a non-fatal error
  std::string message = std::string(NNP_GPU_RUNTIME_NAME " ") + what + " failed: " + gpuGetErrorString(error);
  return fail(NNP_DEVICE_ERROR, message);
}

// ---- caching allocator ----

size_t CachingAllocator::rounded(size_t bytes) {
  if (bytes <= 512) return 512;
  if (bytes <= (size_t{64} << 20)) {  // powers of two up to 64 MiB
    size_t size = 1024;
    while (size < bytes) size <<= 1;
    return size;
  }
  const size_t granule = size_t{2} << 20;
  return (bytes + granule - 1) / granule * granule;
}

nnp_status CachingAllocator::allocate(size_t bytes, void** out) {
  const size_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      *out = it->second.back();
      it->second.pop_back();
      return NNP_OK;
    }
  }
  gpuError_t error = gpuMalloc(out, size);
  if (error != gpuSuccess) {  // give the cache back to the runtime and try once more
    (void)gpuGetLastError();
    empty();
    error = gpuMalloc(out, size);
  }
  if (error != gpuSuccess) {
    (void)gpuGetLastError();
    *out = nullptr;
    return fail(NNP_OUT_OF_MEMORY, std::string(NNP_GPU_RUNTIME_NAME " could not allocate ") + std::to_string(bytes) +
                                       " bytes: " + gpuGetErrorString(error));
  }
  return NNP_OK;
}

void CachingAllocator::release(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_[rounded(bytes)].push_back(ptr);
}

void CachingAllocator::empty() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [size, blocks] : free_)
    for (void* block : blocks) (void)gpuFree(block);
  free_.clear();
}

// ---- devices ----

DeviceState* device_state(Backend& backend, int32_t device) {
  if (device < 0 || device >= backend.device_count) {
    fail(NNP_INVALID_ARGUMENT, std::string(backend.config.name) + ": no device " + std::to_string(device));
    return nullptr;
  }
  std::call_once(backend.once[device], [&] {
    DeviceState& state = backend.devices[device];
    nnp_status status = check(gpuSetDevice(device), "selecting the device");
    if (status == NNP_OK)
      status = check(gpuStreamCreateWithFlags(&state.stream, gpuStreamNonBlocking), "creating the device's stream");
    if (status == NNP_OK) status = check(gpuHostAlloc(&state.staging, kStagingBytes), "allocating pinned memory");
    if (status == NNP_OK) state.staging_bytes = kStagingBytes;
    if (status == NNP_OK)
      status = check(gpuMalloc(reinterpret_cast<void**>(&state.index_error), sizeof(IndexError)),
                     "allocating the index-error word");
    if (status == NNP_OK && backend.config.on_device_created) status = backend.config.on_device_created(state);
    backend.init_status[device] = status;
  });
  if (backend.init_status[device] != NNP_OK) {
    fail(backend.init_status[device], std::string(backend.config.name) + ":" + std::to_string(device) +
                                          " could not be started earlier in this process");
    return nullptr;
  }
  // Kernels and copies go to this device from this thread; reading the
  // thread's current device is cheaper than setting it on every op.
  int current = -1;
  if (gpuGetDevice(&current) != gpuSuccess || current != device) {
    if (gpuSetDevice(device) != gpuSuccess) {
      check(gpuGetLastError(), "selecting the device");
      return nullptr;
    }
  }
  return &backend.devices[device];
}

DeviceState* device_state(const nnp_kernel_ctx* ctx) {
  return device_state(*as_backend(ctx->backend_state), ctx->device);
}

namespace {

int32_t device_count(void* state) { return as_backend(state)->device_count; }

const char* unavailable_reason(void* state) { return as_backend(state)->unavailable.c_str(); }

nnp_status device_info(void* state, int32_t device, nnp_device_info* out) {
  Backend& backend = *as_backend(state);
  if (device < 0 || device >= backend.device_count)
    return fail(NNP_INVALID_ARGUMENT, std::string(backend.config.name) + ": no device " + std::to_string(device));
  std::call_once(backend.info_once[device], [&] {
    gpuDeviceProp properties;
    backend.info_status[device] = check(gpuGetDeviceProperties(&properties, device), "reading device properties");
    if (backend.info_status[device] != NNP_OK) return;
    backend.names[device] = properties.name;
    backend.memory[device] = properties.totalGlobalMem;
  });
  if (backend.info_status[device] != NNP_OK)
    return fail(backend.info_status[device],
                std::string(backend.config.name) + ":" + std::to_string(device) + ": its properties could not be read");
  out->description = backend.names[device].c_str();
  out->total_memory = backend.memory[device];
  out->score = backend.config.score;
  return NNP_OK;
}

nnp_status alloc(void* state, int32_t device, size_t bytes, void** out) {
  *out = nullptr;
  if (bytes == 0) return NNP_OK;
  DeviceState* d = device_state(*as_backend(state), device);
  if (d == nullptr) return g_api->last_status();
  return d->allocator.allocate(bytes, out);
}

void release(void* state, int32_t device, void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  Backend& backend = *as_backend(state);
  backend.devices[device].allocator.release(ptr, bytes);
}

// Host <-> device through the pinned staging buffer (the host side may be
// pageable and may be freed as soon as the call returns, so it finishes).
nnp_status copy_from_host(void* state, int32_t device, void* dst, const void* src, size_t bytes) {
  DeviceState* d = device_state(*as_backend(state), device);
  if (d == nullptr) return g_api->last_status();
  for (size_t done = 0; done < bytes; done += d->staging_bytes) {
    size_t chunk = bytes - done < d->staging_bytes ? bytes - done : d->staging_bytes;
    // The previous chunk's transfer must be done before the buffer is reused.
    nnp_status status = check(gpuStreamSynchronize(d->stream), "synchronize");
    if (status != NNP_OK) return status;
    std::memcpy(d->staging, static_cast<const char*>(src) + done, chunk);
    status = check(gpuMemcpyAsync(static_cast<char*>(dst) + done, d->staging, chunk, gpuMemcpyHostToDevice, d->stream),
                   "copy to the device");
    if (status != NNP_OK) return status;
  }
  return check(gpuStreamSynchronize(d->stream), "synchronize");
}

nnp_status copy_to_host(void* state, int32_t device, void* dst, const void* src, size_t bytes) {
  DeviceState* d = device_state(*as_backend(state), device);
  if (d == nullptr) return g_api->last_status();
  for (size_t done = 0; done < bytes; done += d->staging_bytes) {
    size_t chunk = bytes - done < d->staging_bytes ? bytes - done : d->staging_bytes;
    nnp_status status =
        check(gpuMemcpyAsync(d->staging, static_cast<const char*>(src) + done, chunk, gpuMemcpyDeviceToHost, d->stream),
              "copy to the host");
    if (status == NNP_OK) status = check(gpuStreamSynchronize(d->stream), "synchronize");
    if (status != NNP_OK) return status;
    std::memcpy(static_cast<char*>(dst) + done, d->staging, chunk);
  }
  return NNP_OK;
}

nnp_status copy_on_device(void* state, int32_t device, void* dst, const void* src, size_t bytes) {
  DeviceState* d = device_state(*as_backend(state), device);
  if (d == nullptr) return g_api->last_status();
  return check(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToDevice, d->stream), "copy on the device");
}

nnp_status synchronize(void* state, int32_t device) {
  DeviceState* d = device_state(*as_backend(state), device);
  if (d == nullptr) return g_api->last_status();
  return check(gpuStreamSynchronize(d->stream), "synchronize");
}

void* stream(void* state, int32_t device) {
  DeviceState* d = device_state(*as_backend(state), device);
  return d ? d->stream : nullptr;
}

// Timing events for the profiler: recorded on the device's stream.
nnp_status event_record(void* state, int32_t device, void** event) {
  DeviceState* d = device_state(*as_backend(state), device);
  if (d == nullptr) return g_api->last_status();
  gpuEvent_t e = nullptr;
  if (nnp_status s = check(gpuEventCreate(&e), "event_record"); s != NNP_OK) return s;
  if (nnp_status s = check(gpuEventRecord(e, d->stream), "event_record"); s != NNP_OK) {
    (void)gpuEventDestroy(e);
    return s;
  }
  *event = e;
  return NNP_OK;
}

nnp_status event_elapsed_us(void* state, int32_t device, void* start, void* end, double* us) {
  if (device_state(*as_backend(state), device) == nullptr) return g_api->last_status();
  if (nnp_status s = check(gpuEventSynchronize(static_cast<gpuEvent_t>(end)), "event_elapsed_us"); s != NNP_OK)
    return s;
  float ms = 0;
  nnp_status s =
      check(gpuEventElapsedTime(&ms, static_cast<gpuEvent_t>(start), static_cast<gpuEvent_t>(end)), "event_elapsed_us");
  *us = static_cast<double>(ms) * 1000.0;
  return s;
}

void event_release(void*, int32_t, void* event) {
  if (event) (void)gpuEventDestroy(static_cast<gpuEvent_t>(event));
}

}  // namespace

nnp_status register_gpu_backend(const nnp_api* api, nnp_plugin_host* host, const BackendConfig& config) {
  g_api = api;
  static Backend backend;  // one per plugin library
  backend.config = config;
  int count = 0;
  gpuError_t error = gpuGetDeviceCount(&count);
  if (error != gpuSuccess) {
    (void)gpuGetLastError();
    count = 0;
    backend.unavailable = std::string(NNP_GPU_RUNTIME_NAME ": ") + gpuGetErrorString(error);
  } else if (count == 0) {
    backend.unavailable = NNP_GPU_RUNTIME_NAME ": no device found";
  }
  backend.device_count = count;
  const size_t slots = count > 0 ? static_cast<size_t>(count) : 1;
  backend.once = std::make_unique<std::once_flag[]>(slots);
  backend.devices = std::make_unique<DeviceState[]>(slots);
  backend.init_status = std::make_unique<nnp_status[]>(slots);
  backend.info_once = std::make_unique<std::once_flag[]>(slots);
  backend.names = std::make_unique<std::string[]>(slots);
  backend.memory = std::make_unique<uint64_t[]>(slots);
  backend.info_status = std::make_unique<nnp_status[]>(slots);

  static nnp_backend table{};
  table.struct_size = sizeof(nnp_backend);
  table.name = config.name;
  table.score = config.score;
  table.flags = 0;
  table.autocast_dtype = NNP_F16;  // tensor cores' half type, PyTorch's CUDA default
  table.state = &backend;
  table.device_count = device_count;
  table.unavailable_reason = unavailable_reason;
  table.device_info = device_info;
  table.alloc = alloc;
  table.free = release;
  table.copy_from_host = copy_from_host;
  table.copy_to_host = copy_to_host;
  table.copy_on_device = copy_on_device;
  table.synchronize = synchronize;
  table.stream = stream;
  table.kernels = kernel_table();
  table.event_record = event_record;
  table.event_elapsed_us = event_elapsed_us;
  table.event_release = event_release;
  table.dtypes = NNP_DTYPES_1_7;  // declared (ABI 1.16): every dtype through i8, every unary op through round
  table.unary_ops = NNP_UNARY_OPS_1_7;
  return api->register_backend(host, &table);
}

}  // namespace nnp::gpu
