// nnp/detail/strings.hpp - both sides of nnp.h's size-queried strings
// (DESIGN §2.5): a call fills `needed` with the length including the NUL and
// copies the text when `buf` holds it.
#pragma once

#include <nnp/nnp.h>

#include <cstring>
#include <nnp/detail/error.hpp>
#include <string>

namespace nnp::detail {

// The writing side, for whoever answers such a call. A buffer too small is
// refused (NNP_INVALID_ARGUMENT) rather than truncated.
inline void write_string(const std::string& text, char* buf, size_t size, size_t* needed) {
  if (needed) *needed = text.size() + 1;
  if (buf == nullptr || size == 0) return;
  if (size < text.size() + 1)
    throw Error(NNP_INVALID_ARGUMENT, "buffer of " + std::to_string(size) + " bytes is too small; " +
                                          std::to_string(text.size() + 1) + " are needed");
  std::memcpy(buf, text.c_str(), text.size() + 1);
}

// The reading side: call(buf, size, &needed) returns a status; check turns a
// failure into an exception (nnp::check, or the core's own).
template <typename Call, typename Check>
std::string query_string(Call&& call, Check&& check) {
  size_t needed = 0;
  check(call(nullptr, 0, &needed));
  if (needed <= 1) return std::string();
  std::string text(needed, '\0');
  check(call(&text[0], text.size(), &needed));
  text.resize(needed - 1);
  return text;
}

}  // namespace nnp::detail
