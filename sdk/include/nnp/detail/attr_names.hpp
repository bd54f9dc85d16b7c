// nnp/detail/attr_names.hpp - how messages and listings name attribute
// types ("int", "list of ints"), shared by the SDK's layer declarations and
// the core's attribute checks so both sides say the same.
#pragma once

#include <nnp/nnp.h>

namespace nnp::detail {

inline const char* attr_type_name(nnp_attr_type type) {
  switch (type) {
    case NNP_ATTR_INT: return "int";
    case NNP_ATTR_FLOAT: return "float";
    case NNP_ATTR_BOOL: return "bool";
    case NNP_ATTR_STRING: return "string";
    case NNP_ATTR_INTS: return "list of ints";
    case NNP_ATTR_INTS_OR_STRING: return "list of ints or string";
    case NNP_ATTR_FLOATS: return "list of floats";
    case NNP_ATTR_NONE: return "None";
    default: return "unknown type";
  }
}

}  // namespace nnp::detail
