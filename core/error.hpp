// Failures inside the core are C++ exceptions carrying an nnp_status; the API
// table's trampolines turn them into a status plus a thread-local message.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>
#include <new>
#include <nnp/detail/error.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace nnp::core {

// The SDK's exception: core code written on the C++ API (optimizers, layers)
// and core code throwing directly raise the same type.
using Error = nnp::Error;

// "NNP_OK", "NNP_INVALID_ARGUMENT", ...; "NNP_UNKNOWN_STATUS" for others.
const char* status_name(nnp_status status);

// Concatenates anything streamable; used to build messages on error paths.
template <typename... Parts>
std::string str_cat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

template <typename... Parts>
[[noreturn]] void fail(nnp_status status, Parts&&... parts) {
  throw Error(status, str_cat(std::forward<Parts>(parts)...));
}

// Runs make, an allocation sized by outside input (a checkpoint's tensor, a
// data set's rows), so that running out of memory in it names what was being
// made and its size: describe() gives the thing ("load m.safetensors: tensor
// 'w' ([4096, 4096] f32, 67108864 bytes)"), asked for only on failure.
template <typename Describe, typename Make>
auto making(Describe&& describe, Make&& make) -> decltype(make()) {
  try {
    return make();
  } catch (const std::bad_alloc&) {
    fail(NNP_OUT_OF_MEMORY, describe(), ": out of host memory");
  } catch (const Error& e) {
    if (e.status() != NNP_OUT_OF_MEMORY) throw;
    fail(NNP_OUT_OF_MEMORY, describe(), ": ", e.what());
  }
}

// The calling thread's last failure.
void set_last_error(nnp_status status, const char* message);
const char* last_error_message();
nnp_status last_error_status();

// Records the exception in flight (call inside catch) and returns its status.
nnp_status record_current_exception();

// Runs body, turning any exception into a status. The shape of every API
// trampoline: `return guard([&] { ... });`
template <typename Body>
nnp_status guard(Body&& body) noexcept {
  try {
    body();
    return NNP_OK;
  } catch (...) {
    return record_current_exception();
  }
}

// Turns a failure status from code outside the core (a backend's kernel, a
// layer's create or forward, a hook) into an exception, keeping the message
// it set, or naming `who` (the backend, layer type or hook) and `what` if it
// set none.
// `since` (last_error_serial() taken just before the call) lets a stale
// message of an earlier failure with the same status be told from one the
// call set.
constexpr uint64_t kUnknownSerial = UINT64_MAX;
uint64_t last_error_serial();
void check_plugin_status(nnp_status status, const char* who, const char* what, uint64_t since = kUnknownSerial);

}  // namespace nnp::core
