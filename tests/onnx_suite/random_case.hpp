// The suite's cases whose outputs are random (bernoulli, dropout in training
// mode): their expected outputs are one draw of ONNX's reference, so a
// runtime's outputs are checked for what any draw must satisfy instead -
// the element type and shape, values that a draw can give, and a count of
// ones (or of dropped elements) within four standard deviations of its mean.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "case_tensor.hpp"

namespace nnp::suite {

inline bool is_random_case(const std::string& name) {
  return name.rfind("test_bernoulli", 0) == 0 || name.rfind("test_training_dropout", 0) == 0;
}

// "" when a count of `hits` out of Bernoulli trials with these success
// probabilities is plausible (within four standard deviations, and one).
inline std::string plausible_count(double hits, const std::vector<double>& p, const char* what) {
  double mean = 0, variance = 0;
  for (double q : p) {
    mean += q;
    variance += q * (1 - q);
  }
  if (std::fabs(hits - mean) > 4 * std::sqrt(variance) + 1)
    return std::string(what) + ": " + std::to_string(hits) + " where about " + std::to_string(mean) + " are expected";
  return "";
}

inline std::string check_random_output(const std::string& name, size_t index, const std::vector<HostTensor>& inputs,
                                       const HostTensor& expected, const HostTensor& got) {
  if (got.elem_type != expected.elem_type || got.dims != expected.dims)
    return compare(expected, got);  // says which of the two differs
  const size_t n = static_cast<size_t>(numel(got));
  if (name.rfind("test_bernoulli", 0) == 0) {
    std::vector<double> p(n);
    double ones = 0;
    for (size_t i = 0; i < n; ++i) {
      const double v = value_at(got, i);
      if (v != 0 && v != 1) return "element " + std::to_string(i) + " is " + std::to_string(v) + ", not 0 or 1";
      ones += v;
      p[i] = value_at(inputs.at(0), i);
    }
    return plausible_count(ones, p, "ones");
  }
  // Dropout in training mode: inputs x, ratio (0.5 when absent), training_mode.
  const HostTensor& x = inputs.at(0);
  const double ratio = inputs.size() > 1 && numel(inputs[1]) == 1 ? value_at(inputs[1], 0) : 0.5;
  const double scale = ratio < 1 ? 1 / (1 - ratio) : 0;
  std::vector<double> p(n, ratio);
  double dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = value_at(got, i), kept = value_at(x, i) * scale;
    if (index == 0) {
      const bool is_kept = std::fabs(v - kept) <= 1e-7 + 1e-3 * std::fabs(kept);
      if (v != 0 && !is_kept)
        return "element " + std::to_string(i) + " is " + std::to_string(v) + ", neither 0 nor x / (1 - ratio)";
      dropped += (v == 0 && kept != 0) ? 1 : 0;
    } else {
      dropped += v == 0 ? 1 : 0;  // the mask: false where dropped
    }
  }
  return plausible_count(dropped, p, index == 0 ? "dropped elements" : "false mask entries");
}

}  // namespace nnp::suite
