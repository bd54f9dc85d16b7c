#include "backend_record.hpp"

#include <cstring>

#include "capture/tape.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "kernel_fallback.hpp"

namespace nnp::core {
namespace {

constexpr uint32_t kKnownDtypes = (1u << NNP_DTYPE_COUNT) - 1;
constexpr uint32_t kKnownUnaryOps = (1u << NNP_UNARY_COUNT) - 1;
constexpr uint32_t kKnownKernelSlots = (1u << NNP_KERNEL_REQUIRED_COUNT) - 1;
std::atomic<bool> g_graph_compilers{false};

// A declared set (bits of a later SDK this core does not know are dropped),
// or the one the headers the backend was built with implied.
uint32_t declared(const nnp_backend& table, const nnp_kernels& kernels, uint32_t given, uint32_t known, uint32_t of_1_0,
                  uint32_t of_1_7) {
  if (table.struct_size >= NNP_BACKEND_SIZE_1_16) return given != 0 ? given & known : of_1_0;
  return kernels.struct_size >= NNP_KERNELS_SIZE_1_7 ? of_1_7 : of_1_0;
}

}  // namespace

std::string dtype_set_text(uint32_t dtypes) {
  std::string text;
  for (nnp_dtype d = 0; d < NNP_DTYPE_COUNT; ++d)
    if (dtypes >> d & 1u) text += (text.empty() ? "" : ", ") + std::string(dtype_name(d));
  return text.empty() ? "none" : text;
}

BackendRecord::BackendRecord(int32_t id, const nnp_backend& table, const nnp_kernels& kernels, std::string plugin_path,
                             std::shared_ptr<const void> library)
    : id_(id),
      table_(table),
      kernels_(kernels),
      name_(table.name),
      plugin_path_(std::move(plugin_path)),
      library_(std::move(library)) {
  table_.kernels = &kernels_;                                           // the core's own copy, at the size it knows
  table_.flags &= ~static_cast<uint32_t>(NNP_BACKEND_COMPILES_GRAPHS);  // the core's to say
  dtypes_ = declared(table, kernels, table.dtypes, kKnownDtypes, NNP_DTYPES_1_0, NNP_DTYPES_1_7);
  unary_ops_ = declared(table, kernels, table.unary_ops, kKnownUnaryOps, NNP_UNARY_OPS_1_0, NNP_UNARY_OPS_1_7);
  if (table.struct_size >= NNP_BACKEND_SIZE_1_24) missing_kernels_ = table.missing_kernels & kKnownKernelSlots;
  install_kernel_fallbacks(kernels_, missing_kernels_);
  played_ = kernels_;
  capture::install_kernel_recorders(kernels_);
  if (compiles_graphs()) g_graph_compilers.store(true, std::memory_order_release);
}

bool any_backend_compiles_graphs() { return g_graph_compilers.load(std::memory_order_acquire); }

void BackendRecord::init_devices() const {
  std::call_once(devices_once_, [this] {
    const int32_t count = table_.device_count(table_.state);
    // A count no host could keep a record of each of is the plugin's flaw:
    // the backend then has no devices, and says why.
    if (count > kMaxDevices)
      device_count_refusal_ = "backend '" + name() + "' reports " + std::to_string(count) +
                              " devices; nnplug keeps at most " + std::to_string(kMaxDevices) +
                              " per backend (a flaw in its plugin: " + plugin_path() + ")";
    device_count_ = count > 0 && count <= kMaxDevices ? count : 0;
    devices_ = std::make_unique<DeviceSlot[]>(static_cast<size_t>(device_count_ > 0 ? device_count_ : 1));
    devices_ready_.store(true, std::memory_order_release);
  });
}

int32_t BackendRecord::device_count() const {
  init_devices();
  return device_count_;
}

std::string BackendRecord::unavailable_reason() const {
  if (device_count() == 0 && !device_count_refusal_.empty()) return device_count_refusal_;
  if (device_count() > 0 || table_.unavailable_reason == nullptr) return "";
  const char* reason = table_.unavailable_reason(table_.state);
  return reason ? reason : "";
}

nnp_backend_info BackendRecord::info() const {
  // The reason is the backend's own string: it outlives the call, a copy would not.
  const char* reason = nullptr;
  if (device_count() == 0 && !device_count_refusal_.empty())
    reason = device_count_refusal_.c_str();
  else if (device_count() == 0 && table_.unavailable_reason)
    reason = table_.unavailable_reason(table_.state);
  nnp_backend_info out = summary();
  out.device_count = device_count();
  out.unavailable_reason = reason ? reason : "";
  return out;
}

nnp_backend_info BackendRecord::summary() const {
  return nnp_backend_info{sizeof(nnp_backend_info),
                          name_.c_str(),
                          plugin_path_.c_str(),
                          table_.score,
                          -1,
                          "",
                          table_.flags | (compiles_graphs() ? static_cast<uint32_t>(NNP_BACKEND_COMPILES_GRAPHS) : 0u),
                          dtypes_,
                          unary_ops_,
                          missing_kernels_};
}

nnp_device_info BackendRecord::device_info(int32_t device) const {
  nnp_device_info info{};
  info.struct_size = sizeof(info);
  check_plugin_status(table_.device_info(table_.state, device, &info), name_.c_str(), "device_info");
  info.backend = name_.c_str();
  if (info.description == nullptr) info.description = "";
  return info;
}

void BackendRecord::synchronize(int32_t device) const {
  check_plugin_status(table_.synchronize(table_.state, device), name_.c_str(), "synchronize");
}

const nnp_kernel_ctx& BackendRecord::first_context(int32_t device) const {
  init_devices();
  DeviceSlot& slot = devices_[device];
  std::call_once(slot.once, [&] {
    slot.ctx.ctx.struct_size = sizeof(nnp_kernel_ctx);
    slot.ctx.ctx.backend_state = table_.state;
    slot.ctx.ctx.device = device;
    slot.ctx.ctx.stream = table_.stream ? table_.stream(table_.state, device) : nullptr;
    slot.ctx.owner = this;
    slot.ready.store(true, std::memory_order_release);
  });
  return slot.ctx.ctx;
}

}  // namespace nnp::core
