// Text from strangers (plugin names and descriptions, data file contents)
// made safe to print: nnp::detail::printable, by the name the CLI uses.
#pragma once

#include <nnp/detail/printable.hpp>

namespace nnplug {

using nnp::detail::printable;

}  // namespace nnplug
