// Mixed precision: nnp::autocast, PyTorch 1.13's torch.autocast as a C++
// scope (ABI 1.27).
//
//   {
//     nnp::autocast amp("cpu");              // bf16 on the CPU, f16 on cuda
//     nnp::Tensor loss = loss_fn(model(x), y);  // GEMMs in bf16, the loss in f32
//   }
//   loss.backward();                         // gradients come back in each parameter's dtype
//
// Inside the scope, ops on tensors of its device type cast their floating
// inputs as PyTorch's lists say: products and convolutions to the scope's
// dtype; losses (and on cuda softmax, norms, exp, log, ...) to f32; ops
// that combine several tensors to the widest of them. Each parameter is cast
// once per outermost scope (cache_enabled). Scopes nest; autocast(type,
// dtype, false) turns autocast off inside another. The state is per thread.
#pragma once

#include <initializer_list>
#include <optional>
#include <nnp/tensor.hpp>
#include <string>

namespace nnp {

class autocast {
 public:
  // dtype: Dtype::bf16 or Dtype::f16; left out, the backend's preferred one
  // (bf16 on host backends, f16 on cuda).
  explicit autocast(std::string device_type, bool enabled = true, bool cache_enabled = true)
      : autocast(std::move(device_type), NNP_AUTOCAST_PREFERRED, enabled, cache_enabled) {}
  autocast(std::string device_type, Dtype dtype, bool enabled = true, bool cache_enabled = true)
      : autocast(std::move(device_type), static_cast<int32_t>(dtype), enabled, cache_enabled) {}
  ~autocast() { api().autocast_exit(device_type_.c_str()); }
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  autocast(std::string device_type, int32_t dtype, bool enabled, bool cache_enabled)
      : device_type_(std::move(device_type)) {
    check(api().autocast_enter(device_type_.c_str(), dtype, enabled, cache_enabled));
  }
  std::string device_type_;
};

// PyTorch's torch.is_autocast_enabled / get_autocast_dtype, per device type.
inline bool is_autocast_enabled(const std::string& device_type) {
  int32_t enabled = 0;
  check(api().autocast_state(device_type.c_str(), &enabled, nullptr, nullptr));
  return enabled != 0;
}
inline Dtype get_autocast_dtype(const std::string& device_type) {
  nnp_dtype dtype = NNP_BF16;
  check(api().autocast_state(device_type.c_str(), nullptr, &dtype, nullptr));
  return static_cast<Dtype>(dtype);
}

namespace detail {

// What a functional composed here does first: replaces its tensor
// arguments by what autocast gives `op` (a PyTorch op name of the lists, or
// a policy's name). Undefined tensors stay undefined.
inline void autocast_args(const char* op, std::initializer_list<Tensor*> args) {
  constexpr size_t kMax = 8;
  nnp_tensor* in[kMax] = {};
  nnp_tensor* out[kMax] = {};
  size_t n = 0;
  for (Tensor* t : args)
    if (n < kMax) in[n++] = t->get();
  check(api().autocast_args(op, in, static_cast<int32_t>(n), out));
  size_t i = 0;
  for (Tensor* t : args) {
    if (i >= n) break;
    if (out[i] != in[i]) {
      *t = Tensor::adopt(out[i]);
    } else if (out[i]) {
      api().tensor_release(out[i]);
    }
    ++i;
  }
}

// Autocast off for one composed op's own calls on x's device type (PyTorch
// runs a listed op's insides below autocast): an f32-list op composed of a
// product must not have the product cast back down.
class AutocastOffFor {
 public:
  explicit AutocastOffFor(const Tensor& x) {
    const std::string backend = x.device().backend();
    scope_.emplace(backend == "rocm" ? "cuda" : backend, false);
  }

 private:
  std::optional<nnp::autocast> scope_;
};

}  // namespace detail
}  // namespace nnp
