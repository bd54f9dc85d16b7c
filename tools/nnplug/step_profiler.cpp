#include "step_profiler.hpp"

#include <cstdio>
#include <filesystem>
#include <utility>

namespace nnplug {

StepProfiler::StepProfiler(std::string trace_path, int64_t warmup_steps, int64_t active_steps)
    : trace_path_(std::move(trace_path)), warmup_(warmup_steps), active_(active_steps), done_(trace_path_.empty()) {
  if (done_) return;
  // Refused before training starts, not after the profiled steps.
  namespace fs = std::filesystem;
  const fs::path path(trace_path_), folder = path.parent_path();
  std::error_code error;
  if (fs::is_directory(path, error))
    throw nnp::Error(NNP_INVALID_ARGUMENT,
                     "--profile " + trace_path_ + ": is a folder; give a file name such as trace.json");
  if (!folder.empty() && !fs::is_directory(folder, error))
    throw nnp::Error(NNP_INVALID_ARGUMENT,
                     "--profile " + trace_path_ + ": the folder " + folder.string() + " does not exist");
}

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
  try {
    profile.export_chrome_trace(trace_path_);
  } catch (const nnp::Error& e) {  // the training goes on; only the trace is lost
    std::fprintf(stderr, "nnplug train: --profile: %s\n", e.what());
    return;
  }
  std::printf(
      "\nprofile of %lld steps after %lld warm-up steps (trace %s; open it in Perfetto or chrome://tracing):\n%s",
      static_cast<long long>(step_ - warmup_), static_cast<long long>(warmup_), trace_path_.c_str(),
      profile.table("self_cpu_time_total", 15).c_str());
}

}  // namespace nnplug
