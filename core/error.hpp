// Failures inside the core are C++ exceptions carrying an nnp_status; the API
// table's trampolines turn them into a status plus a thread-local message.
#pragma once

#include <nnp/nnp.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace nnp::core {

class Error : public std::runtime_error {
 public:
  Error(nnp_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  nnp_status status() const { return status_; }

 private:
  nnp_status status_;
};

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

// Turns a kernel's or backend's failure status into an exception, keeping the
// message the plugin set (or naming the operation if it set none).
void check_plugin_status(nnp_status status, const char* backend, const char* what);

}  // namespace nnp::core
