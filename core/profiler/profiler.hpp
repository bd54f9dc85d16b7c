// The profiler's recording side (PyTorch's torch.profiler): while a session
// is active, ops, module calls, autograd nodes and record_function scopes
// each leave one event per call (name, host start and end, thread, nesting,
// input shapes, bytes allocated and freed, device time where the backend
// has timing events). Off, every probe is one relaxed atomic load.
#pragma once

#include <nnp/nnp.h>

#include <atomic>
#include <initializer_list>
#include <string>
#include <vector>

#include "../backend_record.hpp"
#include "../tensor.hpp"

namespace nnp::core::profiler {

struct Event {
  std::string name;
  nnp_profile_event_kind kind = NNP_PROFILE_OP;
  int32_t thread = 0;                            // small number per thread, in order of first event
  int64_t start_ns = 0;                          // since the session started
  int64_t end_ns = -1;                           // -1: still open when the session stopped
  int64_t parent = -1;                           // the enclosing event (an index into the same profile), or -1
  std::string shapes;                            // op inputs, "[[2,3],[3]]"
  std::string dtypes;                            // "f32, f32"
  std::string device;                            // "cpu:0"
  int64_t bytes_allocated = 0, bytes_freed = 0;  // by this event itself (not its children)
  double device_us = -1;                         // measured with the backend's timing events; -1: none
  // The backend's timing events until the session stops.
  const BackendRecord* timed_backend = nullptr;
  int32_t timed_device = 0;
  void* device_start = nullptr;
  void* device_end = nullptr;
};

struct Options {
  bool record_shapes = true;
  bool profile_memory = true;
  bool device_time = true;
};

extern std::atomic<bool> g_active;
// Off is the case op paths are laid out for.
inline bool active() { return __builtin_expect(g_active.load(std::memory_order_relaxed), 0); }

// Throws when a session is active already.
void start(const Options& options);
// Ends the session: every thread's events, each thread's in start order,
// parents before children; device times read (waiting for the devices).
std::vector<Event> stop();

// Opens an event on the calling thread; the token closes it.
struct Token {
  uint64_t session = 0;
  int64_t index = -1;
};
Token begin(nnp_profile_event_kind kind, std::string name);
void end(const Token& token);
// An op's inputs (null entries skipped): shapes, dtypes and device.
void describe_inputs(const Token& token, const Tensor* const* inputs, int32_t count);
// The device an event ran for ("halfway:0"), where it has no input tensors.
void describe_device(const Token& token, std::string device);
void note_alloc(size_t bytes);
void note_free(size_t bytes);

// A scope recorded while the profiler is on (a module call, an autograd
// node; op events are the dispatcher's).
class Scope {
 public:
  Scope(nnp_profile_event_kind kind, const char* name) {
    if (active()) token_ = begin(kind, name);
  }
  template <typename MakeName>
  Scope(nnp_profile_event_kind kind, MakeName make_name, int) {  // the name is built only when recording
    if (active()) token_ = begin(kind, make_name());
  }
  ~Scope() {
    if (token_.index >= 0) end(token_);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 protected:
  Token token_;
};

// One copy between a device and the host made for another backend (a
// kernel's fallback, a boundary of a compiled graph): an NNP_PROFILE_COPY
// event for `device` ("acme:0"), its name built only when recording.
class CopyScope : public Scope {
 public:
  template <typename MakeName>
  CopyScope(MakeName make_name, const std::string& device) : Scope(NNP_PROFILE_COPY, make_name, 0) {
    if (token_.index >= 0) describe_device(token_, device);
  }
};

}  // namespace nnp::core::profiler
