// A tape: the kernel calls one run of a training step made, kept so that
// the step can be run again by calling them alone (nnp::compile_step).
//
// While a thread records (a Recording lives on it), every kernel the core
// calls there goes through the recorder the backend's table holds
// (kernel_recorder.cpp): the call is copied onto the tape - its views and
// parameter structs by value - and then made from the copy. Kernels called
// from inside a kernel (the fallbacks of a backend's missing slots) are part
// of the outer call. The tape also retains every storage made or viewed
// while it records, so that no memory a recorded call reads or writes is
// freed or given to another tensor while the tape lives, and it keeps the
// bytes the host wrote into device memory (constants made from host values)
// to write them again. What a recorded call cannot stand for - the host
// reading a tensor's value, a collective, packing weights - marks the tape
// refused, with the reason.
#pragma once

#include <nnp/plugin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nnp::core {
struct Storage;
class BackendRecord;
}  // namespace nnp::core

namespace nnp::core::capture {

// How a recorded call's arguments are written for comparing two tapes: its
// addresses through the tape's map of memory (which allocation of the
// capture, which input, or the address itself), everything else as bytes.
class Describer {
 public:
  virtual ~Describer() = default;
  virtual void address(const void* p) = 0;
  void bytes(const void* p, size_t n) { text.append(static_cast<const char*>(p), n); }
  void view(const nnp_view* v);  // absent views written as such
  std::string text;
};

class RecordedCall {
 public:
  virtual ~RecordedCall() = default;
  // The kernel again, with the arguments it was recorded with.
  virtual nnp_status run() const = 0;
  // The call as it was made while recording (run() may differ: a random
  // kernel draws anew at each replay).
  virtual nnp_status run_as_recorded() const { return run(); }
  virtual const char* name() const = 0;
  // The op of a unary, binary or reduce call (else its first number, or -1).
  virtual int32_t op() const { return -1; }
  // The kernel context it runs with (null for the host's copies).
  virtual const nnp_kernel_ctx* context() const { return nullptr; }
  // The value a fill call writes (false for any other call).
  virtual bool fills_with(double& value) const {
    (void)value;
    return false;
  }
  virtual void describe(Describer& d) const = 0;
  // The views among its arguments, so that an input's can be pointed at
  // another tensor.
  virtual void views(std::vector<nnp_view*>& out) = 0;
};

struct Tape {
  Tape() = default;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;
  ~Tape();  // releases what it retained

  std::vector<std::unique_ptr<RecordedCall>> calls;
  std::vector<Storage*> allocated;  // made while recording, in order (retained)
  std::vector<Storage*> viewed;     // every storage a kernel view was made of (retained)
  std::string refused;              // why the tape cannot stand for the step ("" : it can)
};

// Counts the threads recording: the recorders' and hooks' first test.
extern std::atomic<int32_t> g_recording_threads;
inline bool any_recording() { return g_recording_threads.load(std::memory_order_relaxed) > 0; }

// This thread's tape while it records (outside a kernel), or null.
Tape* recording_tape();

// Records on this thread while it lives.
class Recording {
 public:
  explicit Recording(Tape& tape);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

 private:
  Tape* outer_;
};

// While it lives, kernels called on this thread run without being recorded
// (those a recorded call makes itself).
class InsideKernel {
 public:
  InsideKernel();
  ~InsideKernel();
  InsideKernel(const InsideKernel&) = delete;
  InsideKernel& operator=(const InsideKernel&) = delete;

 private:
  bool outer_;
};

// The hooks (each a no-op unless this thread records): a storage made, a
// storage a kernel view is made of, bytes the host writes into a device's
// memory, and what a tape cannot replay.
void note_allocation(Storage* storage);
void note_view(Storage* storage);
void note_host_write(const BackendRecord& backend, int32_t device, void* dst, const void* src, size_t bytes);
// The host read a tensor's value (item(), a check): a replay reads it again
// and stops, throwing HostReadChanged, where it finds another value (the
// step would take another path on the host).
void note_host_read(const nnp_tensor& src, const void* value, size_t bytes);
struct HostReadChanged {
  size_t call;  // its place on the tape
};
void refuse(const std::string& why);
// Host-side state a tape may depend on changed (an optimizer's options, a
// parameter, buffer or gradient replaced): every captured step captures
// again on its next call. A no-op on a thread that records (the step's own).
void note_host_state_change();
// The same where `replaced` (a block about to be replaced in a tensor, or
// null) is one a tape reads or writes.
void note_replaced(const Storage* replaced);

// A gemm_epilogue call on ctx's backend (null where it has none), for the
// tape's passes (tape_passes.hpp) to put in place of a product and its
// bias and activation.
std::unique_ptr<RecordedCall> gemm_epilogue_call(const nnp_kernel_ctx* ctx, const nnp_view& a, const nnp_view& b,
                                                 const nnp_view& bias, int32_t activation, const nnp_view& out);

// A relu_backward call on ctx's backend (null where it has none): ReLU's
// backward, with the column sums of its result where column_sums is not
// null, in place of le, where and reduce.
std::unique_ptr<RecordedCall> relu_backward_call(const nnp_kernel_ctx* ctx, const nnp_view& result,
                                                 const nnp_view& grad, const nnp_view& grad_in,
                                                 const nnp_view* column_sums);

// Puts the recorder into every non-NULL slot of `kernels` (a backend
// record's table); the recorder calls the record's played_kernels().
void install_kernel_recorders(nnp_kernels& kernels);

}  // namespace nnp::core::capture
