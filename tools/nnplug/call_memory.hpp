// The tensor memory one model call needs: what `nnplug bench` and
// `nnplug run --verbose` print beside the process's resident set. The
// device's peak of allocated tensor bytes (nnp::max_memory_allocated) during
// the call, above what was held before it (the weights, the inputs, a plan's
// packed weights): the intermediates the call held at once.
#pragma once

#include <cstdio>
#include <functional>
#include <nnp/memory.hpp>
#include <string>

namespace nnplug {

// Runs call once on device and prints its peak, labelled.
inline void print_call_memory(const nnp::Device& device, const std::string& label, const std::function<void()>& call) {
  const int64_t held = nnp::memory_allocated(device);
  nnp::reset_peak_memory_stats(device);
  call();
  const int64_t peak = nnp::max_memory_allocated(device) - held;
  std::printf("%s: peak tensor memory %.1f MB above the %.1f MB held before the call (max_memory_allocated)\n",
              label.c_str(), static_cast<double>(peak) / 1e6, static_cast<double>(held) / 1e6);
}

}  // namespace nnplug
