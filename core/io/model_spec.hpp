// Model specs: a JSON description of a module tree naming layer types of the
// registry (built-in or from plugins) and their attributes.
#pragma once

#include <string>

#include "../nn/module_ref.hpp"

namespace nnp::core::io {

ModuleRef model_from_spec(const std::string& json_text, const std::string& origin);
ModuleRef model_from_spec_file(const std::string& path);

}  // namespace nnp::core::io
