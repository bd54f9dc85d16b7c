// The reference kernel table and the API table it reports errors through.
#pragma once

#include <nnp/plugin.h>

namespace nnp::reference {

extern const nnp_api* g_api;
const nnp_kernels* kernel_table();

}  // namespace nnp::reference
