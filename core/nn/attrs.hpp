// nnp_attrs: the typed attribute values a layer is created with.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>
#include <map>
#include <nnp/detail/attr_names.hpp>
#include <string>
#include <vector>

namespace nnp::core::nn {

using nnp::detail::attr_type_name;

struct AttrValue {
  nnp_attr_type type = NNP_ATTR_INT;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  // A FLOATS value, or an INTS one converted.
  std::vector<double> numbers() const {
    return type == NNP_ATTR_FLOATS ? floats : std::vector<double>(ints.begin(), ints.end());
  }
};

std::string format_attr(const AttrValue& value);  // as JSON text
// Parses a default written as JSON text for an attribute of `type`.
AttrValue parse_attr(const std::string& json_text, nnp_attr_type type, const std::string& what);

}  // namespace nnp::core::nn

struct nnp_attrs {
  std::map<std::string, nnp::core::nn::AttrValue> values;

  // Sets `name` (non-empty), replacing any value it had; op names the caller
  // in messages.
  void set(const char* name, nnp::core::nn::AttrValue value, const char* op);
  // The value of `name` as `type` (an int reads as a float too, ints as
  // floats): NNP_NOT_FOUND when absent, NNP_DTYPE_MISMATCH when of another
  // type.
  const nnp::core::nn::AttrValue& get(const char* name, nnp_attr_type type, const char* op) const;
};
