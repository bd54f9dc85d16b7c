// Adapters: modules (creation, registration, traversal, modes, calls, hooks,
// printing) and their state dicts.
#include <vector>

#include "../device.hpp"
#include "../nn/containers.hpp"
#include "../nn/module_call.hpp"
#include "../nn/state_dict.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {
namespace {

std::string optional_text(const char* text) { return text ? text : ""; }

}  // namespace

nnp_status module_create(const char* type_name, const nnp_module_vtable* vtable, void* self, nnp_module** out) {
  return handle_out(out, "module_create", [&] { return nn::create_module(type_name, vtable, self); });
}
nnp_status container_create(nnp_container_kind kind, nnp_module** out) {
  return handle_out(out, "container_create", [&] { return nn::create_container(kind); });
}
void module_retain(nnp_module* m) {
  if (m) retain(m);
}
void module_release(nnp_module* m) {
  if (m) release(m);
}
void module_detach_self(nnp_module* m) {
  if (m) nn::detach_self(*m);
}
const char* module_type_name(const nnp_module* m) { return m ? m->type_name.c_str() : ""; }
nnp_status register_parameter(nnp_module* m, const char* name, nnp_tensor* t, int32_t requires_grad) {
  return guard([&] { nn::register_parameter(module_arg(m, "register_parameter"), name, t, requires_grad != 0); });
}
nnp_status register_buffer(nnp_module* m, const char* name, nnp_tensor* t, int32_t persistent) {
  return guard([&] { nn::register_buffer(module_arg(m, "register_buffer"), name, t, persistent != 0); });
}
nnp_status register_module(nnp_module* m, const char* name, nnp_module* child) {
  return guard([&] { nn::register_module(module_arg(m, "register_module"), name, child); });
}
nnp_status get_parameter(const nnp_module* m, const char* path, nnp_tensor** out) {
  return handle_out(out, "get_parameter",
                    [&] { return nn::get_parameter(module_arg(m, "get_parameter"), optional_text(path)); });
}
nnp_status get_buffer(const nnp_module* m, const char* path, nnp_tensor** out) {
  return handle_out(out, "get_buffer",
                    [&] { return nn::get_buffer(module_arg(m, "get_buffer"), optional_text(path)); });
}
nnp_status get_submodule(const nnp_module* m, const char* path, nnp_module** out) {
  return handle_out(out, "get_submodule",
                    [&] { return nn::get_submodule(module_arg(m, "get_submodule"), optional_text(path)); });
}
nnp_status named_parameters(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                            nnp_list** out) {
  return list_out(out, "named_parameters", [&](nnp_list& l) {
    nn::named_parameters(module_arg(m, "named_parameters"), optional_text(prefix), recurse != 0, remove_duplicate != 0,
                         l);
  });
}
nnp_status named_buffers(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                         nnp_list** out) {
  return list_out(out, "named_buffers", [&](nnp_list& l) {
    nn::named_buffers(module_arg(m, "named_buffers"), optional_text(prefix), recurse != 0, remove_duplicate != 0, l);
  });
}
nnp_status named_children(const nnp_module* m, nnp_list** out) {
  return list_out(out, "named_children", [&](nnp_list& l) { nn::named_children(module_arg(m, "named_children"), l); });
}
nnp_status named_modules(const nnp_module* m, const char* prefix, int32_t remove_duplicate, nnp_list** out) {
  return list_out(out, "named_modules", [&](nnp_list& l) {
    nn::named_modules(module_arg(m, "named_modules"), optional_text(prefix), remove_duplicate != 0, l);
  });
}
nnp_status module_apply(nnp_module* m, nnp_status (*fn)(nnp_module*, void*), void* user_data) {
  return guard([&] { nn::apply(module_arg(m, "module_apply"), in_arg(fn, "module_apply", "fn"), user_data); });
}
nnp_status module_train(nnp_module* m, int32_t mode) {
  return guard([&] { nn::train(module_arg(m, "module_train"), mode != 0); });
}
int32_t module_is_training(const nnp_module* m) { return m && m->training ? 1 : 0; }
nnp_status module_requires_grad(nnp_module* m, int32_t value) {
  return guard([&] { nn::requires_grad(module_arg(m, "module_requires_grad"), value != 0); });
}
nnp_status module_zero_grad(nnp_module* m, int32_t set_to_none) {
  return guard([&] { nn::zero_grad(module_arg(m, "module_zero_grad"), set_to_none != 0); });
}
nnp_status module_to(nnp_module* m, const nnp_device* device, nnp_dtype dtype) {
  return guard([&] {
    if (device) check_device("module_to", *device);
    nn::to(module_arg(m, "module_to"), device, dtype);
  });
}
nnp_status module_to_empty(nnp_module* m, nnp_device device) {
  return guard([&] {
    check_device("module_to_empty", device);
    nn::to_empty(module_arg(m, "module_to_empty"), device);
  });
}
nnp_status module_call(nnp_module* m, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** out) {
  return handle_out(out, "module_call", [&] {
    if (n_inputs < 0 || (n_inputs > 0 && inputs == nullptr))
      fail(NNP_INVALID_ARGUMENT, "module_call: ", n_inputs, " inputs at ", inputs == nullptr ? "NULL" : "an array");
    std::vector<TensorRef> args;
    for (int32_t i = 0; i < n_inputs; ++i)
      args.push_back(TensorRef::share(&tensor_arg(inputs[i], "module_call", "input")));
    return nn::call(module_arg(m, "module_call"), args);
  });
}
nnp_status module_register_hook(nnp_module* m, nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                void (*release_fn)(void*), int32_t prepend, nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, "module_register_hook");
    nn::ModuleHookFn hook;
    hook.tensors = in_arg(fn, "module_register_hook", "fn");
    handle = nn::register_hook(module_arg(m, "module_register_hook"), kind, hook, data, prepend != 0);
  });
}
nnp_status register_global_module_hook(nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                       void (*release_fn)(void*), nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, "register_global_module_hook");
    nn::ModuleHookFn hook;
    hook.tensors = in_arg(fn, "register_global_module_hook", "fn");
    handle = nn::register_global_hook(kind, hook, data);
  });
}
nnp_status module_call_values(nnp_module* m, const nnp_list* args, nnp_list** out) {
  return guard([&] {
    nnp_list*& results = out_arg(out, "module_call_values");
    nnp_list given = list_arg(args, "module_call_values", "args");
    results = new nnp_list(nn::call_values(module_arg(m, "module_call_values"), std::move(given)));
  });
}
nnp_status module_register_values_hook(nnp_module* m, nnp_module_hook_kind kind, nnp_module_values_hook_fn fn,
                                       void* user_data, void (*release_fn)(void*), int32_t prepend,
                                       nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, "module_register_values_hook");
    nn::ModuleHookFn hook;
    hook.values = in_arg(fn, "module_register_values_hook", "fn");
    handle = nn::register_hook(module_arg(m, "module_register_values_hook"), kind, hook, data, prepend != 0);
  });
}
nnp_status register_global_module_values_hook(nnp_module_hook_kind kind, nnp_module_values_hook_fn fn, void* user_data,
                                              void (*release_fn)(void*), nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, "register_global_module_values_hook");
    nn::ModuleHookFn hook;
    hook.values = in_arg(fn, "register_global_module_values_hook", "fn");
    handle = nn::register_global_hook(kind, hook, data);
  });
}
nnp_status module_repr(const nnp_module* m, char* buf, size_t size, size_t* needed) {
  return guard([&] { detail::write_string(nn::repr(module_arg(m, "module_repr")), buf, size, needed); });
}

nnp_status state_dict(nnp_module* m, const char* prefix, int32_t keep_vars, nnp_list** out) {
  return list_out(out, "state_dict", [&](nnp_list& l) {
    nn::state_dict(module_arg(m, "state_dict"), optional_text(prefix), keep_vars != 0, l);
  });
}
nnp_status load_state_dict(nnp_module* m, const nnp_list* state, int32_t strict, int32_t assign, nnp_list** missing,
                           nnp_list** unexpected) {
  return guard([&] {
    optional_out<nnp_list*>(missing, nullptr);
    optional_out<nnp_list*>(unexpected, nullptr);
    hand_out(nn::load_state_dict(module_arg(m, "load_state_dict"), list_arg(state, "load_state_dict"), strict != 0,
                                 assign != 0),
             missing, unexpected);
  });
}
nnp_status register_state_hook(nnp_module* m, nnp_state_hook_kind kind, nnp_state_hook_fn fn, void* user_data,
                               void (*release_fn)(void*), nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    nnp_hook_handle*& handle = out_arg(out, "register_state_hook");
    handle = nn::register_state_hook(module_arg(m, "register_state_hook"), kind,
                                     in_arg(fn, "register_state_hook", "fn"), data);
  });
}

}  // namespace nnp::core::api
