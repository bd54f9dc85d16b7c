// nnp_attrs: the typed attribute values a layer is created with.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nnp::core::nn {

struct AttrValue {
  nnp_attr_type type = NNP_ATTR_INT;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
};

const char* attr_type_name(nnp_attr_type type);
std::string format_attr(const AttrValue& value);  // as JSON text
// Parses a default written as JSON text for an attribute of `type`.
AttrValue parse_attr(const std::string& json_text, nnp_attr_type type, const std::string& what);

}  // namespace nnp::core::nn

struct nnp_attrs {
  std::map<std::string, nnp::core::nn::AttrValue> values;
};
