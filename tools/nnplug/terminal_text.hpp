// Text from strangers (plugin names and descriptions, data file contents)
// made safe to print: every byte outside printable ASCII is written as \xNN,
// so no control byte reaches the terminal and no line can be forged.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nnplug {

// At most `max` input bytes are shown; "..." marks a cut.
inline std::string printable(std::string_view text, size_t max = 200) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace nnplug
