#include "profiler.hpp"

#include <chrono>
#include <memory>
#include <mutex>

#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"

namespace nnp::core::profiler {

std::atomic<bool> g_active{false};

namespace {

using Clock = std::chrono::steady_clock;

// One thread's events of the current session, guarded by its own mutex
// (stop() reads it from another thread).
struct ThreadLog {
  std::mutex mutex;
  uint64_t session = 0;
  int32_t thread = -1;
  std::vector<Event> events;
  std::vector<int64_t> open;  // indices of the events open on this thread, innermost last
};

struct Session {
  std::mutex mutex;  // guards everything below
  uint64_t id = 0;   // 0: none has run
  Options options;
  Clock::time_point started;
  int32_t next_thread = 0;
  std::vector<std::shared_ptr<ThreadLog>> logs;  // every thread that recorded in this session
};

Session& session() {
  static Session* s = new Session();  // used from threads that may outlive static destruction
  return *s;
}
std::atomic<uint64_t> current_session{0};

// This thread's log, joined to the current session on first use.
ThreadLog* thread_log(uint64_t id) {
  thread_local std::shared_ptr<ThreadLog> log = std::make_shared<ThreadLog>();
  if (log->session != id) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.id != id) return nullptr;  // the session ended meanwhile
    std::lock_guard<std::mutex> own(log->mutex);
    log->session = id;
    log->thread = s.next_thread++;
    log->events.clear();
    log->open.clear();
    s.logs.push_back(log);
  }
  return log.get();
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - session().started).count();
}

std::string dims_text(const Tensor& t) { return format_dims(t.shape); }

}  // namespace

void start(const Options& options) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (g_active.load(std::memory_order_acquire))
    fail(NNP_INVALID_ARGUMENT, "profiler_start: the profiler is already running (stop it first)");
  s.id += 1;
  s.options = options;
  s.started = Clock::now();
  s.next_thread = 0;
  s.logs.clear();
  current_session.store(s.id, std::memory_order_release);
  g_active.store(true, std::memory_order_release);
}

std::vector<Event> stop() {
  Session& s = session();
  std::vector<std::shared_ptr<ThreadLog>> logs;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!g_active.load(std::memory_order_acquire))
      fail(NNP_INVALID_ARGUMENT, "profiler_stop: the profiler is not running (profiler_start first)");
    g_active.store(false, std::memory_order_release);
    current_session.store(0, std::memory_order_release);
    s.id += 1;  // events still closing on other threads find their session gone
    logs.swap(s.logs);
  }
  std::vector<Event> out;
  for (const auto& log : logs) {
    std::lock_guard<std::mutex> lock(log->mutex);
    const int64_t base = static_cast<int64_t>(out.size());
    for (Event& e : log->events) {
      if (e.parent >= 0) e.parent += base;
      out.push_back(std::move(e));
    }
    log->events.clear();
    log->open.clear();
  }
  for (Event& e : out) {
    if (!e.device_start) continue;
    const nnp_backend& table = e.timed_backend->table();
    double us = -1;
    if (e.device_end &&
        table.event_elapsed_us(table.state, e.timed_device, e.device_start, e.device_end, &us) == NNP_OK)
      e.device_us = us;
    table.event_release(table.state, e.timed_device, e.device_start);
    if (e.device_end) table.event_release(table.state, e.timed_device, e.device_end);
    e.device_start = e.device_end = nullptr;
  }
  return out;
}

Token begin(nnp_profile_event_kind kind, std::string name) {
  const uint64_t id = current_session.load(std::memory_order_acquire);
  if (id == 0) return {};
  ThreadLog* log = thread_log(id);
  if (!log) return {};
  std::lock_guard<std::mutex> lock(log->mutex);
  if (log->session != id) return {};
  Event e;
  e.name = std::move(name);
  e.kind = kind;
  e.thread = log->thread;
  e.parent = log->open.empty() ? -1 : log->open.back();
  e.start_ns = now_ns();
  const int64_t index = static_cast<int64_t>(log->events.size());
  log->events.push_back(std::move(e));
  log->open.push_back(index);
  return {id, index};
}

void end(const Token& token) {
  if (token.session != current_session.load(std::memory_order_acquire)) return;
  ThreadLog* log = thread_log(token.session);
  if (!log) return;
  std::lock_guard<std::mutex> lock(log->mutex);
  if (log->session != token.session || token.index >= static_cast<int64_t>(log->events.size())) return;
  Event& e = log->events[static_cast<size_t>(token.index)];
  if (e.device_start) {
    const nnp_backend& table = e.timed_backend->table();
    if (table.event_record(table.state, e.timed_device, &e.device_end) != NNP_OK) e.device_end = nullptr;
  }
  e.end_ns = now_ns();
  // Scopes close innermost first; one left open inside (an exception that
  // skipped a pop_scope) closes with it.
  while (!log->open.empty() && log->open.back() >= token.index) {
    Event& inner = log->events[static_cast<size_t>(log->open.back())];
    if (inner.end_ns < 0) inner.end_ns = e.end_ns;
    log->open.pop_back();
  }
}

void describe_inputs(const Token& token, const Tensor* const* inputs, int32_t count) {
  Session& s = session();
  const Options options = s.options;  // written only while no session is active
  ThreadLog* log = thread_log(token.session);
  if (!log) return;
  std::string shapes, dtypes, device;
  const Tensor* first = nullptr;
  for (int32_t i = 0; i < count; ++i) {
    const Tensor* t = inputs[i];
    if (!t) continue;
    if (!first) first = t;
    if (options.record_shapes) {
      shapes += (shapes.empty() ? "" : ",") + dims_text(*t);
      const char* name = dtype_name(t->dtype);
      dtypes += (dtypes.empty() ? "" : ", ") + std::string(name ? name : "?");
    }
  }
  if (first) device = device_name(first->device);
  std::lock_guard<std::mutex> lock(log->mutex);
  if (log->session != token.session || token.index >= static_cast<int64_t>(log->events.size())) return;
  Event& e = log->events[static_cast<size_t>(token.index)];
  if (options.record_shapes) e.shapes = "[" + shapes + "]";
  e.dtypes = std::move(dtypes);
  e.device = std::move(device);
  if (options.device_time && first && first->storage &&
      current_session.load(std::memory_order_acquire) == token.session) {
    const BackendRecord& backend = first->backend();
    const nnp_backend& table = backend.table();
    if (backend.has_timing_events() &&
        table.event_record(table.state, first->device.index, &e.device_start) == NNP_OK) {
      e.timed_backend = &backend;
      e.timed_device = first->device.index;
    } else {
      e.device_start = nullptr;
    }
  }
}

void describe_device(const Token& token, std::string device) {
  ThreadLog* log = thread_log(token.session);
  if (!log) return;
  std::lock_guard<std::mutex> lock(log->mutex);
  if (log->session != token.session || token.index >= static_cast<int64_t>(log->events.size())) return;
  log->events[static_cast<size_t>(token.index)].device = std::move(device);
}

namespace {
void note_memory(size_t bytes, bool allocated) {
  const uint64_t id = current_session.load(std::memory_order_acquire);
  if (id == 0 || !session().options.profile_memory) return;
  ThreadLog* log = thread_log(id);
  if (!log) return;
  std::lock_guard<std::mutex> lock(log->mutex);
  if (log->session != id || log->open.empty()) return;
  Event& e = log->events[static_cast<size_t>(log->open.back())];
  (allocated ? e.bytes_allocated : e.bytes_freed) += static_cast<int64_t>(bytes);
}
}  // namespace

void note_alloc(size_t bytes) { note_memory(bytes, true); }
void note_free(size_t bytes) { note_memory(bytes, false); }

}  // namespace nnp::core::profiler
