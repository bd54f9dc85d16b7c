#include "model_spec.hpp"

#include <climits>
#include <nlohmann/json.hpp>

#include "../error.hpp"
#include "../nn/attrs.hpp"
#include "../nn/containers.hpp"
#include "../nn/layer_registry.hpp"
#include "../nn/module.hpp"
#include "regular_file.hpp"
#include "strict_json.hpp"

namespace nnp::core::io {
namespace {

using json = nlohmann::json;

// A spec is a tree of layers: each container adds two JSON levels
// (object, children list), so 64 levels allow 30 nested containers; the
// size bound keeps a spec's document small beside the model it describes.
constexpr size_t kMaxSpecDepth = 64;
constexpr size_t kMaxSpecBytes = 16u << 20;

struct ContainerType {
  const char* name;
  nnp_container_kind kind;
};
constexpr ContainerType kContainers[] = {
    {"nn.Sequential", NNP_SEQUENTIAL}, {"nn.ModuleList", NNP_MODULE_LIST}, {"nn.ModuleDict", NNP_MODULE_DICT}};

// Names and strings go on as C strings: a NUL would cut them silently
// ("nn.Re\u0000LU" read as "nn.Re").
const std::string& without_nul(const std::string& text, const std::string& where, const char* what) {
  if (text.find('\0') != std::string::npos)
    fail(NNP_INVALID_ARGUMENT, where, ": the ", what, " contains a NUL character (\\u0000)");
  return text;
}

nn::AttrValue attr_from_json(const json& value, const std::string& where) {
  nn::AttrValue v;
  if (value.is_boolean()) {
    v.type = NNP_ATTR_BOOL;
    v.b = value.get<bool>();
  } else if (value.is_number_integer()) {
    if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      fail(NNP_INVALID_ARGUMENT, where, ": ", value.dump(), " is too large (at most ", INT64_MAX, ")");
    v.type = NNP_ATTR_INT;
    v.i = value.get<int64_t>();
  } else if (value.is_number()) {
    v.type = NNP_ATTR_FLOAT;
    v.f = value.get<double>();
  } else if (value.is_string()) {
    v.type = NNP_ATTR_STRING;
    v.s = without_nul(value.get<std::string>(), where, "string");
  } else if (value.is_null()) {
    v.type = NNP_ATTR_NONE;  // PyTorch's None
  } else if (value.is_array()) {
    // Integers make a list of ints; any other number, a list of floats.
    v.type = NNP_ATTR_INTS;
    for (const json& e : value) {
      if (!e.is_number()) fail(NNP_INVALID_ARGUMENT, where, ": lists may hold numbers only, not ", e.dump());
      if (!e.is_number_integer()) v.type = NNP_ATTR_FLOATS;
    }
    for (const json& e : value) {
      if (v.type == NNP_ATTR_FLOATS) {
        v.floats.push_back(e.get<double>());
        continue;
      }
      if (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        fail(NNP_INVALID_ARGUMENT, where, ": ", e.dump(), " is too large (at most ", INT64_MAX, ")");
      v.ints.push_back(e.get<int64_t>());
    }
  } else {
    fail(NNP_INVALID_ARGUMENT, where, ": unsupported value ", value.dump(),
         " (numbers, bools, strings, null, lists of numbers)");
  }
  return v;
}

ModuleRef build(const json& spec, const std::string& where) {
  if (!spec.is_object()) fail(NNP_INVALID_ARGUMENT, where, ": a layer is a JSON object with a \"type\"");
  if (!spec.contains("type") || !spec["type"].is_string())
    fail(NNP_INVALID_ARGUMENT, where, ": missing \"type\" (for example \"nn.Linear\")");
  const std::string type = without_nul(spec["type"].get<std::string>(), where, "type");
  const std::string here = where + " (" + type + ")";
  for (const ContainerType& c : kContainers) {
    if (type != c.name) continue;
    for (auto it = spec.begin(); it != spec.end(); ++it)
      if (it.key() != "type" && it.key() != "children")
        fail(NNP_INVALID_ARGUMENT, here, ": containers take only \"children\", not \"", it.key(), "\"");
    ModuleRef container = nn::create_container(c.kind);
    if (!spec.contains("children")) return container;
    const json& children = spec["children"];
    if (c.kind == NNP_MODULE_DICT) {
      if (!children.is_object()) fail(NNP_INVALID_ARGUMENT, here, ": \"children\" must be an object of named layers");
      for (auto it = children.begin(); it != children.end(); ++it) {
        without_nul(it.key(), here, "child name");
        ModuleRef child = build(it.value(), where + ".children." + it.key());
        nn::register_module(*container, it.key().c_str(), child.get());
      }
    } else {
      if (!children.is_array()) fail(NNP_INVALID_ARGUMENT, here, ": \"children\" must be a list of layers");
      for (size_t i = 0; i < children.size(); ++i) {
        ModuleRef child = build(children[i], where + ".children[" + std::to_string(i) + "]");
        nn::register_module(*container, std::to_string(i).c_str(), child.get());
      }
    }
    return container;
  }
  nnp_attrs attrs;
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    if (it.key() == "type") continue;
    if (it.key() == "children") fail(NNP_INVALID_ARGUMENT, here, ": only containers take \"children\"");
    without_nul(it.key(), here, "attribute name");
    attrs.values[it.key()] = attr_from_json(it.value(), here + "." + it.key());
  }
  try {
    return nn::LayerRegistry::instance().create(type, &attrs);
  } catch (const Error& e) {
    throw Error(e.status(), where + ": " + e.what());
  }
}

}  // namespace

ModuleRef model_from_spec(const std::string& json_text, const std::string& origin) {
  if (json_text.size() > kMaxSpecBytes)
    fail(NNP_INVALID_ARGUMENT, origin, ": the spec is ", json_text.size(), " bytes, more than the limit of ",
         kMaxSpecBytes);
  json spec = parse_strict_json(json_text, kMaxSpecDepth, [&](const std::string& what) {
    fail(NNP_INVALID_ARGUMENT, origin, ": the spec ", what,
         what.rfind("nests", 0) == 0 ? " (containers may nest 30 deep)" : "");
  });
  return build(spec, origin);
}

ModuleRef model_from_spec_file(const std::string& path) {
  // Refused by size before any of it is read.
  return model_from_spec(RegularFile(path, "model spec").read_all(kMaxSpecBytes), path);
}

}  // namespace nnp::core::io
