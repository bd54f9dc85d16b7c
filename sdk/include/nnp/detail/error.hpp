// nnp/detail/error.hpp - the one exception type of nnplug's C++ side: thrown
// by the header-only API when a call fails, and by the core internally, so a
// status survives every layer it crosses unchanged.
#pragma once

#include <nnp/nnp.h>

#include <stdexcept>
#include <string>

namespace nnp {

class Error : public std::runtime_error {
 public:
  Error(nnp_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  nnp_status status() const { return status_; }

 private:
  nnp_status status_;
};

}  // namespace nnp
