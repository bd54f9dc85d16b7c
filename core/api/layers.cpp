// Adapters: attribute sets and the layer registry.
#include "../nn/layer_registry.hpp"
#include "../plugin_registry.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

template <typename Fill>
nnp_status set_attr(nnp_attrs* a, const char* name, const char* op, Fill fill) {
  return guard([&] {
    nnp_attrs& attrs = attrs_arg(a, op);
    nn::AttrValue value;
    fill(value);
    attrs.set(name, std::move(value), op);
  });
}

// The registry as the application sees it: every plugin discovered.
nn::LayerRegistry& discovered_layers() {
  PluginRegistry::instance().discover();
  return nn::LayerRegistry::instance();
}

}  // namespace

nnp_status attrs_create(nnp_attrs** out) {
  return guard([&] {
    nnp_attrs*& attrs = out_arg(out, "attrs_create");
    attrs = new nnp_attrs();
  });
}
void attrs_release(nnp_attrs* a) { delete a; }
nnp_status attrs_set_int(nnp_attrs* a, const char* name, int64_t value) {
  return set_attr(a, name, "attrs_set_int", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_INT;
    v.i = value;
  });
}
nnp_status attrs_set_float(nnp_attrs* a, const char* name, double value) {
  return set_attr(a, name, "attrs_set_float", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_FLOAT;
    v.f = value;
  });
}
nnp_status attrs_set_bool(nnp_attrs* a, const char* name, int32_t value) {
  return set_attr(a, name, "attrs_set_bool", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_BOOL;
    v.b = value != 0;
  });
}
nnp_status attrs_set_string(nnp_attrs* a, const char* name, const char* value) {
  return set_attr(a, name, "attrs_set_string", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_STRING;
    v.s = string_arg(value, "attrs_set_string", "value");
  });
}
nnp_status attrs_set_ints(nnp_attrs* a, const char* name, const int64_t* values, int32_t count) {
  return set_attr(a, name, "attrs_set_ints", [&](nn::AttrValue& v) {
    if (count < 0 || (count > 0 && values == nullptr))
      fail(NNP_INVALID_ARGUMENT, "attrs_set_ints: ", count, " values at ", values ? "an array" : "NULL");
    v.type = NNP_ATTR_INTS;
    v.ints.assign(values, values + count);
  });
}
nnp_status attrs_set_floats(nnp_attrs* a, const char* name, const double* values, int32_t count) {
  return set_attr(a, name, "attrs_set_floats", [&](nn::AttrValue& v) {
    if (count < 0 || (count > 0 && values == nullptr))
      fail(NNP_INVALID_ARGUMENT, "attrs_set_floats: ", count, " values at ", values ? "an array" : "NULL");
    v.type = NNP_ATTR_FLOATS;
    v.floats.assign(values, values + count);
  });
}
int32_t attrs_has(const nnp_attrs* a, const char* name) {
  if (!a || !name) return 0;
  auto it = a->values.find(name);
  return it != a->values.end() && it->second.type != NNP_ATTR_NONE ? 1 : 0;
}
nnp_status attrs_set_none(nnp_attrs* a, const char* name) {
  return set_attr(a, name, "attrs_set_none", [&](nn::AttrValue& v) { v.type = NNP_ATTR_NONE; });
}
nnp_status attrs_get_int(const nnp_attrs* a, const char* name, int64_t* out) {
  return guard([&] {
    int64_t& result = out_arg(out, "attrs_get_int");
    result = attrs_arg(a, "attrs_get_int").get(name, NNP_ATTR_INT, "attrs_get_int").i;
  });
}
nnp_status attrs_get_float(const nnp_attrs* a, const char* name, double* out) {
  return guard([&] {
    double& result = out_arg(out, "attrs_get_float");
    const nn::AttrValue& v = attrs_arg(a, "attrs_get_float").get(name, NNP_ATTR_FLOAT, "attrs_get_float");
    result = v.type == NNP_ATTR_INT ? static_cast<double>(v.i) : v.f;
  });
}
nnp_status attrs_get_bool(const nnp_attrs* a, const char* name, int32_t* out) {
  return guard([&] {
    int32_t& result = out_arg(out, "attrs_get_bool");
    result = attrs_arg(a, "attrs_get_bool").get(name, NNP_ATTR_BOOL, "attrs_get_bool").b ? 1 : 0;
  });
}
nnp_status attrs_get_string(const nnp_attrs* a, const char* name, const char** out) {
  return guard([&] {
    const char*& result = out_arg(out, "attrs_get_string");
    result = attrs_arg(a, "attrs_get_string").get(name, NNP_ATTR_STRING, "attrs_get_string").s.c_str();
  });
}
// Both outputs may be NULL: count alone is a size query, values alone reads
// up to capacity entries of a list whose length the caller knows.
nnp_status attrs_get_ints(const nnp_attrs* a, const char* name, int64_t* values, int32_t capacity, int32_t* count) {
  return guard([&] {
    const nn::AttrValue& v = attrs_arg(a, "attrs_get_ints").get(name, NNP_ATTR_INTS, "attrs_get_ints");
    const int32_t size = static_cast<int32_t>(v.ints.size());
    optional_out(count, size);
    for (int32_t i = 0; values && i < capacity && i < size; ++i) values[i] = v.ints[static_cast<size_t>(i)];
  });
}

nnp_status attrs_get_floats(const nnp_attrs* a, const char* name, double* values, int32_t capacity, int32_t* count) {
  return guard([&] {
    const nn::AttrValue& v = attrs_arg(a, "attrs_get_floats").get(name, NNP_ATTR_FLOATS, "attrs_get_floats");
    const std::vector<double> numbers = v.numbers();
    const int32_t size = static_cast<int32_t>(numbers.size());
    optional_out(count, size);
    for (int32_t i = 0; values && i < capacity && i < size; ++i) values[i] = numbers[static_cast<size_t>(i)];
  });
}

nnp_status register_layer_type(nnp_plugin_host* host, const nnp_layer_type* type) {
  return PluginRegistry::register_layer_type(host, type);
}
int32_t layer_type_count() {
  int32_t count = 0;
  guard([&] { count = discovered_layers().count(); });
  return count;
}
nnp_status layer_type_info(int32_t i, nnp_layer_type* out) {
  return guard([&] {
    info_arg(out, "layer_type_info");
    write_info(out, discovered_layers().at(i).c_type);
  });
}
nnp_status layer_type_plugin(int32_t i, const char** out) {
  return guard([&] {
    const char*& plugin = out_arg(out, "layer_type_plugin");
    plugin = discovered_layers().at(i).plugin.c_str();
  });
}
nnp_status module_layer_attrs(const nnp_module* m, const char** type, nnp_attrs** attrs) {
  return guard([&] {
    if (type) *type = nullptr;
    if (attrs) *attrs = nullptr;
    const nn::Module& module = module_arg(m, "module_layer_attrs");
    if (!module.layer_type || !module.layer_attrs)
      fail(NNP_NOT_FOUND, "module_layer_attrs: this ", module.type_name,
           " was not made by the layer registry, so it has no layer attributes");
    if (type) *type = module.layer_type->name.c_str();
    if (attrs) *attrs = new nnp_attrs(*module.layer_attrs);
  });
}
nnp_status layer_create(const char* type, const nnp_attrs* attrs, nnp_module** out) {
  return handle_out(out, "layer_create", [&] {
    return nn::LayerRegistry::instance().create(string_arg(type, "layer_create", "type"), attrs);
  });
}

}  // namespace nnp::core::api
