// Autocast (PyTorch's torch.autocast, DESIGN §12): per thread and per device
// type, a stack of scopes that say whether ops run in a lower precision and
// which. The dispatcher's autocast layer (dispatch/dispatcher.hpp) asks
// policy_of() for each public op and casts its floating inputs with
// cast_inputs(); functionals composed outside the core (losses, linear,
// convolutions in nnp.hpp) ask the same through the API's autocast_args.
//
// A tensor's device type is its backend's name ("cpu", "cuda", "reference",
// a plugin's), except that rocm tensors follow "cuda", as PyTorch's ROCm
// builds do.
#pragma once

#include <nnp/nnp.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../dispatch/op_table.hpp"
#include "../tensor.hpp"

namespace nnp::core::autocast {

// PyTorch's CastPolicy, less the variants that only add a dtype argument.
enum class Policy : int32_t {
  NONE,                // runs on its inputs as they are
  LOWER_PRECISION_FP,  // floating inputs (f64 excepted) cast to the scope's dtype
  FP32,                // floating inputs (f64 excepted) cast to f32
  PROMOTE,             // floating inputs cast to the widest floating dtype among them
  BANNED,              // refused under autocast (CUDA's binary_cross_entropy)
};

struct DeviceState {
  bool enabled = false;
  nnp_dtype dtype = NNP_BF16;
  bool cache_enabled = true;
};

// True when some scope on this thread enables autocast and no autocast op
// is computing (its own inner calls are not cast again, as PyTorch's
// ExcludeDispatchKeyGuard): one thread-local load, the dispatcher's test.
bool active();

// Opens a scope for device_type; dtype must be f16 or bf16. Leaving the
// outermost enabled scope of the thread clears the cast cache.
void enter(std::string_view device_type, nnp_dtype dtype, bool enabled, bool cache_enabled);
void exit(std::string_view device_type);
// The state ops on device_type see now; outside every scope, disabled with
// the device type's preferred dtype (its backend's, else bf16 on host
// backends and f16 on others).
DeviceState state(std::string_view device_type);

// The policy of a dispatched op, or of a composite named as PyTorch names it
// ("cross_entropy_loss", "linear"), for device_type; NONE for ops in no list.
Policy policy_of(dispatch::OpId op, std::string_view device_type);
// NNP_NOT_FOUND unless name is an op of the lists or a policy's name
// ("lower_precision_fp", "fp32", "promote", "none").
Policy policy_named(std::string_view name, std::string_view device_type);

std::string_view device_type_of(const Tensor& t);

// Casts in[i] as policy says for the enabled state of their device type
// (public to ops, so the casts record history and show in profiles); out[i]
// is left empty where in[i] stays as it is. Returns whether anything was cast.
// op names the op in a BANNED policy's refusal.
bool cast_inputs(Policy policy, const char* op, const Tensor* const* in, int32_t count, TensorRef* out);

// The state of every device type a scope on this thread has set: what an
// activation checkpoint's recomputation runs under, as its forward did.
using Snapshot = std::vector<std::pair<std::string, DeviceState>>;
Snapshot snapshot();
// Opens a scope for each entry of a snapshot; closes them when it goes.
class Restore {
 public:
  explicit Restore(const Snapshot& states);
  ~Restore();
  Restore(const Restore&) = delete;
  Restore& operator=(const Restore&) = delete;

 private:
  const Snapshot& states_;
};

// Suspends autocast on this thread while an autocast op computes.
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;
};

}  // namespace nnp::core::autocast
