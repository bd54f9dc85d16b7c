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

nnp_value_kind list_kind(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->kind() : -1;
}

namespace {

nnp_list::Entry& append_scalar(nnp_list* l, const char* name, nnp_value_kind kind, const char* op) {
  nnp_list& list = in_arg(l, op, "list");
  return list.add_scalar(string_arg(name, op, "name"), kind);
}

// Entry i of a list read as one of `accepted` kinds, or an error naming the
// kind it holds.
const nnp_list::Entry& scalar_at(const nnp_list* l, int32_t i, std::initializer_list<nnp_value_kind> accepted,
                                 const char* op) {
  const nnp_list& list = list_arg(l, op);
  const nnp_list::Entry* e = entry_at(l, i);
  if (!e) fail(NNP_INVALID_ARGUMENT, op, ": index ", i, " is out of range (", list.entries.size(), " entries)");
  for (nnp_value_kind kind : accepted)
    if (e->kind() == kind) return *e;
  fail(NNP_INVALID_ARGUMENT, op, ": entry ", i, " is ", value_kind_phrase(e->kind()));
}

}  // namespace

nnp_status list_append_int(nnp_list* l, const char* name, int64_t value) {
  return guard([&] { append_scalar(l, name, NNP_VALUE_INT, "list_append_int").integer = value; });
}
nnp_status list_append_float(nnp_list* l, const char* name, double value) {
  return guard([&] { append_scalar(l, name, NNP_VALUE_FLOAT, "list_append_float").real = value; });
}
nnp_status list_append_bool(nnp_list* l, const char* name, int32_t value) {
  return guard([&] { append_scalar(l, name, NNP_VALUE_BOOL, "list_append_bool").integer = value != 0; });
}
nnp_status list_append_string(nnp_list* l, const char* name, const char* value) {
  return guard([&] {
    const char* text = string_arg(value, "list_append_string", "value");
    append_scalar(l, name, NNP_VALUE_STRING, "list_append_string").text = text;
  });
}
nnp_status list_int(const nnp_list* l, int32_t i, int64_t* out) {
  return guard([&] {
    int64_t& value = out_arg(out, "list_int");
    value = scalar_at(l, i, {NNP_VALUE_INT, NNP_VALUE_BOOL}, "list_int").integer;
  });
}
nnp_status list_float(const nnp_list* l, int32_t i, double* out) {
  return guard([&] {
    double& value = out_arg(out, "list_float");
    const nnp_list::Entry& e = scalar_at(l, i, {NNP_VALUE_FLOAT, NNP_VALUE_INT, NNP_VALUE_BOOL}, "list_float");
    value = e.scalar_kind == NNP_VALUE_FLOAT ? e.real : static_cast<double>(e.integer);
  });
}
nnp_status list_bool(const nnp_list* l, int32_t i, int32_t* out) {
  return guard([&] {
    int32_t& value = out_arg(out, "list_bool");
    value = static_cast<int32_t>(scalar_at(l, i, {NNP_VALUE_BOOL}, "list_bool").integer);
  });
}
const char* list_string(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e && e->kind() == NNP_VALUE_STRING ? e->text.c_str() : nullptr;
}

}  // namespace nnp::core::api
