// nnp/detail/printable.hpp - text from strangers (a data file's fields, a
// plugin's name) made safe to print: every byte outside printable ASCII is
// written as \xNN, so no control byte reaches a terminal and no line of a
// message can be forged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nnp::detail {

// At most `max` input bytes are shown; "..." marks a cut. keep_newlines: a
// message of several lines of one's own keeps them.
inline std::string printable(std::string_view text, size_t max = 200, bool keep_newlines = false) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c >= 0x20 && c < 0x7f) || (keep_newlines && c == '\n')) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace nnp::detail
