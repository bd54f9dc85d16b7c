// Adapters: memory statistics (ABI 1.28), torch.cuda.memory_stats and
// reset_peak_memory_stats for every device.
#include "../device.hpp"
#include "../tensor.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

nnp_status memory_stats(nnp_device device, nnp_memory_stats* out) {
  return guard([&] {
    nnp_memory_stats& stats = info_arg(out, "memory_stats");
    check_device("memory_stats", device);
    write_info(&stats, backend_of(device).memory(device.index).stats());
  });
}

nnp_status reset_peak_memory_stats(nnp_device device) {
  return guard([&] {
    check_device("reset_peak_memory_stats", device);
    backend_of(device).memory(device.index).reset_peak();
  });
}

}  // namespace nnp::core::api
