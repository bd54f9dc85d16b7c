// nnp/profiler.hpp - PyTorch's torch.profiler for nnplug (ABI 1.6): while a
// Profiler runs, every core op (forward and backward), module call,
// autograd node and record_function scope leaves an event with its thread,
// nesting, host time, input shapes, bytes allocated and freed, and device
// time where the backend has timing events (cpu, cuda, rocm).
//
//   nnp::profiler::Profiler profiler;            // starts recording
//   {
//     nnp::profiler::RecordFunction step("train_step");
//     loss = model(x) ...; loss.backward();
//   }
//   nnp::profiler::Profile profile = profiler.stop();
//   profile.export_chrome_trace("trace.json");   // Perfetto, chrome://tracing
//   std::cout << profile.table("cpu_time_total", 10);  // key_averages().table()
//
// Off, each probe costs one relaxed atomic load. A plugin's own kernels
// mark themselves with RecordFunction (or the C entries
// profiler_push_scope / profiler_pop_scope).
#pragma once

#include <nnp/tensor.hpp>
#include <string>
#include <vector>

namespace nnp::profiler {

enum class EventKind {
  Op = NNP_PROFILE_OP,
  Module = NNP_PROFILE_MODULE,
  Scope = NNP_PROFILE_SCOPE,
  Backward = NNP_PROFILE_BACKWARD,
  Copy = NNP_PROFILE_COPY  // (ABI 1.24) bytes moved to or from a device for another backend's kernel
};

struct Event {
  std::string name;
  EventKind kind = EventKind::Op;
  int32_t thread = 0;
  int64_t start_ns = 0, duration_ns = -1;  // -1: still open at stop
  int64_t parent = -1;                     // index of the enclosing event, or -1
  std::string shapes, dtypes, device;
  int64_t bytes_allocated = 0, bytes_freed = 0;
  double device_us = -1;  // -1: not measured
};

struct ProfilerOptions {
  bool record_shapes = true;
  bool profile_memory = true;
  bool device_time = true;
};

namespace detail {
struct ProfileTraits {
  static void release(nnp_profile* p) { api().profile_release(p); }
};
}  // namespace detail

// The events of one stopped session.
class Profile : public nnp::detail::Handle<nnp_profile, detail::ProfileTraits> {
 public:
  Profile() = default;
  static Profile adopt(nnp_profile* p) { return Profile(p); }
  int64_t size() const { return api().profile_event_count(get()); }
  Event event(int64_t i) const {
    nnp_profile_event raw{};
    raw.struct_size = sizeof(raw);
    check(api().profile_event(get(), i, &raw));
    Event e;
    e.name = raw.name;
    e.kind = static_cast<EventKind>(raw.kind);
    e.thread = raw.thread;
    e.start_ns = raw.start_ns;
    e.duration_ns = raw.duration_ns;
    e.parent = raw.parent;
    e.shapes = raw.shapes;
    e.dtypes = raw.dtypes;
    e.device = raw.device;
    e.bytes_allocated = raw.bytes_allocated;
    e.bytes_freed = raw.bytes_freed;
    e.device_us = raw.device_us;
    return e;
  }
  std::vector<Event> events() const {
    std::vector<Event> out;
    for (int64_t i = 0; i < size(); ++i) out.push_back(event(i));
    return out;
  }
  // Chrome Trace Event JSON, written atomically.
  void export_chrome_trace(const std::string& path) const {
    check(api().profile_save_chrome_trace(get(), path.c_str()));
  }
  // key_averages().table(sort_by, row_limit): self_cpu_time_total,
  // cpu_time_total, device_time_total, self_cpu_memory_usage or count.
  std::string table(const std::string& sort_by = "self_cpu_time_total", int32_t row_limit = -1) const {
    size_t needed = 0;
    check(api().profile_summary(get(), sort_by.c_str(), row_limit, nullptr, 0, &needed));
    std::string text(needed, '\0');
    check(api().profile_summary(get(), sort_by.c_str(), row_limit, text.data(), text.size() + 1, &needed));
    return text;
  }

 private:
  explicit Profile(nnp_profile* p) : Handle(p) {}
};

// Records from construction to stop() (or destruction, which discards).
class Profiler {
 public:
  explicit Profiler(const ProfilerOptions& options = {}) {
    nnp_profiler_options raw{};
    raw.struct_size = sizeof(raw);
    raw.record_shapes = options.record_shapes;
    raw.profile_memory = options.profile_memory;
    raw.device_time = options.device_time;
    check(api().profiler_start(&raw));
    running_ = true;
  }
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;
  ~Profiler() {
    if (running_) {
      nnp_profile* discarded = nullptr;
      if (api().profiler_stop(&discarded) == NNP_OK) api().profile_release(discarded);
    }
  }
  Profile stop() {
    nnp_profile* raw = nullptr;
    check(api().profiler_stop(&raw));
    running_ = false;
    return Profile::adopt(raw);
  }
  static bool is_active() { return api().profiler_is_active() != 0; }

 private:
  bool running_ = false;
};

// torch.profiler.record_function: a named scope, nested in what is open on
// this thread. Costs nothing measurable while no Profiler runs.
class RecordFunction {
 public:
  explicit RecordFunction(const std::string& name) {
    if (api().profiler_is_active()) pushed_ = api().profiler_push_scope(name.c_str()) == NNP_OK;
  }
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;
  ~RecordFunction() {
    if (pushed_) api().profiler_pop_scope();
  }

 private:
  bool pushed_ = false;
};

}  // namespace nnp::profiler
