// The layer registry: every layer type by name ("nn.Linear", "acme.Swish"),
// built-in or from a plugin, with its declared attributes. Model specs and
// applications create layers through it.
#pragma once

#include <nnp/nnp.h>

#include <deque>
#include <string>
#include <vector>

#include "attrs.hpp"
#include "module_ref.hpp"

namespace nnp::core::nn {

struct AttrDef {
  std::string name;
  nnp_attr_type type;
  bool required;
  bool has_default;
  AttrValue default_value;
  std::string doc;
};

struct LayerType {
  std::string name;
  std::string doc;
  std::vector<AttrDef> attrs;
  nnp_status (*create)(const nnp_attrs*, void*, nnp_module**) = nullptr;
  void* user_data = nullptr;
  decltype(nnp_layer_type::to_onnx) to_onnx = nullptr;  // (1.8) NULL: no lowering of its own
  std::string origin;                                   // "core", "the application" or the plugin's path (for messages)
  std::string plugin;                                   // "core", "application" or the registering plugin's name
  // The C view handed out by layer_type_info (pointers into the above).
  std::vector<nnp_attr_def> c_attrs;
  std::vector<std::string> default_texts;
  nnp_layer_type c_type{};
};

// Checks a type given through the C API and copies it (strings included).
LayerType validate_layer_type(const nnp_layer_type& type, const std::string& origin, const std::string& plugin);

class LayerRegistry {
 public:
  static LayerRegistry& instance();  // the built-in layers are registered on first use
  void add(LayerType type);          // throws on a duplicate name
  const LayerType* find(const std::string& name) const;
  int32_t count() const;
  const LayerType& at(int32_t i) const;
  // Creates a layer: unknown attributes, missing required ones and wrong
  // types are refused naming the layer, the attribute and the expected type.
  ModuleRef create(const std::string& type, const nnp_attrs* attrs) const;
  std::vector<std::string> names() const;

 private:
  LayerRegistry() = default;
  std::deque<LayerType> types_;
};

// The built-in layers: the library's (library/, through the table) and nn.GraphModule.
void register_builtin_layers(LayerRegistry& registry);

}  // namespace nnp::core::nn
