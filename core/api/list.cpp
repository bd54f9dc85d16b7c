// Adapters: named lists (state dicts, parameter lists, key lists).
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

// Reads cannot report a status: an index out of range answers NULL.
const nnp_list::Entry* entry_at(const nnp_list* l, int32_t i) {
  if (l == nullptr || i < 0 || i >= static_cast<int32_t>(l->entries.size())) return nullptr;
  return &l->entries[static_cast<size_t>(i)];
}

}  // namespace

nnp_status list_create(nnp_list** out) {
  return guard([&] {
    nnp_list*& list = out_arg(out, "list_create");
    list = new nnp_list();
  });
}
void list_release(nnp_list* l) { delete l; }
int32_t list_size(const nnp_list* l) { return l ? static_cast<int32_t>(l->entries.size()) : 0; }
const char* list_name(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->name.c_str() : nullptr;
}
nnp_tensor* list_tensor(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->tensor.get() : nullptr;
}
nnp_module* list_module(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->module.get() : nullptr;
}
int32_t list_find(const nnp_list* l, const char* name) { return l && name ? l->find(name) : -1; }
nnp_status list_append_tensor(nnp_list* l, const char* name, const nnp_tensor* t) {
  return guard([&] {
    nnp_list& list = in_arg(l, "list_append_tensor", "list");
    list.add(string_arg(name, "list_append_tensor", "name"), t ? TensorRef::share(t) : TensorRef());
  });
}
nnp_status list_remove(nnp_list* l, int32_t i) {
  return guard([&] { in_arg(l, "list_remove", "list").remove(i, "list_remove"); });
}

}  // namespace nnp::core::api
