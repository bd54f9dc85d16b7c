// The one nnp_api table the core hands to applications and plugins.
#pragma once

#include <nnp/nnp.h>

namespace nnp::core {

const nnp_api* api_table();

}  // namespace nnp::core
