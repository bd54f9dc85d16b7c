// Registering the core's own layer types (the same registry plugins use).
#pragma once

#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "../layer_registry.hpp"

namespace nnp::core::nn::layers {

struct BuiltinAttr {
  const char* name;
  nnp_attr_type type;
  bool required;
  const char* default_json;  // nullptr: required, or optional without default
  const char* doc;
};

// M is an nnp::nn::Module constructed from nnp::nn::Attrs.
template <typename M>
void add_builtin(LayerRegistry& registry, const char* name, const char* doc, const std::vector<BuiltinAttr>& attrs) {
  std::vector<nnp_attr_def> defs;
  for (const BuiltinAttr& a : attrs)
    defs.push_back(nnp_attr_def{sizeof(nnp_attr_def), a.name, a.type, a.required ? 1 : 0, a.default_json, a.doc});
  nnp_layer_type type{sizeof(nnp_layer_type),      name,   doc, defs.data(), static_cast<int32_t>(defs.size()),
                      nnp::nn::create_layer_of<M>, nullptr};
  registry.add(validate_layer_type(type, "core", "core"));
}

// "[2,3]", as the core's messages write shapes.
inline std::string shape_text(const nnp::Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  return out + "]";
}

void register_linear_layers(LayerRegistry& registry);
void register_activation_layers(LayerRegistry& registry);
void register_loss_layers(LayerRegistry& registry);
void register_norm_layers(LayerRegistry& registry);
void register_conv_layers(LayerRegistry& registry);

}  // namespace nnp::core::nn::layers
