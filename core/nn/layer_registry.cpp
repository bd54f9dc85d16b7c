#include "layer_registry.hpp"

#include <algorithm>
#include <mutex>

#include "../error.hpp"
#include "../plugin_registry.hpp"
#include "module.hpp"

namespace nnp::core::nn {
namespace {

std::mutex& registry_mutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

bool valid_type_name(const std::string& name) {
  size_t dot = name.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t previous = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t saved = row[j];
      bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, previous + (same ? 0 : 1)});
      previous = saved;
    }
  }
  return row[b.size()];
}

std::string with_article(nnp_attr_type type) {
  return std::string(type == NNP_ATTR_INT ? "an " : "a ") + attr_type_name(type);
}

// Converts a given value to the declared type, or explains the mismatch.
AttrValue coerce(const LayerType& type, const AttrDef& def, const AttrValue& given) {
  AttrValue v = given;
  v.type = def.type;
  bool ok = given.type == def.type;
  if (!ok && def.type == NNP_ATTR_FLOAT && given.type == NNP_ATTR_INT) {
    v.f = static_cast<double>(given.i);
    ok = true;
  }
  if (!ok && (def.type == NNP_ATTR_INTS || def.type == NNP_ATTR_INTS_OR_STRING) && given.type == NNP_ATTR_INT) {
    v.type = NNP_ATTR_INTS;
    v.ints = {given.i};  // kernel_size=3 means 3 in every dimension
    ok = true;
  }
  if (!ok && def.type == NNP_ATTR_FLOATS &&
      (given.type == NNP_ATTR_INTS || given.type == NNP_ATTR_INT || given.type == NNP_ATTR_FLOAT)) {
    v.floats = given.type == NNP_ATTR_INTS  ? given.numbers()
               : given.type == NNP_ATTR_INT ? std::vector<double>{static_cast<double>(given.i)}
                                            : std::vector<double>{given.f};
    v.ints.clear();
    ok = true;
  }
  if (!ok && def.type == NNP_ATTR_INTS_OR_STRING && (given.type == NNP_ATTR_INTS || given.type == NNP_ATTR_STRING)) {
    v.type = given.type;  // padding [1, 2] or "same": the layer reads whichever was given
    ok = true;
  }
  if (!ok)
    fail(NNP_INVALID_ARGUMENT, type.name, ": attribute '", def.name, "' must be ", with_article(def.type), " but ",
         with_article(given.type), " (", format_attr(given), ") was given");
  return v;
}

}  // namespace

LayerType validate_layer_type(const nnp_layer_type& c, const std::string& origin, const std::string& plugin) {
  if (c.struct_size < NNP_LAYER_TYPE_SIZE_1_0)
    fail(NNP_ABI_MISMATCH, "register_layer_type: struct_size ", c.struct_size, " is too small");
  LayerType t;
  t.name = c.name ? c.name : "";
  if (!valid_type_name(t.name))
    fail(NNP_INVALID_ARGUMENT, "register_layer_type: '", t.name,
         "' is not a valid layer type name; use 'namespace.Name' (letters, digits, '_')");
  if (!c.create) fail(NNP_INVALID_ARGUMENT, "register_layer_type: ", t.name, " has no create function");
  if (c.attr_count < 0 || (c.attr_count > 0 && !c.attrs))
    fail(NNP_INVALID_ARGUMENT, "register_layer_type: ", t.name, " declares attributes but gives none");
  t.doc = c.doc ? c.doc : "";
  t.create = c.create;
  t.user_data = c.user_data;
  if (c.struct_size >= NNP_LAYER_TYPE_SIZE_1_8) t.to_onnx = c.to_onnx;
  t.origin = origin;
  t.plugin = plugin;
  for (int32_t i = 0; i < c.attr_count; ++i) {
    const nnp_attr_def& a = c.attrs[i];
    if (a.struct_size < NNP_ATTR_DEF_SIZE_1_0)
      fail(NNP_ABI_MISMATCH, "register_layer_type: ", t.name, ": attribute ", i, " has struct_size ", a.struct_size,
           "; set it to sizeof(nnp_attr_def)");
    AttrDef def;
    def.name = a.name ? a.name : "";
    if (def.name.empty())
      fail(NNP_INVALID_ARGUMENT, "register_layer_type: ", t.name, ": attribute ", i, " has no name");
    if (a.type < NNP_ATTR_INT || a.type > NNP_ATTR_FLOATS)
      fail(NNP_INVALID_ARGUMENT, "register_layer_type: ", t.name, ".", def.name, ": unknown type ", a.type);
    for (const AttrDef& other : t.attrs)
      if (other.name == def.name)
        fail(NNP_INVALID_ARGUMENT, "register_layer_type: ", t.name, " declares '", def.name, "' twice");
    def.type = a.type;
    def.required = a.required != 0;
    def.has_default = a.default_value != nullptr;
    if (def.required && def.has_default)
      fail(NNP_INVALID_ARGUMENT, "register_layer_type: ", t.name, ".", def.name,
           " is declared required and with a default; give one or the other");
    if (def.has_default) def.default_value = parse_attr(a.default_value, a.type, t.name + "." + def.name);
    def.doc = a.doc ? a.doc : "";
    t.attrs.push_back(std::move(def));
  }
  return t;
}

LayerRegistry& LayerRegistry::instance() {
  static LayerRegistry* registry = [] {
    auto* r = new LayerRegistry();
    register_builtin_layers(*r);
    return r;
  }();
  return *registry;
}

void LayerRegistry::add(LayerType type) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const LayerType& existing : types_)
    if (existing.name == type.name)
      fail(NNP_INVALID_ARGUMENT, "layer type '", type.name, "' is already registered (by ", existing.origin, ")");
  types_.push_back(std::move(type));
  LayerType& t = types_.back();
  // The C view points into the stored copy, which never moves (deque).
  t.default_texts.reserve(t.attrs.size());
  for (const AttrDef& def : t.attrs) t.default_texts.push_back(def.has_default ? format_attr(def.default_value) : "");
  for (size_t i = 0; i < t.attrs.size(); ++i) {
    const AttrDef& def = t.attrs[i];
    t.c_attrs.push_back(nnp_attr_def{sizeof(nnp_attr_def), def.name.c_str(), def.type, def.required ? 1 : 0,
                                     def.has_default ? t.default_texts[i].c_str() : nullptr, def.doc.c_str()});
  }
  t.c_type = nnp_layer_type{sizeof(nnp_layer_type),
                            t.name.c_str(),
                            t.doc.c_str(),
                            t.c_attrs.data(),
                            static_cast<int32_t>(t.c_attrs.size()),
                            t.create,
                            t.user_data,
                            t.to_onnx};
}

const LayerType* LayerRegistry::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const LayerType& t : types_)
    if (t.name == name) return &t;
  return nullptr;
}

int32_t LayerRegistry::count() const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return static_cast<int32_t>(types_.size());
}

const LayerType& LayerRegistry::at(int32_t i) const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (i < 0 || i >= static_cast<int32_t>(types_.size()))
    fail(NNP_INVALID_ARGUMENT, "layer type index ", i, " is out of range (", types_.size(), " types)");
  return types_[static_cast<size_t>(i)];
}

std::vector<std::string> LayerRegistry::names() const {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> out;
  for (const LayerType& t : types_) out.push_back(t.name);
  return out;
}

ModuleRef LayerRegistry::create(const std::string& name, const nnp_attrs* given) const {
  PluginRegistry::instance().discover();  // plugin layer types count too
  const LayerType* type = find(name);
  if (!type) {
    std::vector<std::string> all = names();
    std::stable_sort(all.begin(), all.end(), [&](const std::string& a, const std::string& b) {
      return edit_distance(name, a) < edit_distance(name, b);
    });
    std::string closest;
    for (size_t i = 0; i < all.size() && i < 3; ++i) closest += (i ? ", " : "") + all[i];
    std::string plugins;
    for (int32_t i = 0; i < PluginRegistry::instance().plugin_count(); ++i) {
      const PluginRecord& p = PluginRegistry::instance().plugin(i);
      if (p.loaded) plugins += (plugins.empty() ? "" : ", ") + p.name;
    }
    fail(NNP_NOT_FOUND, "unknown layer type '", name, "'; closest: ", closest.empty() ? "none" : closest,
         ". Layer types come from the core and the loaded plugins (", plugins.empty() ? "none" : plugins,
         "); `nnplug plugins` lists them");
  }
  nnp_attrs complete;
  std::vector<std::string> none;  // attributes given as None
  if (given)
    for (const auto& [key, value] : given->values) {
      const std::string& attr = key;  // C++17 lambdas cannot capture structured bindings
      auto def = std::find_if(type->attrs.begin(), type->attrs.end(), [&](const AttrDef& d) { return d.name == attr; });
      if (def == type->attrs.end()) {
        std::string declared;
        for (const AttrDef& d : type->attrs) declared += (declared.empty() ? "" : ", ") + d.name;
        fail(NNP_INVALID_ARGUMENT, name, ": unknown attribute '", key, "' (", name,
             " takes: ", declared.empty() ? "no attributes" : declared, ")");
      }
      if (value.type != NNP_ATTR_NONE) {
        complete.values[key] = coerce(*type, *def, value);
        continue;
      }
      // None: left out, default and all, as PyTorch's None reaches the layer.
      if (def->required)
        fail(NNP_INVALID_ARGUMENT, name, ": attribute '", key, "' is required and cannot be None; give ",
             with_article(def->type));
      none.push_back(key);
    }
  for (const AttrDef& def : type->attrs) {
    if (complete.values.count(def.name) || std::count(none.begin(), none.end(), def.name)) continue;
    if (def.required)
      fail(NNP_INVALID_ARGUMENT, name, ": required attribute '", def.name, "' (", with_article(def.type),
           ") is missing", def.doc.empty() ? "" : ": " + def.doc);
    if (def.has_default) complete.values[def.name] = def.default_value;
  }
  nnp_module* raw = nullptr;
  const uint64_t since = last_error_serial();
  nnp_status status = type->create(&complete, type->user_data, &raw);
  ModuleRef module = ModuleRef::adopt(raw);
  if (status != NNP_OK) check_plugin_status(status, name.c_str(), "create", since);
  if (!module) fail(NNP_INTERNAL, name, ": create returned no module");
  if (!module->layer_type) {  // a layer creating another through the registry keeps the outer one
    module->layer_type = type;
    module->layer_attrs = std::make_shared<const nnp_attrs>(std::move(complete));
  }
  if (type->plugin != "core" && type->plugin != "application" && module->plugin_origin.empty())
    module->plugin_origin = str_cat(name, " (plugin ", type->plugin, ")");
  return module;
}

}  // namespace nnp::core::nn
