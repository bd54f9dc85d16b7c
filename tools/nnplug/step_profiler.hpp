// Profiles a few training steps after warm-up, as PyTorch's
// torch.profiler.schedule(wait=0, warmup, active): each profiled step is a
// "ProfilerStep#N" scope; at the end the Chrome trace is written and the
// summary table printed.
#pragma once

#include <memory>
#include <nnp/profiler.hpp>
#include <optional>
#include <string>

namespace nnplug {

class StepProfiler {
 public:
  // trace_path empty: profiles nothing.
  StepProfiler(std::string trace_path, int64_t warmup_steps, int64_t active_steps);
  void begin_step();
  void end_step();
  // Writes what was recorded when the run ends before the last profiled step.
  void finish();

 private:
  std::string trace_path_;
  int64_t warmup_, active_, step_ = 0;
  std::unique_ptr<nnp::profiler::Profiler> profiler_;
  std::optional<nnp::profiler::RecordFunction> scope_;
  bool done_ = false;
};

}  // namespace nnplug
