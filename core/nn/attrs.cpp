#include "attrs.hpp"

#include <nlohmann/json.hpp>

#include "../error.hpp"

namespace nnp::core::nn {

std::string format_attr(const AttrValue& value) {
  nlohmann::json j;
  switch (value.type) {
    case NNP_ATTR_INT: j = value.i; break;
    case NNP_ATTR_FLOAT: j = value.f; break;
    case NNP_ATTR_BOOL: j = value.b; break;
    case NNP_ATTR_STRING: j = value.s; break;
    case NNP_ATTR_FLOATS: j = value.floats; break;
    case NNP_ATTR_NONE: j = nullptr; break;
    default: j = value.ints; break;
  }
  return j.dump();
}

AttrValue parse_attr(const std::string& json_text, nnp_attr_type type, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception&) {
    fail(NNP_INVALID_ARGUMENT, what, ": default '", json_text, "' is not JSON");
  }
  AttrValue v;
  v.type = type;
  bool ok = false;
  switch (type) {
    case NNP_ATTR_INT:
      ok = j.is_number_integer();
      if (ok) v.i = j.get<int64_t>();
      break;
    case NNP_ATTR_FLOAT:
      ok = j.is_number();
      if (ok) v.f = j.get<double>();
      break;
    case NNP_ATTR_BOOL:
      ok = j.is_boolean();
      if (ok) v.b = j.get<bool>();
      break;
    case NNP_ATTR_STRING:
      ok = j.is_string();
      if (ok) v.s = j.get<std::string>();
      break;
    case NNP_ATTR_INTS_OR_STRING:
      if (j.is_string()) {
        v.type = NNP_ATTR_STRING;
        v.s = j.get<std::string>();
        ok = true;
        break;
      }
      v.type = NNP_ATTR_INTS;
      [[fallthrough]];
    case NNP_ATTR_INTS:
      ok = j.is_array() || j.is_number_integer();
      if (j.is_number_integer())
        v.ints = {j.get<int64_t>()};
      else if (ok)
        for (const auto& e : j) {
          if (!e.is_number_integer())
            ok = false;
          else
            v.ints.push_back(e.get<int64_t>());
        }
      break;
    case NNP_ATTR_FLOATS:
      ok = j.is_array() || j.is_number();
      if (j.is_number())
        v.floats = {j.get<double>()};
      else if (ok)
        for (const auto& e : j) {
          if (!e.is_number())
            ok = false;
          else
            v.floats.push_back(e.get<double>());
        }
      break;
    default: break;
  }
  if (!ok) fail(NNP_INVALID_ARGUMENT, what, ": default ", json_text, " is not a ", attr_type_name(type));
  return v;
}

}  // namespace nnp::core::nn

void nnp_attrs::set(const char* name, nnp::core::nn::AttrValue value, const char* op) {
  if (name == nullptr || *name == '\0') nnp::core::fail(NNP_INVALID_ARGUMENT, op, ": the attribute name is empty");
  values[name] = std::move(value);
}

const nnp::core::nn::AttrValue& nnp_attrs::get(const char* name, nnp_attr_type type, const char* op) const {
  using nnp::core::nn::attr_type_name;
  auto it = values.find(name ? name : "");
  if (it == values.end()) nnp::core::fail(NNP_NOT_FOUND, op, ": no attribute '", name ? name : "", "'");
  bool ok = it->second.type == type || (type == NNP_ATTR_FLOAT && it->second.type == NNP_ATTR_INT) ||
            (type == NNP_ATTR_FLOATS && it->second.type == NNP_ATTR_INTS);
  if (!ok)
    nnp::core::fail(NNP_DTYPE_MISMATCH, op, ": attribute '", name, "' is a ", attr_type_name(it->second.type),
                    ", not a ", attr_type_name(type));
  return it->second;
}
