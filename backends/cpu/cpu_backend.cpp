// The CPU backend plugin: host memory through a caching allocator, its own
// packed kernels and OpenBLAS for GEMM (cpu_sgemm.hpp), oneDNN for
// convolutions (cpu_conv_onednn.hpp), loops split over its own thread pool
// (thread_pool.hpp) for the rest.
#include <nnp/host_backend.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "caching_allocator.hpp"
#include "cpu_conv_onednn.hpp"
#include "cpu_kernel_table.hpp"
#include "cpu_kernels.hpp"
#include "cpu_sgemm.hpp"
#include "thread_count.hpp"

namespace nnp::cpu {

const nnp_api* g_api = nullptr;

namespace {

CachingAllocator& allocator() {
  static CachingAllocator* instance = new CachingAllocator();  // outlives every tensor
  return *instance;
}

std::string processor_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "host processor";
}

nnp_status device_info(void*, int32_t, nnp_device_info* out) {
  static const std::string description = processor_name() + ", " + std::to_string(thread_count().threads) +
                                         (thread_count().threads == 1 ? " thread (" : " threads (") +
                                         thread_count().source + "), products by " + sgemm_engine() +
                                         ", convolutions by " + convolution_engine() + "; " + describe(kernel_table());
  out->description = description.c_str();
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  out->total_memory = pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
  out->score = 100;
  return NNP_OK;
}

nnp_status alloc(void*, int32_t, size_t bytes, void** out) {
  *out = allocator().allocate(bytes);
  if (*out == nullptr)
    return fail(NNP_OUT_OF_MEMORY, "cpu: could not allocate " + std::to_string(bytes) + " bytes of host memory");
  return NNP_OK;
}

void release(void*, int32_t, void* ptr, size_t bytes) { allocator().deallocate(ptr, bytes); }

// Timing events for the profiler: the host clock (kernels finish before
// they return, so the host's time is the device's).
nnp_status event_record(void*, int32_t, void** event) {
  *event = new std::chrono::steady_clock::time_point(std::chrono::steady_clock::now());
  return NNP_OK;
}
nnp_status event_elapsed_us(void*, int32_t, void* start, void* end, double* us) {
  using Clock = std::chrono::steady_clock;
  *us = std::chrono::duration<double, std::micro>(*static_cast<Clock::time_point*>(end) -
                                                  *static_cast<Clock::time_point*>(start))
            .count();
  return NNP_OK;
}
void event_release(void*, int32_t, void* event) { delete static_cast<std::chrono::steady_clock::time_point*>(event); }

// Every slot by name, from plugin.h's lists: the cpu backend offers every
// optional kernel too.
nnp_kernels make_kernels() {
  nnp_kernels k{};
  k.struct_size = sizeof(nnp_kernels);
#define NNP_SET_SLOT(slot) k.slot = slot;
  NNP_KERNELS_REQUIRED_SLOTS(NNP_SET_SLOT)
  NNP_KERNELS_OPTIONAL_SLOTS(NNP_SET_SLOT)
#undef NNP_SET_SLOT
  return k;
}

const nnp_kernels kKernels = make_kernels();

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  kernel_table();  // every kernel's form, chosen once, now
  set_blas_threads(thread_count().threads);
  static const nnp_backend backend = [] {
    nnp_backend b;
    nnp_host_backend_init(&b, "cpu", 100, &kKernels);
    b.dtypes = NNP_DTYPES_1_17;  // declared (ABI 1.16): every dtype through u64 (1.17), every unary op through round
    b.unary_ops = NNP_UNARY_OPS_1_7;
    b.flags |= NNP_BACKEND_SGD_IN_PLACE;  // sgd_step fails only on dtypes the core never hands it
    // An invalid NNP_CPU_THREADS leaves the backend without its device, and
    // says why wherever cpu:0 is asked for or devices are listed.
    b.device_count = [](void*) { return thread_count().error.empty() ? 1 : 0; };
    b.unavailable_reason = [](void*) { return thread_count().error.c_str(); };
    b.device_info = device_info;
    b.alloc = alloc;
    b.free = release;
    b.event_record = event_record;
    b.event_elapsed_us = event_elapsed_us;
    b.event_release = event_release;
    return b;
  }();
  return api->register_backend(host, &backend);
}

}  // namespace
}  // namespace nnp::cpu

NNP_PLUGIN("nnplug.cpu", NNP_PLUGIN_VERSION,
           "the cpu backend: packed AVX2/AVX-512 and OpenBLAS GEMM, threaded vectorised kernels, oneDNN convolutions "
           "(opened at the first)",
           nnp::cpu::init)
