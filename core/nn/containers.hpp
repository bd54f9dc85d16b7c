// The container modules: Sequential, ModuleList, ModuleDict, ParameterList,
// ParameterDict. Entries are registered like any module's children or
// parameters (names "0", "1", ... for the lists).
#pragma once

#include <nnp/nnp.h>

#include "module.hpp"

namespace nnp::core::nn {

ModuleRef create_container(nnp_container_kind kind);

}  // namespace nnp::core::nn
