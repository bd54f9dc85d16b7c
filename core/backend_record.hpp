// A backend as the core keeps it once a plugin registered it: its table
// copied at the size this core knows (unknown tails zeroed), the per-device
// kernel contexts created on first use of each device, and a reference to
// the plugin's shared library that anything outliving the registry (a
// DLPack deleter a consumer calls late) copies to keep the code mapped.
#pragma once

#include <nnp/plugin.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "memory_counter.hpp"

namespace nnp::core {

class BackendRecord {
 public:
  BackendRecord(int32_t id, const nnp_backend& table, const nnp_kernels& kernels, std::string plugin_path,
                std::shared_ptr<const void> library);

  int32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const std::string& plugin_path() const { return plugin_path_; }
  const std::shared_ptr<const void>& library() const { return library_; }
  const nnp_backend& table() const { return table_; }
  const nnp_kernels& kernels() const { return kernels_; }
  // The kernels themselves (the plugin's, and the core's fallbacks for the
  // slots it lacks): kernels() holds the recorders that call these
  // (capture/tape.hpp).
  const nnp_kernels& played_kernels() const { return played_; }
  bool host_memory() const { return (table_.flags & NNP_BACKEND_HOST_MEMORY) != 0; }
  // The dtype autocast picks on this backend when a scope names none
  // (nnp_backend 1.27), else PyTorch's default for host or device memory.
  nnp_dtype autocast_dtype() const {
    if (table_.struct_size >= NNP_BACKEND_SIZE_1_27 &&
        (table_.autocast_dtype == NNP_BF16 || table_.autocast_dtype == NNP_F16))
      return static_cast<nnp_dtype>(table_.autocast_dtype);
    return host_memory() ? NNP_BF16 : NNP_F16;
  }
  // Built against ABI 1.7 or later.
  bool knows_1_7() const { return kernels_.struct_size >= NNP_KERNELS_SIZE_1_7; }
  // Built against 1.18 or later: its conv2d reads nnp_conv2d_params.activation.
  bool knows_1_18() const { return kernels_.struct_size >= NNP_KERNELS_SIZE_1_18; }
  // What its kernels compute (nnp_backend 1.16), as declared; a backend that
  // declares nothing has ABI 1.0's sets, or 1.7's when built against 1.7 to
  // 1.15 (which promised i8 and round to every such backend).
  uint32_t dtypes() const { return dtypes_; }
  // The required kernel slots it declared it lacks (nnp_backend 1.24), one
  // bit a nnp_kernel_slot: kernels() holds the core's fallbacks there
  // (kernel_fallback.hpp), which run the op on another backend.
  uint32_t missing_kernels() const { return missing_kernels_; }
  uint32_t unary_ops() const { return unary_ops_; }
  bool computes(nnp_dtype dtype) const { return dtype >= 0 && dtype < 32 && (dtypes_ >> dtype & 1u); }
  bool computes_unary(nnp_unary_op op) const { return op >= 0 && op < 32 && (unary_ops_ >> op & 1u); }

  // The optional kernel slots, one accessor each that owns the rule: NULL
  // when the backend's table predates the slot or leaves it NULL, and the
  // caller then takes the core's composed path. No call site reads an
  // optional slot or a struct_size itself.
  decltype(nnp_kernels::gemm_i8) gemm_i8() const { return since(kernels_.gemm_i8, NNP_KERNELS_SIZE_1_7); }
  decltype(nnp_kernels::conv2d) conv2d() const { return since(kernels_.conv2d, NNP_KERNELS_SIZE_1_9); }
  decltype(nnp_kernels::max_pool2d) max_pool2d() const { return since(kernels_.max_pool2d, NNP_KERNELS_SIZE_1_10); }
  decltype(nnp_kernels::sgd_step) sgd_step() const { return since(kernels_.sgd_step, NNP_KERNELS_SIZE_1_12); }
  // Without it the fast convolution is not taken where a gradient is recorded.
  decltype(nnp_kernels::conv2d_backward) conv2d_backward() const {
    return since(kernels_.conv2d_backward, NNP_KERNELS_SIZE_1_12);
  }
  decltype(nnp_kernels::layer_norm) layer_norm() const { return since(kernels_.layer_norm, NNP_KERNELS_SIZE_1_18); }
  decltype(nnp_kernels::add_layer_norm) add_layer_norm() const {
    return since(kernels_.add_layer_norm, NNP_KERNELS_SIZE_1_23);
  }
  decltype(nnp_kernels::relu_backward) relu_backward() const {
    return since(kernels_.relu_backward, NNP_KERNELS_SIZE_1_26);
  }
  decltype(nnp_kernels::unscale_check) unscale_check() const {
    return since(kernels_.unscale_check, NNP_KERNELS_SIZE_1_27);
  }
  decltype(nnp_kernels::gemm_epilogue) gemm_epilogue() const {
    return since(kernels_.gemm_epilogue, NNP_KERNELS_SIZE_1_18);
  }
  decltype(nnp_kernels::quantized_gemm) quantized_gemm() const {
    return since(kernels_.quantized_gemm, NNP_KERNELS_SIZE_1_19);
  }
  decltype(nnp_kernels::elementwise_chain) elementwise_chain() const {
    return since(kernels_.elementwise_chain, NNP_KERNELS_SIZE_1_19);
  }
  decltype(nnp_kernels::attention) attention() const { return since(kernels_.attention, NNP_KERNELS_SIZE_1_20); }
  // Both or neither: a backend with only one of the two has none.
  decltype(nnp_kernels::conv2d_pack) conv2d_pack() const {
    return conv2d_packed() ? since(kernels_.conv2d_pack, NNP_KERNELS_SIZE_1_21) : nullptr;
  }
  decltype(nnp_kernels::gemm_pack) gemm_pack() const {
    return gemm_packed() ? since(kernels_.gemm_pack, NNP_KERNELS_SIZE_1_21) : nullptr;
  }
  decltype(nnp_kernels::gemm_packed) gemm_packed() const {
    return since(kernels_.gemm_pack, NNP_KERNELS_SIZE_1_21) ? since(kernels_.gemm_packed, NNP_KERNELS_SIZE_1_21)
                                                            : nullptr;
  }
  decltype(nnp_kernels::conv2d_packed) conv2d_packed() const {
    return since(kernels_.conv2d_pack, NNP_KERNELS_SIZE_1_21) ? since(kernels_.conv2d_packed, NNP_KERNELS_SIZE_1_21)
                                                              : nullptr;
  }
  decltype(nnp_kernels::quantized_conv2d_pack) quantized_conv2d_pack() const {
    return quantized_conv2d_packed() ? since(kernels_.quantized_conv2d_pack, NNP_KERNELS_SIZE_1_22) : nullptr;
  }
  decltype(nnp_kernels::quantized_conv2d_packed) quantized_conv2d_packed() const {
    return since(kernels_.quantized_conv2d_pack, NNP_KERNELS_SIZE_1_22)
               ? since(kernels_.quantized_conv2d_packed, NNP_KERNELS_SIZE_1_22)
               : nullptr;
  }
  decltype(nnp_kernels::conv2d_integer_pack) conv2d_integer_pack() const {
    return conv2d_integer_packed() ? since(kernels_.conv2d_integer_pack, NNP_KERNELS_SIZE_1_29) : nullptr;
  }
  decltype(nnp_kernels::conv2d_integer_packed) conv2d_integer_packed() const {
    return since(kernels_.conv2d_integer_pack, NNP_KERNELS_SIZE_1_29)
               ? since(kernels_.conv2d_integer_packed, NNP_KERNELS_SIZE_1_29)
               : nullptr;
  }
  decltype(nnp_kernels::dynamic_quantize_linear) dynamic_quantize_linear() const {
    return since(kernels_.dynamic_quantize_linear, NNP_KERNELS_SIZE_1_29);
  }
  // Compiles graphs (nnp_backend 1.24: capability, compile, execute and
  // release, all four or none).
  bool compiles_graphs() const {
    return table_.struct_size >= NNP_BACKEND_SIZE_1_24 && table_.capability && table_.compile && table_.execute &&
           table_.release;
  }
  // Device timing events (nnp_backend 1.6): all three, or none.
  bool has_timing_events() const {
    return table_.struct_size >= NNP_BACKEND_SIZE_1_6 && table_.event_record && table_.event_elapsed_us &&
           table_.event_release;
  }

  // Asked of the backend once; never creates a device context.
  int32_t device_count() const;
  std::string unavailable_reason() const;
  // What backend_info answers; its strings live as long as the record.
  nnp_backend_info info() const;
  // The same without asking for devices: device_count -1, no reason.
  nnp_backend_info summary() const;
  // The backend's description of one device, completed with its name.
  nnp_device_info device_info(int32_t device) const;
  void synchronize(int32_t device) const;
  // The context kernels on `device` run with; the first call for a device is
  // its first use (streams and device contexts are created here).
  // Inline: every kernel call asks, and after the first it is two loads.
  const nnp_kernel_ctx& context(int32_t device) const {
    if (devices_ready_.load(std::memory_order_acquire)) {
      const DeviceSlot& slot = devices_[device];
      if (slot.ready.load(std::memory_order_acquire)) return slot.ctx.ctx;
    }
    return first_context(device);
  }
  // What tensors hold on `device` (a valid index: tensors exist only there).
  MemoryCounter& memory(int32_t device) const {
    if (!devices_ready_.load(std::memory_order_acquire)) init_devices();
    return devices_[device].memory;
  }
  // The record whose context() gave ctx: how the core's own kernels (the
  // fallbacks a backend's table holds) find the backend they run for.
  // Only for contexts the core made, never a plugin's own.
  static const BackendRecord& owner_of(const nnp_kernel_ctx* ctx) {
    return *reinterpret_cast<const KernelContext*>(ctx)->owner;
  }

 private:
  // A kernel context as the core makes it: what the backend sees, then its
  // owner (which the backend cannot see, and owner_of reads back).
  struct KernelContext {
    nnp_kernel_ctx ctx{};
    const BackendRecord* owner = nullptr;
  };
  struct DeviceSlot {
    std::once_flag once;
    std::atomic<bool> ready{false};  // lets later calls skip call_once
    KernelContext ctx{};
    MemoryCounter memory;
  };
  template <typename Slot>
  Slot since(Slot slot, size_t size) const {
    return kernels_.struct_size >= size ? slot : nullptr;
  }
  void init_devices() const;
  const nnp_kernel_ctx& first_context(int32_t device) const;  // context()'s slow path

  int32_t id_;
  nnp_backend table_{};
  nnp_kernels kernels_{};
  nnp_kernels played_{};
  uint32_t dtypes_ = 0;
  uint32_t unary_ops_ = 0;
  uint32_t missing_kernels_ = 0;
  std::string name_;
  std::string plugin_path_;
  std::shared_ptr<const void> library_;
  mutable std::once_flag devices_once_;
  mutable std::atomic<bool> devices_ready_{false};
  mutable int32_t device_count_ = 0;
  mutable std::string device_count_refusal_;  // set when the backend reported more than kMaxDevices
  mutable std::unique_ptr<DeviceSlot[]> devices_;
  static constexpr int32_t kMaxDevices = 4096;
};

// Whether any backend registered so far compiles graphs: graph mode asks
// where a plan goes only then.
bool any_backend_compiles_graphs();

// "f32, f64, i8": the dtypes of a set, for messages.
std::string dtype_set_text(uint32_t dtypes);

}  // namespace nnp::core
