// The switchboard of the fault-injecting test backend (fault_backend.cpp):
// counters of allocations and kernel calls, and which one to fail. Tests
// reach it through the one extra symbol the fixture exports,
// nnp_fault_control (the shipped plugins export only nnp_plugin_entry).
#pragma once

#include <atomic>
#include <cstdint>

namespace nnp::test {

struct FaultControl {
  // Numbered from 1 since the last reset(); fail_* = 0 injects nothing.
  std::atomic<int64_t> allocations{0};
  std::atomic<int64_t> fail_allocation{0};
  std::atomic<int64_t> kernel_calls{0};
  std::atomic<int64_t> fail_kernel_call{0};
  // Blocks handed out and not yet freed, for leak checks.
  std::atomic<int64_t> live_blocks{0};

  void reset() {
    allocations = 0;
    fail_allocation = 0;
    kernel_calls = 0;
    fail_kernel_call = 0;
  }
};

using FaultControlFn = FaultControl* (*)();

}  // namespace nnp::test
