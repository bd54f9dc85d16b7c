// nnp/detail/api.hpp - where the C++ API finds the nnp_api table, and the two
// directions errors cross it: check() turns a status into nnp::Error, guard()
// turns any exception back into a status (for callbacks the core calls).
//
// Applications link libnnp and get the table from nnp_get_api(). Plugins do
// not link libnnp: they define NNP_NO_GET_API before including any nnp header
// and call nnp::set_api() with the table their init receives.
#pragma once

#include <nnp/nnp.h>

#include <atomic>
#include <exception>
#include <new>
#include <nnp/detail/error.hpp>
#include <string>

namespace nnp {

namespace detail {
// Atomic: threads making their first calls at once may all look it up.
inline std::atomic<const nnp_api*>& api_slot() {
  static std::atomic<const nnp_api*> table{nullptr};
  return table;
}

#ifndef NNP_NO_GET_API
// Why nnp_get_api refused: the library's own versions and message, read
// through the base every ABI version keeps (nnp_api_base).
inline std::string api_refusal() {
  std::string message = "libnnp does not provide ABI " + std::to_string(NNP_ABI_MAJOR) + "." +
                        std::to_string(NNP_ABI_MINOR) + " that this program was built against";
  if (const nnp_api_base* base = nnp_get_api_base()) {
    message += " (it implements " + std::to_string(base->abi_major) + "." + std::to_string(base->abi_minor) + ")";
    if (base->last_error) message += std::string(": ") + base->last_error();
  }
  return message;
}
#endif
}  // namespace detail

// For plugins: the table handed to init.
inline void set_api(const nnp_api* table) { detail::api_slot().store(table, std::memory_order_release); }

inline const nnp_api& api() {
  const nnp_api* table = detail::api_slot().load(std::memory_order_acquire);
  if (table == nullptr) {
#ifdef NNP_NO_GET_API
    throw Error(NNP_INVALID_ARGUMENT, "nnp::api(): call nnp::set_api() with the table given to the plugin's init");
#else
    table = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
    if (table == nullptr) throw Error(NNP_ABI_MISMATCH, detail::api_refusal());
    detail::api_slot().store(table, std::memory_order_release);
#endif
  }
  return *table;
}

// A failed call's status and message as an exception.
inline void check(nnp_status status) {
  if (status != NNP_OK) throw Error(status, api().last_error());
}

namespace detail {

// Records a failure for the core to read, and returns its status. Never
// throws: with no table (a plugin that never called set_api) there is
// nowhere to record the message, and the status alone goes back.
inline nnp_status report(nnp_status status, const char* message) noexcept {
  const nnp_api* table = api_slot().load(std::memory_order_acquire);
#ifndef NNP_NO_GET_API
  if (table == nullptr) table = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
#endif
  if (table != nullptr) table->set_error(status, message);
  return status;
}

// Runs body, turning C++ exceptions into a status and a message for the C
// side: the shape of every callback the core calls (hooks, forward, create).
template <typename Body>
nnp_status guard(Body&& body) noexcept {
  try {
    body();
    return NNP_OK;
  } catch (const Error& e) {
    return report(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return report(NNP_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return report(NNP_INTERNAL, e.what());
  } catch (...) {
    return report(NNP_INTERNAL, "unknown C++ exception");
  }
}

}  // namespace detail
}  // namespace nnp
