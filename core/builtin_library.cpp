#include "builtin_library.hpp"

#include "../library/library.hpp"

namespace nnp::core {

const BuiltinLibrary& builtin_library() {
  static const BuiltinLibrary library = PluginRegistry::run_builtin_library(nnp::library::init);
  return library;
}

}  // namespace nnp::core
