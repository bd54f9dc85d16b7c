// nnp/detail/format.hpp - numbers and booleans written as Python writes
// them, for reprs and messages that match PyTorch's, and shapes as
// nnplug's messages write them.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace nnp::nn {

// Python's repr of a float: the shortest text that reads back the same.
inline std::string format_float(double v) {
  for (int precision = 1; precision <= 17; ++precision) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", precision, v);
    if (std::strtod(text, nullptr) == v) {
      std::string s = text;
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      return s;
    }
  }
  return std::to_string(v);
}
inline const char* format_bool(bool v) { return v ? "True" : "False"; }

}  // namespace nnp::nn

namespace nnp::detail {

// "[2,3]", as nnplug's messages write shapes.
inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace nnp::detail
