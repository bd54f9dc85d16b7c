#include "step_profiler.hpp"

#include <cstdio>
#include <utility>

namespace nnplug {

StepProfiler::StepProfiler(std::string trace_path, int64_t warmup_steps, int64_t active_steps)
    : trace_path_(std::move(trace_path)), warmup_(warmup_steps), active_(active_steps), done_(trace_path_.empty()) {}

void StepProfiler::begin_step() {
  if (done_) return;
  if (step_ == warmup_) profiler_ = std::make_unique<nnp::profiler::Profiler>();
  if (profiler_) scope_.emplace("ProfilerStep#" + std::to_string(step_));
}

void StepProfiler::end_step() {
  if (done_) return;
  scope_.reset();
  ++step_;
  if (step_ == warmup_ + active_) finish();
}

void StepProfiler::finish() {
  if (done_) return;
  done_ = true;
  scope_.reset();
  if (!profiler_) {
    std::printf("profile: the run ended after %lld steps, before the %lld warm-up steps were done; no trace written\n",
                static_cast<long long>(step_), static_cast<long long>(warmup_));
    return;
  }
  nnp::profiler::Profile profile = profiler_->stop();
  profiler_.reset();
  profile.export_chrome_trace(trace_path_);
  std::printf(
      "\nprofile of %lld steps after %lld warm-up steps (trace %s; open it in Perfetto or chrome://tracing):\n%s",
      static_cast<long long>(step_ - warmup_), static_cast<long long>(warmup_), trace_path_.c_str(),
      profile.table("self_cpu_time_total", 15).c_str());
}

}  // namespace nnplug
