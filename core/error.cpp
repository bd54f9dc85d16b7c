#include "error.hpp"

#include <new>

namespace nnp::core {
namespace {

struct LastError {
  nnp_status status = NNP_OK;
  std::string message;
  uint64_t serial = 0;  // counts set_last_error calls on this thread
};

LastError& last_error() {
  thread_local LastError state;
  return state;
}

}  // namespace

const char* status_name(nnp_status status) {
  static const char* const names[] = {"NNP_OK",
                                      "NNP_INVALID_ARGUMENT",
                                      "NNP_SHAPE_MISMATCH",
                                      "NNP_DTYPE_MISMATCH",
                                      "NNP_DEVICE_MISMATCH",
                                      "NNP_OUT_OF_MEMORY",
                                      "NNP_DEVICE_ERROR",
                                      "NNP_NOT_FOUND",
                                      "NNP_UNIMPLEMENTED",
                                      "NNP_ABI_MISMATCH",
                                      "NNP_IO_ERROR",
                                      "NNP_CORRUPT_DATA",
                                      "NNP_INTERNAL",
                                      "NNP_TIMEOUT",
                                      "NNP_COMM_ERROR"};
  return status >= 0 && status <= NNP_COMM_ERROR ? names[status] : "NNP_UNKNOWN_STATUS";
}

void set_last_error(nnp_status status, const char* message) {
  LastError& state = last_error();
  state.status = status;
  state.message = message ? message : "";
  ++state.serial;
}

const char* last_error_message() { return last_error().message.c_str(); }

nnp_status last_error_status() { return last_error().status; }

nnp_status record_current_exception() {
  try {
    throw;
  } catch (const Error& e) {
    set_last_error(e.status(), e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    set_last_error(NNP_OUT_OF_MEMORY, "out of host memory");
    return NNP_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(NNP_INTERNAL, str_cat("internal error: ", e.what()).c_str());
    return NNP_INTERNAL;
  } catch (...) {
    set_last_error(NNP_INTERNAL, "internal error: unknown exception");
    return NNP_INTERNAL;
  }
}

uint64_t last_error_serial() { return last_error().serial; }

void check_plugin_status(nnp_status status, const char* who, const char* what, uint64_t since) {
  if (status == NNP_OK) return;
  // A plugin reports its message through api->set_error; keep it when it did
  // (during the call, when the caller says when the call began).
  const bool set_during_call = since == kUnknownSerial || last_error_serial() != since;
  std::string message = set_during_call && last_error_status() == status && *last_error_message()
                            ? std::string(last_error_message())
                            : str_cat(what, " of '", who, "' failed with ", status_name(status),
                                      " and no message (plugins report one through api->set_error; a C++ plugin "
                                      "needs nnp::init_plugin or nnp::set_api in its init for that)");
  set_last_error(NNP_OK, "");
  throw Error(status, message);
}

}  // namespace nnp::core
