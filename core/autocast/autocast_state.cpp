// The per-thread autocast scopes and the cast cache (PyTorch's
// autocast_mode.cpp: cached_cast, the nesting count that clears the cache).
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../autograd/functions.hpp"
#include "../autograd/record.hpp"
#include "../autograd/tensor_autograd.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../plugin_registry.hpp"
#include "autocast.hpp"

namespace nnp::core::autocast {
namespace {

// The dispatcher's test: device types enabled minus nothing while no
// autocast op computes. initial-exec: read on every public op.
thread_local int32_t enabled_devices __attribute__((tls_model("initial-exec"))) = 0;
thread_local int32_t suspended __attribute__((tls_model("initial-exec"))) = 0;

struct CacheKey {
  const Tensor* source;
  nnp_dtype dtype;
  bool operator==(const CacheKey& o) const { return source == o.source && dtype == o.dtype; }
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const { return std::hash<const void*>()(k.source) ^ size_t(k.dtype); }
};

struct ThreadScopes {
  struct Entry {
    std::string device_type;
    DeviceState state;
  };
  struct Scope {
    std::string device_type;
    DeviceState previous;
  };
  std::vector<Entry> devices;  // device types a scope has touched, with their state now
  std::vector<Scope> scopes;   // open scopes, innermost last
  // Casts of parameters (f32 leaves that require grad) to the lower dtype;
  // the source is held so its address names it until the cache is cleared.
  std::unordered_map<CacheKey, std::pair<TensorRef, TensorRef>, CacheKeyHash> cache;

  Entry* find(std::string_view device_type) {
    for (Entry& e : devices)
      if (e.device_type == device_type) return &e;
    return nullptr;
  }
  void count_enabled() {
    int32_t n = 0;
    for (const Entry& e : devices) n += e.state.enabled ? 1 : 0;
    enabled_devices = n;
  }
};

ThreadScopes& scopes() {
  thread_local ThreadScopes s;
  return s;
}

// The dtype autocast picks for a device type by default: the backend's own
// preference, else PyTorch's defaults (bf16 on the CPU, f16 on CUDA).
nnp_dtype preferred_dtype(std::string_view device_type) {
  if (const BackendRecord* backend = PluginRegistry::instance().find_backend(std::string(device_type)))
    return backend->autocast_dtype();
  return device_type == "cuda" ? NNP_F16 : NNP_BF16;
}

nnp_dtype widest(nnp_dtype a, nnp_dtype b) {
  if (a == b) return a;
  if (a == NNP_F64 || b == NNP_F64) return NNP_F64;
  return NNP_F32;  // f32 with a 16-bit type, or f16 with bf16
}

}  // namespace

bool active() { return enabled_devices > 0 && suspended == 0; }

void enter(std::string_view device_type, nnp_dtype dtype, bool enabled, bool cache_enabled) {
  if (device_type.empty())
    fail(NNP_INVALID_ARGUMENT, "autocast: the device type is empty; name one (\"cpu\", \"cuda\", a backend's name)");
  if (dtype != NNP_BF16 && dtype != NNP_F16)
    fail(NNP_INVALID_ARGUMENT, "autocast(", device_type, "): the dtype must be bf16 or f16, got ",
         dtype_name(dtype) ? dtype_name(dtype) : "an unknown dtype");
  ThreadScopes& s = scopes();
  ThreadScopes::Entry* e = s.find(device_type);
  if (!e) {
    s.devices.push_back({std::string(device_type), DeviceState{false, preferred_dtype(device_type), true}});
    e = &s.devices.back();
  }
  s.scopes.push_back({e->device_type, e->state});
  e->state = DeviceState{enabled, dtype, cache_enabled};
  s.count_enabled();
}

void exit(std::string_view device_type) {
  ThreadScopes& s = scopes();
  if (s.scopes.empty())
    fail(NNP_INVALID_ARGUMENT, "autocast: no scope is open on this thread to leave (device type ", device_type, ")");
  if (s.scopes.back().device_type != device_type)
    fail(NNP_INVALID_ARGUMENT, "autocast: the innermost scope is for ", s.scopes.back().device_type, ", not ",
         device_type, "; leave scopes in the reverse order of entering them");
  s.find(device_type)->state = s.scopes.back().previous;
  s.scopes.pop_back();
  s.count_enabled();
  if (s.scopes.empty()) s.cache.clear();  // the outermost scope closed, as PyTorch's nesting count
}

DeviceState state(std::string_view device_type) {
  if (const ThreadScopes::Entry* e = scopes().find(device_type)) return e->state;
  return DeviceState{false, preferred_dtype(device_type), true};
}

std::string_view device_type_of(const Tensor& t) {
  const std::string& name = t.backend().name();
  return name == "rocm" ? std::string_view("cuda") : std::string_view(name);
}

bool cast_inputs(Policy policy, const char* op, const Tensor* const* in, int32_t count, TensorRef* out) {
  if (policy == Policy::NONE) return false;
  const Tensor* first = nullptr;
  for (int32_t i = 0; i < count && !first; ++i)
    if (in[i] && is_floating(in[i]->dtype)) first = in[i];
  if (!first) return false;
  ThreadScopes& s = scopes();
  const std::string_view device_type = device_type_of(*first);
  const ThreadScopes::Entry* e = s.find(device_type);
  if (!e || !e->state.enabled) return false;
  const DeviceState& st = e->state;
  if (policy == Policy::BANNED)
    fail(NNP_INVALID_ARGUMENT, op, " is unsafe to autocast on ", device_type,
         " (PyTorch bans it too): use binary_cross_entropy_with_logits, which is safe, or leave the autocast "
         "scope around this call");
  auto eligible = [&](const Tensor* t) { return t && is_floating(t->dtype) && device_type_of(*t) == device_type; };

  nnp_dtype target = policy == Policy::FP32 ? NNP_F32 : st.dtype;
  if (policy == Policy::PROMOTE) {
    target = first->dtype;
    for (int32_t i = 0; i < count; ++i)
      if (eligible(in[i])) target = widest(target, in[i]->dtype);
  }
  bool any = false;
  for (int32_t i = 0; i < count; ++i) {
    const Tensor* t = in[i];
    if (!eligible(t) || t->dtype == target) continue;
    if (policy != Policy::PROMOTE && t->dtype == NNP_F64) continue;  // f64 is left alone, as PyTorch
    const bool cacheable = policy == Policy::LOWER_PRECISION_FP && st.cache_enabled && t->dtype == NNP_F32 &&
                           autograd::requires_grad(*t) && autograd::is_leaf(*t) && !t->is_view;
    if (cacheable) {
      auto hit = s.cache.find({t, target});
      if (hit != s.cache.end()) {
        out[i] = hit->second.second;
        any = true;
        continue;
      }
    }
    out[i] = autograd::to(*t, t->device, target);
    if (cacheable) s.cache.emplace(CacheKey{t, target}, std::make_pair(TensorRef::share(t), out[i]));
    any = true;
  }
  return any;
}

Snapshot snapshot() {
  Snapshot out;
  for (const ThreadScopes::Entry& e : scopes().devices) out.emplace_back(e.device_type, e.state);
  return out;
}

Restore::Restore(const Snapshot& states) : states_(states) {
  for (const auto& [type, st] : states_) enter(type, st.dtype, st.enabled, st.cache_enabled);
}
Restore::~Restore() {
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) exit(it->first);
}

Suspend::Suspend() { ++suspended; }
Suspend::~Suspend() { --suspended; }

}  // namespace nnp::core::autocast
