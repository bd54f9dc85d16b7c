// What a stopped profile is read as: Chrome Trace Event JSON (Perfetto and
// chrome://tracing open it) and PyTorch's key_averages() table.
#pragma once

#include <string>
#include <vector>

#include "profiler.hpp"

struct nnp_profile {
  std::vector<nnp::core::profiler::Event> events;
};

namespace nnp::core::profiler {

// {"traceEvents": [{"ph": "X", "name", "cat", "ts", "dur", "pid", "tid", "args"}, ...]}; times in
// microseconds. Events still open when the profiler stopped are left out.
std::string chrome_trace(const std::vector<Event>& events);
// Written to path.tmp-<pid>, then renamed over path.
void save_chrome_trace(const std::vector<Event>& events, const std::string& path);

// Self time: an event's duration less its children's (same thread).
std::vector<int64_t> self_times_ns(const std::vector<Event>& events);
// One row per name: calls, self and total host time, device time, memory.
std::string summary_table(const std::vector<Event>& events, const std::string& sort_by, int32_t row_limit);

}  // namespace nnp::core::profiler
