// A layer attribute of two sizes, as the built-in layers take them: one
// value for both dimensions, or two; and a flag. What the passes read from a
// layer they run a kernel for.
#pragma once

#include <cstdint>

#include "../nn/attrs.hpp"

namespace nnp::core::graph {

// out = the attribute's two sizes, or `fallback`'s when it is absent or None
// (false when fallback is null); false for any other form.
inline bool two_sizes(const nnp_attrs& a, const char* name, const int64_t* fallback, int64_t out[2]) {
  auto it = a.values.find(name);
  if (it == a.values.end() || it->second.type == NNP_ATTR_NONE) {
    if (!fallback) return false;
    out[0] = fallback[0];
    out[1] = fallback[1];
    return true;
  }
  const nn::AttrValue& v = it->second;
  if (v.type == NNP_ATTR_INT) {
    out[0] = out[1] = v.i;
    return true;
  }
  if (v.type != NNP_ATTR_INTS || (v.ints.size() != 1 && v.ints.size() != 2)) return false;
  out[0] = v.ints.front();
  out[1] = v.ints.back();
  return true;
}

// Whether the attribute is a boolean true.
inline bool flag(const nnp_attrs& a, const char* name) {
  auto it = a.values.find(name);
  return it != a.values.end() && it->second.type == NNP_ATTR_BOOL && it->second.b;
}

}  // namespace nnp::core::graph
