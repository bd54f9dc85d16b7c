// How every adapter in core/api checks what a caller hands it: one place for
// NULL inputs, NULL outputs, caller-sized info structs and size-queried
// strings, so each entry is a line or two and every entry answers the same
// way (NNP_INVALID_ARGUMENT naming the argument).
#pragma once

#include <nnp/nnp.h>

#include <cstring>
#include <memory>
#include <nnp/detail/strings.hpp>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "../nn/attrs.hpp"
#include "../nn/module.hpp"
#include "../nn/named_list.hpp"
#include "../nn/state_dict.hpp"
#include "../tensor.hpp"

namespace nnp::core::api {

// A required input handle.
template <typename T>
T& in_arg(T* value, const char* op, const char* name) {
  if (value == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": argument '", name, "' is NULL");
  return *value;
}
inline const Tensor& tensor_arg(const nnp_tensor* t, const char* op, const char* name = "t") {
  return in_arg(t, op, name);
}
inline nn::Module& module_arg(const nnp_module* m, const char* op) {
  return *const_cast<nnp_module*>(&in_arg(m, op, "m"));
}
inline const nnp_list& list_arg(const nnp_list* l, const char* op, const char* name = "list") {
  return in_arg(l, op, name);
}
inline nnp_attrs& attrs_arg(const nnp_attrs* a, const char* op) {
  return *const_cast<nnp_attrs*>(&in_arg(a, op, "attrs"));
}
// A required string (may be empty).
inline const char* string_arg(const char* text, const char* op, const char* name) {
  if (text == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": argument '", name, "' is NULL");
  return text;
}
// A required, non-empty string.
inline const char* text_arg(const char* text, const char* op, const char* name) {
  if (text == nullptr || *text == '\0') fail(NNP_INVALID_ARGUMENT, op, ": argument '", name, "' is NULL or empty");
  return text;
}
inline const char* path_arg(const char* path, const char* op) { return text_arg(path, op, "path"); }

// A required output. A pointer output is set to NULL first, so a failure
// never leaves the caller holding garbage. Bind the result to a reference
// before computing the value: in `out_arg(out, op) = make()` C++17 runs
// make() first, and a NULL out would then leak what it made.
template <typename T>
T& out_arg(T* out, const char* op, const char* name = "out") {
  if (out == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": output argument '", name, "' is NULL");
  if constexpr (std::is_pointer_v<T>) *out = nullptr;
  return *out;
}
// The shape of every entry that makes one handle: the output is checked
// before any work, and make()'s new reference (a TensorRef, a ModuleRef) is
// handed out only once everything succeeded.
template <typename T, typename Make>
nnp_status handle_out(T** out, const char* op, Make make) {
  return guard([&] {
    T*& result = out_arg(out, op);
    result = make().take();
  });
}

// An output the caller may leave NULL (documented so in nnp.h).
template <typename T>
void optional_out(T* out, T value) {
  if (out) *out = value;
}

// A caller-sized parameter struct: at least its first released layout.
template <typename Params>
const Params& params_arg(const Params* p, size_t released, const char* op) {
  const Params& params = in_arg(p, op, "p");
  if (params.struct_size < released)
    fail(NNP_INVALID_ARGUMENT, op, ": the parameters' struct_size is ", params.struct_size,
         "; set it to sizeof the struct");
  return params;
}

// A struct the caller sizes (struct_size first, DESIGN §2.2).
template <typename T>
T& info_arg(T* info, const char* op) {
  out_arg(info, op);
  if (info->struct_size < sizeof(size_t))
    fail(NNP_INVALID_ARGUMENT, op, ": set struct_size to sizeof the struct before the call");
  return *info;
}
// Writes `full` into the caller's struct up to the size the caller knows.
template <typename T>
void write_info(T* info, T full) {
  size_t size = info->struct_size < sizeof(T) ? info->struct_size : sizeof(T);
  full.struct_size = size;
  std::memcpy(info, &full, size);
}

// A new list filled by `fill`, handed out only when filling succeeded.
template <typename Fill>
nnp_status list_out(nnp_list** out, const char* op, Fill fill) {
  return guard([&] {
    nnp_list*& result = out_arg(out, op);
    auto list = std::make_unique<nnp_list>();
    fill(*list);
    result = list.release();
  });
}

// load_state_dict's key lists, to the caller's outputs that are not NULL.
inline void hand_out(nn::IncompatibleKeys keys, nnp_list** missing, nnp_list** unexpected) {
  if (missing) *missing = keys.missing.release();
  if (unexpected) *unexpected = keys.unexpected.release();
}

// A callback's user data, released with release_fn whatever happens from
// here on (registration failing included).
inline std::shared_ptr<void> owned_user_data(void* user_data, void (*release_fn)(void*)) {
  return std::shared_ptr<void>(user_data, [release_fn](void* p) {
    if (release_fn) release_fn(p);
  });
}

}  // namespace nnp::core::api
