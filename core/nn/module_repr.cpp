// Printing a module in PyTorch's tree format:
//   Net(
//     (l0): MyLinear(in_features=4, out_features=3)
//     (l1): MyLinear(in_features=3, out_features=1)
//   )
#include <nnp/detail/printable.hpp>
#include <nnp/detail/strings.hpp>
#include <sstream>

#include "../dtype.hpp"
#include "../error.hpp"
#include "module.hpp"

namespace nnp::core::nn {
namespace {

// Indents every line after the first by two spaces (PyTorch's _addindent).
std::string indent(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

std::string extra_repr(const Module& m) {
  if (m.container == NNP_PARAMETER_LIST || m.container == NNP_PARAMETER_DICT) {
    std::ostringstream lines;
    bool first = true;
    for (const auto& [name, t] : m.parameters) {
      if (!first) lines << "\n";
      first = false;
      lines << "(" << detail::printable(name, 1 << 16) << "): Parameter containing: [" << dtype_name(t->dtype) << " of size ";
      for (int32_t i = 0; i < t->shape.ndim; ++i) lines << (i ? "x" : "") << t->shape.d[i];
      lines << "]";
    }
    return lines.str();
  }
  if (!m.vtable.extra_repr || m.self_detached) return "";
  return detail::query_string(
      [&](char* buf, size_t size, size_t* needed) { return m.vtable.extra_repr(m.self, buf, size, needed); },
      [&](nnp_status status) { check_plugin_status(status, m.type_name.c_str(), "extra_repr"); });
}

}  // namespace

std::string repr(const Module& m) {
  std::vector<std::string> lines;
  std::string extra = extra_repr(m);
  if (!extra.empty()) {
    std::istringstream split(extra);
    // A plugin's text, kept to its lines: any other byte outside printable
    // ASCII is escaped, as are the names a model file gave.
    for (std::string line; std::getline(split, line);) lines.push_back(detail::printable(line, 1 << 16));
  }
  for (const auto& [name, child] : m.children)
    lines.push_back("(" + detail::printable(name, 1 << 16) + "): " + (child ? indent(repr(*child)) : std::string("None")));
  std::string out = detail::printable(m.type_name, 1 << 16) + "(";
  if (!lines.empty()) {
    if (lines.size() == 1 && m.children.empty()) {
      out += lines[0];
    } else {
      for (const std::string& line : lines) out += "\n  " + line;
      out += "\n";
    }
  }
  return out + ")";
}

}  // namespace nnp::core::nn
