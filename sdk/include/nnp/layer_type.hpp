// nnp/layer_type.hpp - declaring a layer type: its attributes and the module
// its create() makes. The core's built-in layers and plugins' layers are
// declared with the same helpers and land in the same registry.
//
//   struct Swish : nnp::nn::Module {
//     explicit Swish(const nnp::nn::Attrs& a) : Module("Swish"), beta(a.real("beta")) {}
//     ...
//   };
//   nnp::nn::register_layer<Swish>(host, "act.Swish", "x * sigmoid(beta * x)",
//                                  {{"beta", NNP_ATTR_FLOAT, false, "1.0", "slope inside the sigmoid"}});
#pragma once

#include <nnp/nnp.h>

#include <nnp/detail/attr_names.hpp>
#include <vector>

namespace nnp::nn {

// "int", "float", "bool", "string", "list of ints": how messages and
// `nnplug plugins` name attribute types.
using nnp::detail::attr_type_name;

// One attribute a layer type takes.
struct AttrDecl {
  const char* name;
  nnp_attr_type type;
  bool required;
  const char* default_json;  // JSON text ("1e-05", "[1, 1]"); nullptr when required or optional without default
  const char* doc;           // one line
};

// An nnp_layer_type together with the attribute array it points to; the
// registry copies both, so this may be a temporary.
class LayerTypeDecl {
 public:
  LayerTypeDecl(const char* name, const char* doc, const std::vector<AttrDecl>& attrs,
                nnp_status (*create)(const nnp_attrs*, void*, nnp_module**), void* user_data = nullptr) {
    for (const AttrDecl& a : attrs)
      defs_.push_back(nnp_attr_def{sizeof(nnp_attr_def), a.name, a.type, a.required ? 1 : 0, a.default_json, a.doc});
    type_.struct_size = sizeof(nnp_layer_type);
    type_.name = name;
    type_.doc = doc;
    type_.attrs = defs_.empty() ? nullptr : defs_.data();
    type_.attr_count = static_cast<int32_t>(defs_.size());
    type_.create = create;
    type_.user_data = user_data;
  }
  LayerTypeDecl(const LayerTypeDecl&) = delete;
  LayerTypeDecl& operator=(const LayerTypeDecl&) = delete;
  const nnp_layer_type& get() const { return type_; }

 private:
  std::vector<nnp_attr_def> defs_;
  nnp_layer_type type_{};
};

}  // namespace nnp::nn
