// A test backend, "faulty": the reference backend's kernels behind counters
// that make the Nth allocation or the Nth kernel call fail, as a device that
// runs out of memory or reports an error part-way through a training step
// would. A test fixture, not a shipped plugin.
#include <nnp/host_backend.h>

#include <cstdlib>
#include <string>

#include "../../backends/reference/reference_kernels.hpp"
#include "fault_control.hpp"

namespace {

using nnp::test::FaultControl;

FaultControl& control() {
  static FaultControl instance;
  return instance;
}

// Errors go through the reference kernels' copy of the table (set in init).
using nnp::reference::g_api;

// Counts one event; true when it is the one to fail.
bool inject(std::atomic<int64_t>& counter, const std::atomic<int64_t>& fail_at) {
  int64_t n = counter.fetch_add(1) + 1;
  return n == fail_at.load();
}

template <auto Slot, typename... Args>
nnp_status guarded(const nnp_kernel_ctx* ctx, Args... args) {
  if (inject(control().kernel_calls, control().fail_kernel_call)) {
    std::string message =
        "faulty: kernel call #" + std::to_string(control().kernel_calls.load()) + " failed (injected device error)";
    g_api->set_error(NNP_DEVICE_ERROR, message.c_str());
    return NNP_DEVICE_ERROR;
  }
  return (nnp::reference::kernel_table()->*Slot)(ctx, args...);
}

// The guarded version of kernel slot `Slot`, whatever its signature.
template <auto Slot, typename... Args>
constexpr auto guard_of(nnp_status (*)(const nnp_kernel_ctx*, Args...)) {
  return &guarded<Slot, Args...>;
}
#define NNP_GUARDED(slot) guard_of<&nnp_kernels::slot>(decltype(nnp_kernels::slot){})

const nnp_kernels kernels = [] {
  nnp_kernels k{};
  k.struct_size = sizeof(nnp_kernels);
#define NNP_SET_SLOT(slot) k.slot = NNP_GUARDED(slot);
  NNP_KERNELS_REQUIRED_SLOTS(NNP_SET_SLOT)
#undef NNP_SET_SLOT
  return k;
}();

nnp_status device_info(void*, int32_t, nnp_device_info* out) {
  out->description = "reference kernels with injected faults (tests only)";
  out->total_memory = 0;
  out->score = 1;
  return NNP_OK;
}

nnp_status alloc(void*, int32_t, size_t bytes, void** out) {
  if (inject(control().allocations, control().fail_allocation)) {
    std::string message = "faulty: allocation #" + std::to_string(control().allocations.load()) + " of " +
                          std::to_string(bytes) + " bytes refused (injected out-of-memory)";
    g_api->set_error(NNP_OUT_OF_MEMORY, message.c_str());
    return NNP_OUT_OF_MEMORY;
  }
  *out = std::malloc(bytes ? bytes : 1);
  if (*out == nullptr) {
    g_api->set_error(NNP_OUT_OF_MEMORY, "faulty: host allocation failed");
    return NNP_OUT_OF_MEMORY;
  }
  ++control().live_blocks;
  return NNP_OK;
}

void release(void*, int32_t, void* ptr, size_t) {
  if (ptr == nullptr) return;
  --control().live_blocks;
  std::free(ptr);
}

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
  static const nnp_backend backend = [] {
    nnp_backend b;
    nnp_host_backend_init(&b, "faulty", 1, &kernels);
    b.dtypes = NNP_DTYPES_1_7;  // the reference kernels' sets
    b.unary_ops = NNP_UNARY_OPS_1_7;
    b.device_info = device_info;
    b.alloc = alloc;
    b.free = release;
    return b;
  }();
  return api->register_backend(host, &backend);
}

}  // namespace

NNP_PLUGIN("test.faulty", "0", "the reference kernels with injected allocation and kernel failures (tests only)", init)

extern "C" NNP_EXPORT FaultControl* nnp_fault_control() { return &control(); }
