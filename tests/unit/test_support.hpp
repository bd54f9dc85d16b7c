// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnp::test {

// Runs `body`, expecting an nnp::Error with `status` whose message contains
// every one of `fragments`.
template <typename Body>
void expect_error(Body&& body, nnp_status status, const std::vector<std::string>& fragments) {
  try {
    body();
    ADD_FAILURE() << "expected " << api().status_name(status) << ", but the call succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << api().status_name(e.status()) << ": " << e.what();
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

inline std::vector<float> floats(const Tensor& t) { return t.to(Dtype::f32).to_vector<float>(); }

}  // namespace nnp::test
