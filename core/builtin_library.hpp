// The built-in library (library/: nnplug's layers and optimizer algorithms,
// written on the SDK alone), started once, the first time a registry that
// holds its registrations is made.
#pragma once

#include "plugin_registry.hpp"

namespace nnp::core {

// What the library registered; its init runs on the first call (thread-safe).
const BuiltinLibrary& builtin_library();

}  // namespace nnp::core
