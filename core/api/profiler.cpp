// Adapters: the profiler (ABI 1.6).
#include <memory>
#include <vector>

#include "../profiler/profile_report.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

// record_function scopes pushed from C on this thread, innermost last.
std::vector<profiler::Token>& pushed_scopes() {
  thread_local std::vector<profiler::Token> scopes;
  return scopes;
}

const nnp_profile& profile_arg(const nnp_profile* p, const char* op) { return in_arg(p, op, "profile"); }

}  // namespace

nnp_status profiler_start(const nnp_profiler_options* options) {
  return guard([&] {
    profiler::Options o;
    if (options) {
      if (options->struct_size < NNP_PROFILER_OPTIONS_SIZE_1_6)
        fail(NNP_INVALID_ARGUMENT, "profiler_start: options struct_size ", options->struct_size,
             " is too small (set it to sizeof(nnp_profiler_options))");
      o.record_shapes = options->record_shapes != 0;
      o.profile_memory = options->profile_memory != 0;
      o.device_time = options->device_time != 0;
    }
    profiler::start(o);
  });
}

nnp_status profiler_stop(nnp_profile** out) {
  return guard([&] {
    nnp_profile*& result = out_arg(out, "profiler_stop");
    auto profile = std::make_unique<nnp_profile>();
    profile->events = profiler::stop();
    pushed_scopes().clear();
    result = profile.release();
  });
}

int32_t profiler_is_active() { return profiler::active() ? 1 : 0; }

nnp_status profiler_push_scope(const char* name) {
  return guard([&] {
    const char* text = text_arg(name, "profiler_push_scope", "name");
    if (!profiler::active()) return;
    // Pushed even when not recorded, so the matching pop pops it.
    pushed_scopes().push_back(profiler::begin(NNP_PROFILE_SCOPE, text));
  });
}

nnp_status profiler_pop_scope() {
  return guard([&] {
    std::vector<profiler::Token>& scopes = pushed_scopes();
    if (scopes.empty()) return;
    if (scopes.back().index >= 0) profiler::end(scopes.back());
    scopes.pop_back();
  });
}

void profile_release(nnp_profile* profile) { delete profile; }

int64_t profile_event_count(const nnp_profile* profile) {
  return profile ? static_cast<int64_t>(profile->events.size()) : 0;
}

nnp_status profile_event(const nnp_profile* profile, int64_t i, nnp_profile_event* out) {
  return guard([&] {
    const char* op = "profile_event";
    const nnp_profile& p = profile_arg(profile, op);
    nnp_profile_event& result = out_arg(out, op);
    if (result.struct_size < NNP_PROFILE_EVENT_SIZE_1_6)
      fail(NNP_INVALID_ARGUMENT, op, ": out->struct_size ", result.struct_size,
           " is too small (set it to sizeof(nnp_profile_event))");
    if (i < 0 || i >= static_cast<int64_t>(p.events.size()))
      fail(NNP_INVALID_ARGUMENT, op, ": index ", i, " is out of range for ", p.events.size(), " events");
    const profiler::Event& e = p.events[static_cast<size_t>(i)];
    result.name = e.name.c_str();
    result.kind = e.kind;
    result.thread = e.thread;
    result.start_ns = e.start_ns;
    result.duration_ns = e.end_ns < 0 ? -1 : e.end_ns - e.start_ns;
    result.parent = e.parent;
    result.shapes = e.shapes.c_str();
    result.dtypes = e.dtypes.c_str();
    result.device = e.device.c_str();
    result.bytes_allocated = e.bytes_allocated;
    result.bytes_freed = e.bytes_freed;
    result.device_us = e.device_us;
  });
}

nnp_status profile_save_chrome_trace(const nnp_profile* profile, const char* path) {
  return guard([&] {
    const char* op = "profile_save_chrome_trace";
    profiler::save_chrome_trace(profile_arg(profile, op).events, path_arg(path, op));
  });
}

nnp_status profile_summary(const nnp_profile* profile, const char* sort_by, int32_t row_limit, char* buf, size_t size,
                           size_t* needed) {
  return guard([&] {
    const nnp_profile& p = profile_arg(profile, "profile_summary");
    detail::write_string(profiler::summary_table(p.events, sort_by ? sort_by : "", row_limit), buf, size, needed);
  });
}

}  // namespace nnp::core::api
