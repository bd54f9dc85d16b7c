// nnp/memory.hpp - what tensors hold on a device (ABI 1.28): PyTorch's
// torch.cuda.memory_allocated, max_memory_allocated, memory_stats and
// reset_peak_memory_stats, for every device nnplug has (cpu included).
//
//   nnp::reset_peak_memory_stats(device);
//   train_step();
//   int64_t peak = nnp::max_memory_allocated(device);  // bytes, during the step
//
// The bytes are those of the storage nnplug allocated for tensors and has
// not freed, at the size it asked of the backend: a backend allocator's
// rounding and the blocks it keeps cached are not counted (the process's
// resident memory includes them), nor memory nnplug did not allocate
// (DLPack imports). Views share their base's storage and add
// nothing.
#pragma once

#include <nnp/tensor.hpp>

namespace nnp {

struct MemoryStats {
  int64_t allocated_bytes = 0;       // held by tensors now
  int64_t peak_allocated_bytes = 0;  // the most held at once since the start or the last reset_peak_memory_stats
  int64_t allocations = 0;           // storages held now
  int64_t total_allocations = 0;     // storages allocated since the process began
};

inline MemoryStats memory_stats(const Device& device = Device::cpu()) {
  nnp_memory_stats raw{};
  raw.struct_size = sizeof(raw);
  check(api().memory_stats(device.raw(), &raw));
  return MemoryStats{raw.allocated_bytes, raw.peak_allocated_bytes, raw.allocations, raw.total_allocations};
}
inline int64_t memory_allocated(const Device& device = Device::cpu()) { return memory_stats(device).allocated_bytes; }
inline int64_t max_memory_allocated(const Device& device = Device::cpu()) {
  return memory_stats(device).peak_allocated_bytes;
}
// The peak starts again from what is held now.
inline void reset_peak_memory_stats(const Device& device = Device::cpu()) {
  check(api().reset_peak_memory_stats(device.raw()));
}

}  // namespace nnp
