#include "captured_step.hpp"

#include <algorithm>
#include <atomic>
#include <sstream>
#include <thread>

#include "../autograd/grad_mode.hpp"
#include "../device.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../ops.hpp"
#include "../profiler/profiler.hpp"
#include "tape_passes.hpp"

namespace nnp::core::capture {
namespace {

// Runs with other kernel calls than the run before, in a row, before the
// step is left to run as written (the first runs differ by creating
// gradients and optimizer state; a later difference is a host-side value).
constexpr int32_t kMaxCapturesInARow = 4;
// Replays stopped by a value read on the host that changed, before the step
// is left to run as written.
constexpr int32_t kMaxReadChanges = 3;

std::atomic<uint64_t> g_host_state_epoch{0};

// Addresses as the memory they lie in: an input, a block made during the
// capture (by its order), or the address itself (memory made before).
class MemoryMap final : public Describer {
 public:
  void add(const void* begin, size_t bytes, char kind, size_t index) {
    if (bytes == 0 || begin == nullptr) return;
    const char* b = static_cast<const char*>(begin);
    regions_.push_back({b, b + bytes, kind, index});
  }
  void seal() {
    std::sort(regions_.begin(), regions_.end(), [](const Region& x, const Region& y) { return x.begin < y.begin; });
  }
  void address(const void* p) override {
    const Region* r = find(p);
    if (r == nullptr) {
      const char kind = 'X';
      bytes(&kind, 1);
      bytes(&p, sizeof p);
      return;
    }
    const int64_t offset = static_cast<const char*>(p) - r->begin;
    bytes(&r->kind, 1);
    bytes(&r->index, sizeof r->index);
    bytes(&offset, sizeof offset);
  }
  // The input a view's data lies in (SIZE_MAX if none) and where.
  size_t input_of(const void* p, int64_t& offset) const {
    const Region* r = find(p);
    if (r == nullptr || r->kind != 'I') return SIZE_MAX;
    offset = static_cast<const char*>(p) - r->begin;
    return r->index;
  }

 private:
  struct Region {
    const char* begin;
    const char* end;
    char kind;
    size_t index;
  };
  const Region* find(const void* p) const {
    const char* c = static_cast<const char*>(p);
    auto it = std::upper_bound(regions_.begin(), regions_.end(), c,
                               [](const char* x, const Region& r) { return x < r.begin; });
    if (it == regions_.begin()) return nullptr;
    --it;
    return c < it->end ? &*it : nullptr;
  }
  std::vector<Region> regions_;
};

size_t tensor_bytes(const Tensor& t) { return static_cast<size_t>(t.numel) * dtype_size(t.dtype); }

std::string describe_inputs(const std::vector<TensorRef>& inputs) {
  std::string text;
  for (const TensorRef& t : inputs)
    text +=
        (text.empty() ? "" : ", ") + format_dims(t->shape) + " " + dtype_name(t->dtype) + " " + device_name(t->device);
  return text.empty() ? "none" : text;
}

// Results the caller owns: new tensors, no history (the step's own are
// written again by the next replay).
std::vector<TensorRef> detached_copies(const std::vector<TensorRef>& outputs) {
  autograd::NoGradGuard no_grad;
  std::vector<TensorRef> copies;
  copies.reserve(outputs.size());
  for (const TensorRef& t : outputs) copies.push_back(clone(*t));
  return copies;
}

}  // namespace

void note_host_state_change() {
  if (recording_tape() == nullptr) g_host_state_epoch.fetch_add(1, std::memory_order_relaxed);
}

void note_replaced(const Storage* replaced) {
  if (replaced && replaced->taped.load(std::memory_order_relaxed) > 0) note_host_state_change();
}

struct CapturedStep::Capture {
  Tape tape;
  std::vector<TensorRef> inputs;   // what the step ran on (contiguous)
  std::vector<TensorRef> outputs;  // its own results, which replays write again
  std::vector<std::string> calls;  // each recorded call as MemoryMap writes it
  struct Binding {
    nnp_view* view;
    size_t input;
    int64_t offset;  // bytes into the input
  };
  std::vector<Binding> bindings;  // the recorded views of the inputs' memory
  uint64_t epoch = 0;

  void describe() {
    MemoryMap map = memory_map(true);
    for (const auto& call : tape.calls) {
      map.text.clear();
      call->describe(map);
      calls.push_back(map.text);
    }
  }
  // Which recorded views read the inputs' memory (after the passes).
  void rebind() {
    const MemoryMap map = memory_map(false);
    bindings.clear();
    std::vector<nnp_view*> views;
    for (const auto& call : tape.calls) {
      views.clear();
      call->views(views);
      for (nnp_view* v : views) {
        int64_t offset = 0;
        const size_t input = map.input_of(v->data, offset);
        if (input != SIZE_MAX) bindings.push_back({v, input, offset});
      }
    }
  }
  MemoryMap memory_map(bool with_blocks) const {
    MemoryMap map;
    for (size_t i = 0; i < inputs.size(); ++i) map.add(inputs[i]->data(), tensor_bytes(*inputs[i]), 'I', i);
    if (with_blocks)
      for (size_t i = 0; i < tape.allocated.size(); ++i)
        map.add(tape.allocated[i]->data, tape.allocated[i]->bytes, 'A', i);
    map.seal();
    return map;
  }
};

CapturedStep::CapturedStep(StepFunction fn) : fn_(std::move(fn)) {}
CapturedStep::~CapturedStep() = default;

std::vector<TensorRef> CapturedStep::call(const std::vector<TensorRef>& inputs) {
  // A step inside another's recording would replay its own tape there,
  // unseen by the outer one.
  if (recording_tape()) refuse("a captured step runs inside the step (compile the outer step alone)");
  if (running_on_.load(std::memory_order_relaxed) == std::this_thread::get_id())
    fail(NNP_INVALID_ARGUMENT, "captured step: the step function calls its own step (it would wait for itself)");
  std::lock_guard<std::mutex> lock(mutex_);
  running_on_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  struct Done {
    std::atomic<std::thread::id>& on;
    ~Done() { on.store(std::thread::id(), std::memory_order_relaxed); }
  } done{running_on_};
  ++calls_;
  if (state_ == State::REPLAYING) {
    std::string why;
    if (g_host_state_epoch.load(std::memory_order_relaxed) != epoch_)
      forget(
          "host-side state changed since the capture (an optimizer's options, a parameter or gradient "
          "replaced): captured again");
    else if (!fits(inputs, why))
      forget(why + ": captured again");
    else
      return replay(inputs);
  }
  if (state_ == State::EAGER) return run_eagerly(inputs);
  return capture(inputs);
}

std::vector<TensorRef> CapturedStep::run_eagerly(const std::vector<TensorRef>& inputs) {
  return detached_copies(fn_(inputs));
}

bool CapturedStep::fits(const std::vector<TensorRef>& inputs, std::string& why) const {
  const std::vector<TensorRef>& captured = last_->inputs;
  if (inputs.size() != captured.size()) {
    why = "the step was captured with " + std::to_string(captured.size()) + " inputs, called with " +
          std::to_string(inputs.size());
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& a = *inputs[i];
    const Tensor& b = *captured[i];
    if (a.dtype != b.dtype || !same_device(a.device, b.device) || !(a.shape == b.shape)) {
      why = "input " + std::to_string(i) + " is " + describe_inputs({inputs[i]}) + ", captured as " +
            describe_inputs({captured[i]});
      return false;
    }
  }
  return true;
}

void CapturedStep::forget(const std::string& why) {
  reason_ = why;
  last_.reset();
  captures_in_a_row_ = 0;
  state_ = State::CAPTURING;
}

std::vector<TensorRef> CapturedStep::capture(const std::vector<TensorRef>& inputs) {
  auto cap = std::make_unique<Capture>();
  for (const TensorRef& t : inputs) {
    if (!t) fail(NNP_INVALID_ARGUMENT, "captured step: an input is NULL");
    cap->inputs.push_back(t->is_contiguous() ? t : contiguous(*t));
  }
  cap->epoch = g_host_state_epoch.load(std::memory_order_relaxed);
  {
    Recording recording(cap->tape);
    cap->outputs = fn_(cap->inputs);
  }
  ++captured_calls_;
  std::vector<TensorRef> results = detached_copies(cap->outputs);
  if (!cap->tape.refused.empty()) {
    state_ = State::EAGER;
    reason_ = cap->tape.refused;
    last_.reset();
    return results;
  }
  cap->describe();
  if (last_ && last_->calls == cap->calls) {
    state_ = State::REPLAYING;
    epoch_ = cap->epoch;
    captures_in_a_row_ = 0;
    last_ = std::move(cap);  // the run before released: what only the tape holds is private now
    removed_by_passes_ = optimize_tape(last_->tape);
    last_->rebind();
    return results;
  }
  if (last_ && ++captures_in_a_row_ + 1 >= kMaxCapturesInARow) {
    const auto& a = last_->calls;
    const auto& b = cap->calls;
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    std::ostringstream why;
    why << "its kernel calls differed from one run to the next over " << kMaxCapturesInARow << " runs (";
    if (i < a.size() && i < b.size() && std::string(cap->tape.calls[i]->name()) == "copy_to_host")
      why << "the last two differ at call " << i
          << ", a value the step reads on the host: its host-side path depends on its data";
    else if (i < a.size() && i < b.size())
      why << "the last two differ at call " << i << ", " << cap->tape.calls[i]->name()
          << ": a value computed on the host, such as an optimizer's step count or a learning rate "
             "that changes every step, is baked into it";
    else
      why << "the last two made " << a.size() << " and " << b.size() << " kernel calls";
    why << ")";
    state_ = State::EAGER;
    reason_ = why.str();
    last_.reset();
    return results;
  }
  last_ = std::move(cap);
  return results;
}

std::vector<TensorRef> CapturedStep::replay(const std::vector<TensorRef>& inputs) {
  Capture& cap = *last_;
  std::vector<TensorRef> contiguous_inputs;
  contiguous_inputs.reserve(inputs.size());
  for (const TensorRef& t : inputs) contiguous_inputs.push_back(t->is_contiguous() ? t : contiguous(*t));
  for (const Capture::Binding& b : cap.bindings)
    b.view->data = static_cast<char*>(contiguous_inputs[b.input]->data()) + b.offset;
  try {
    for (const auto& call : cap.tape.calls) {
      profiler::Scope event(NNP_PROFILE_OP, call->name());
      check_plugin_status(call->run(), "captured step", call->name());
    }
  } catch (const HostReadChanged& changed) {
    // The step would take another path on the host from here (a check that
    // fails, a branch): what ran so far wrote only the step's own
    // temporaries unless the step writes state before reading; it runs as
    // written now.
    const std::string why = "a value the step reads on the host (recorded call " + std::to_string(changed.call) +
                            ") differed from the capture's";
    if (++read_changes_ >= kMaxReadChanges) {
      state_ = State::EAGER;
      reason_ = why + " " + std::to_string(read_changes_) +
                " times: the step's host-side path depends on its data (an index range check, a branch)";
      last_.reset();
      return run_eagerly(inputs);
    }
    forget(why + ": captured again");
    return capture(inputs);
  }
  ++replayed_calls_;
  return detached_copies(cap.outputs);
}

std::string CapturedStep::explain() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  switch (state_) {
    case State::REPLAYING:
      out << "captured step: replays " << last_->tape.calls.size() << " recorded kernel calls (inputs "
          << describe_inputs(last_->inputs) << "; " << removed_by_passes_
          << " fewer than recorded: copies elided, products fused with their bias and ReLU, ReLU's backward with "
             "its bias gradient)";
      {
        size_t bytes = 0;
        for (const Storage* s : last_->tape.allocated) bytes += s->bytes;
        out << "\nmemory: " << (bytes + 1023) / 1024 << " KiB of blocks made while recording, kept for the replays";
      }
      break;
    case State::CAPTURING:
      out << "captured step: capturing (" << captures_in_a_row_ + (last_ ? 1 : 0)
          << " run(s) recorded since the last match; a step replays once two runs in a row make the same "
             "kernel calls)";
      break;
    case State::EAGER: out << "captured step: runs as written on every call, because " << reason_; break;
  }
  out << "\ncalls: " << calls_ << " (" << captured_calls_ << " recorded, " << replayed_calls_ << " replayed)";
  if (state_ != State::EAGER && !reason_.empty()) out << "\nlast change: " << reason_;
  out << "\n";
  return out.str();
}

}  // namespace nnp::core::capture
