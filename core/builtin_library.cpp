#include "builtin_library.hpp"

#include "../library/library.hpp"

namespace nnp::core {

const BuiltinLibrary& builtin_library() {
  // Never destroyed, as the registries it fills: what it registered (the
  // user_data of its optimizers, for one) stays reachable until exit.
  static const BuiltinLibrary* library = new BuiltinLibrary(PluginRegistry::run_builtin_library(nnp::library::init));
  return *library;
}

}  // namespace nnp::core
