// JSON from strangers (safetensors headers, model specs), parsed strictly and
// in time linear in the text: a key given twice in one object and nesting
// deeper than a bound are refused before any document is built. nlohmann
// keeps the last of two equal keys silently, and its callback parser is
// quadratic in the size of an object.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace nnp::core::io {

// refuse(what) must throw; what completes a sentence about the text: "names
// 'x' twice in one object", "nests deeper than 64 levels", "is not valid JSON
// (...)".
nlohmann::json parse_strict_json(const std::string& text, size_t max_depth,
                                 const std::function<void(const std::string& what)>& refuse);

}  // namespace nnp::core::io
