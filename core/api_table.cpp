// Trampolines from the C table into the core. Every entry catches every
// exception (guard) and reports it as a status plus a thread-local message.
#include "api_table.hpp"

#include <cstring>
#include <string>

#include "autograd/custom_function.hpp"
#include "autograd/engine.hpp"
#include "autograd/functions.hpp"
#include "autograd/grad_mode.hpp"
#include "autograd/record.hpp"
#include "autograd/tensor_autograd.hpp"
#include "device.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "interop/dlpack.hpp"
#include "io/model_spec.hpp"
#include "io/safetensors.hpp"
#include "nn/attrs.hpp"
#include "nn/containers.hpp"
#include "nn/layer_registry.hpp"
#include "nn/module.hpp"
#include "nn/module_call.hpp"
#include "nn/state_dict.hpp"
#include "ops.hpp"
#include "optim/optimizer.hpp"
#include "plugin_registry.hpp"

namespace nnp::core {
namespace {

const Tensor& arg(const nnp_tensor* t, const char* op, const char* name) {
  if (t == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": argument '", name, "' is NULL");
  return *t;
}

template <typename T>
T** out_arg(T** out, const char* op) {
  if (out == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": the output pointer is NULL");
  *out = nullptr;
  return out;
}

// Copies a string into a caller's buffer with a size query (DESIGN §2.5).
void copy_string(const std::string& text, char* buf, size_t size, size_t* needed) {
  if (needed) *needed = text.size() + 1;
  if (buf == nullptr || size == 0) return;
  if (size < text.size() + 1)
    fail(NNP_INVALID_ARGUMENT, "buffer of ", size, " bytes is too small; ", text.size() + 1, " are needed");
  std::memcpy(buf, text.c_str(), text.size() + 1);
}

template <typename T>
T* info_arg(T* info, const char* op) {
  if (info == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": output struct is NULL");
  if (info->struct_size < sizeof(size_t))
    fail(NNP_INVALID_ARGUMENT, op, ": set struct_size to sizeof the struct before the call");
  return info;
}

// Writes `full` into the caller's struct up to the size the caller knows.
template <typename T>
void write_info(T* info, T full) {
  size_t size = info->struct_size < sizeof(T) ? info->struct_size : sizeof(T);
  full.struct_size = size;
  std::memcpy(info, &full, size);
}

PluginRegistry& registry() {
  PluginRegistry& r = PluginRegistry::instance();
  r.discover();
  return r;
}

// ---- errors and names ----
const char* api_last_error() { return last_error_message(); }
nnp_status api_last_status() { return last_error_status(); }
void api_set_error(nnp_status status, const char* message) { set_last_error(status, message); }
const char* api_status_name(nnp_status status) {
  static const char* const names[] = {"NNP_OK",
                                      "NNP_INVALID_ARGUMENT",
                                      "NNP_SHAPE_MISMATCH",
                                      "NNP_DTYPE_MISMATCH",
                                      "NNP_DEVICE_MISMATCH",
                                      "NNP_OUT_OF_MEMORY",
                                      "NNP_DEVICE_ERROR",
                                      "NNP_NOT_FOUND",
                                      "NNP_UNIMPLEMENTED",
                                      "NNP_ABI_MISMATCH",
                                      "NNP_IO_ERROR",
                                      "NNP_CORRUPT_DATA",
                                      "NNP_INTERNAL"};
  return status >= 0 && status <= NNP_INTERNAL ? names[status] : "NNP_UNKNOWN_STATUS";
}
const char* api_dtype_name(nnp_dtype dtype) { return dtype_name(dtype); }
size_t api_dtype_size(nnp_dtype dtype) { return dtype_size(dtype); }
const char* api_version() { return NNP_VERSION_STRING; }

// ---- plugins and devices ----
nnp_status api_load_plugin(const char* path) {
  return guard([&] {
    if (path == nullptr) fail(NNP_INVALID_ARGUMENT, "load_plugin: path is NULL");
    PluginRegistry::instance().load(path);
  });
}
int32_t api_plugin_count() {
  int32_t count = 0;
  guard([&] { count = registry().plugin_count(); });
  return count;
}
nnp_status api_plugin_info(int32_t i, nnp_plugin_info* info) {
  return guard([&] {
    info_arg(info, "plugin_info");
    const PluginRecord& record = registry().plugin(i);
    write_info(
        info, nnp_plugin_info{0, record.path.c_str(), record.name.c_str(), record.version.c_str(),
                              record.loaded ? 1 : 0, record.status, record.reason.c_str(), record.description.c_str()});
  });
}
int32_t api_backend_count() {
  int32_t count = 0;
  guard([&] { count = registry().backend_count(); });
  return count;
}
nnp_status api_backend_info(int32_t i, nnp_backend_info* info) {
  return guard([&] {
    info_arg(info, "backend_info");
    const BackendRecord& backend = registry().backend(i);
    // The reason string must outlive this call: the backend owns it.
    const char* reason = "";
    if (backend.device_count() == 0 && backend.table().unavailable_reason) {
      const char* text = backend.table().unavailable_reason(backend.table().state);
      if (text) reason = text;
    }
    write_info(info, nnp_backend_info{0, backend.name().c_str(), backend.plugin_path().c_str(), backend.table().score,
                                      backend.device_count(), reason, backend.table().flags});
  });
}
nnp_status api_plugin_search_path(char* buf, size_t size, size_t* needed) {
  return guard([&] {
    std::string joined;
    for (const std::string& folder : PluginRegistry::instance().search_folders())
      joined += (joined.empty() ? "" : ":") + folder;
    copy_string(joined, buf, size, needed);
  });
}
nnp_status api_device_parse(const char* name, nnp_device* out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "device_parse: output is NULL");
    *out = parse_device(name);
  });
}
nnp_status api_device_name(nnp_device device, char* buf, size_t size, size_t* needed) {
  return guard([&] {
    check_device("device_name", device);
    copy_string(device_name(device), buf, size, needed);
  });
}
nnp_status api_device_info(nnp_device device, nnp_device_info* info) {
  return guard([&] {
    info_arg(info, "device_info");
    check_device("device_info", device);
    const BackendRecord& backend = backend_of(device);
    nnp_device_info full{};
    full.struct_size = sizeof(full);
    check_plugin_status(backend.table().device_info(backend.table().state, device.index, &full), backend.name().c_str(),
                        "device_info");
    full.backend = backend.name().c_str();
    if (full.description == nullptr) full.description = "";
    write_info(info, full);
  });
}
nnp_status api_synchronize(nnp_device device) {
  return guard([&] {
    check_device("synchronize", device);
    const BackendRecord& backend = backend_of(device);
    check_plugin_status(backend.table().synchronize(backend.table().state, device.index), backend.name().c_str(),
                        "synchronize");
  });
}

// ---- tensor handles ----
void api_tensor_retain(nnp_tensor* t) {
  if (t) retain(t);
}
void api_tensor_release(nnp_tensor* t) {
  if (t) release(t);
}
int32_t api_tensor_ndim(const nnp_tensor* t) { return t ? t->shape.ndim : 0; }
const int64_t* api_tensor_shape(const nnp_tensor* t) { return t ? t->shape.d : nullptr; }
const int64_t* api_tensor_strides(const nnp_tensor* t) { return t ? t->strides.d : nullptr; }
int64_t api_tensor_offset(const nnp_tensor* t) { return t ? t->offset : 0; }
int64_t api_tensor_numel(const nnp_tensor* t) { return t ? t->numel : 0; }
nnp_dtype api_tensor_dtype(const nnp_tensor* t) { return t ? t->dtype : -1; }
nnp_device api_tensor_device(const nnp_tensor* t) { return t ? t->device : nnp_device{-1, -1}; }
int32_t api_tensor_is_contiguous(const nnp_tensor* t) { return t && t->is_contiguous() ? 1 : 0; }
void* api_tensor_data(const nnp_tensor* t) { return t ? t->data() : nullptr; }

// ---- creation ----
nnp_status api_empty(const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "empty") = empty(Dims::from_user("empty", shape, ndim), dtype, device).take(); });
}
nnp_status api_full(const int64_t* shape, int32_t ndim, double value, nnp_dtype dtype, nnp_device device,
                    nnp_tensor** out) {
  return guard(
      [&] { *out_arg(out, "full") = full(Dims::from_user("full", shape, ndim), value, dtype, device).take(); });
}
nnp_status api_arange(double start, double end, double step, nnp_dtype dtype, nnp_device device, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "arange") = arange(start, end, step, dtype, device).take(); });
}
nnp_status api_from_host(const void* data, const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device,
                         nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "from_host") = from_host(data, Dims::from_user("from_host", shape, ndim), dtype, device).take();
  });
}
nnp_status api_random(nnp_random_kind kind, double a, double b, const int64_t* shape, int32_t ndim, nnp_dtype dtype,
                      nnp_device device, nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "random") = random(kind, a, b, Dims::from_user("random", shape, ndim), dtype, device).take();
  });
}
void api_manual_seed(uint64_t seed) { manual_seed(seed); }
void api_get_rng_state(uint64_t* seed, uint64_t* offset) { get_rng_state(seed, offset); }
void api_set_rng_state(uint64_t seed, uint64_t offset) { set_rng_state(seed, offset); }

// ---- data movement ----
nnp_status api_copy_to_host(const nnp_tensor* t, void* dst, size_t bytes) {
  return guard([&] { copy_to_host(arg(t, "copy_to_host", "t"), dst, bytes); });
}
nnp_status api_copy_into(nnp_tensor* dst, const nnp_tensor* src) {
  return guard([&] {
    arg(dst, "copy_into", "dst");
    autograd::copy_into(*dst, arg(src, "copy_into", "src"));
  });
}
nnp_status api_to(const nnp_tensor* t, nnp_device device, nnp_dtype dtype, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "to") = autograd::to(arg(t, "to", "t"), device, dtype).take(); });
}

// ---- views ----
nnp_status api_view(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "view") = autograd::view(arg(t, "view", "t"), shape, ndim).take(); });
}
nnp_status api_reshape(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "reshape") = autograd::reshape(arg(t, "reshape", "t"), shape, ndim).take(); });
}
nnp_status api_transpose(const nnp_tensor* t, int32_t dim0, int32_t dim1, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "transpose") = autograd::transpose(arg(t, "transpose", "t"), dim0, dim1).take(); });
}
nnp_status api_permute(const nnp_tensor* t, const int32_t* dims, int32_t ndim, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "permute") = autograd::permute(arg(t, "permute", "t"), dims, ndim).take(); });
}
nnp_status api_slice(const nnp_tensor* t, int32_t dim, int64_t start, int64_t end, int64_t step, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "slice") = autograd::slice(arg(t, "slice", "t"), dim, start, end, step).take(); });
}
nnp_status api_expand(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "expand") = autograd::expand(arg(t, "expand", "t"), shape, ndim).take(); });
}
nnp_status api_squeeze(const nnp_tensor* t, int32_t dim, int32_t all_dims, nnp_tensor** out) {
  return guard(
      [&] { *out_arg(out, "squeeze") = autograd::squeeze(arg(t, "squeeze", "t"), dim, all_dims != 0).take(); });
}
nnp_status api_unsqueeze(const nnp_tensor* t, int32_t dim, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "unsqueeze") = autograd::unsqueeze(arg(t, "unsqueeze", "t"), dim).take(); });
}
nnp_status api_contiguous(const nnp_tensor* t, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "contiguous") = autograd::contiguous(arg(t, "contiguous", "t")).take(); });
}
nnp_status api_clone(const nnp_tensor* t, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "clone") = autograd::clone(arg(t, "clone", "t")).take(); });
}

// ---- compute ----
nnp_status api_unary(nnp_unary_op op, const nnp_tensor* x, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "unary") = autograd::unary(op, arg(x, "unary", "x")).take(); });
}
nnp_status api_binary(nnp_binary_op op, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return guard(
      [&] { *out_arg(out, "binary") = autograd::binary(op, arg(a, "binary", "a"), arg(b, "binary", "b")).take(); });
}
nnp_status api_where(const nnp_tensor* cond, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "where") =
        autograd::where(arg(cond, "where", "cond"), arg(a, "where", "a"), arg(b, "where", "b")).take();
  });
}
nnp_status api_reduce(nnp_reduce_op op, const nnp_tensor* x, const int32_t* dims, int32_t ndims, int32_t keepdim,
                      double correction, nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "reduce") = autograd::reduce(op, arg(x, "reduce", "x"), dims, ndims, keepdim != 0, correction).take();
  });
}
nnp_status api_matmul(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out) {
  return guard(
      [&] { *out_arg(out, "matmul") = autograd::matmul(arg(a, "matmul", "a"), arg(b, "matmul", "b")).take(); });
}
nnp_status api_softmax(const nnp_tensor* x, int32_t dim, int32_t log, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "softmax") = autograd::softmax(arg(x, "softmax", "x"), dim, log != 0).take(); });
}
nnp_status api_cat(const nnp_tensor* const* tensors, int32_t count, int32_t dim, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "cat") = autograd::cat(tensors, count, dim).take(); });
}
nnp_status api_index_select(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "index_select") =
        autograd::index_select(arg(x, "index_select", "x"), dim, arg(index, "index_select", "index")).take();
  });
}
nnp_status api_gather(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "gather") = autograd::gather(arg(x, "gather", "x"), dim, arg(index, "gather", "index")).take();
  });
}
nnp_status api_scatter_add(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, const nnp_tensor* src,
                           nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "scatter_add") =
        autograd::scatter_add(arg(x, "scatter_add", "x"), dim, arg(index, "scatter_add", "index"),
                              arg(src, "scatter_add", "src"))
            .take();
  });
}

// ---- autograd ----
nnp_status api_set_requires_grad(nnp_tensor* t, int32_t value) {
  return guard([&] {
    arg(t, "set_requires_grad", "t");
    autograd::set_requires_grad(*t, value != 0);
  });
}
int32_t api_requires_grad(const nnp_tensor* t) { return t && autograd::requires_grad(*t) ? 1 : 0; }
int32_t api_is_leaf(const nnp_tensor* t) { return !t || autograd::is_leaf(*t) ? 1 : 0; }
nnp_status api_grad(const nnp_tensor* t, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "grad") = autograd::grad(arg(t, "grad", "t")).take(); });
}
nnp_status api_set_grad(nnp_tensor* t, const nnp_tensor* grad) {
  return guard([&] {
    arg(t, "set_grad", "t");
    autograd::set_grad(*t, grad);
  });
}
nnp_status api_retain_grad(nnp_tensor* t) {
  return guard([&] {
    arg(t, "retain_grad", "t");
    autograd::retain_grad(*t);
  });
}
nnp_status api_detach(const nnp_tensor* t, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "detach") = autograd::detach(arg(t, "detach", "t")).take(); });
}
const char* api_grad_fn_name(const nnp_tensor* t) { return t ? autograd::grad_fn_name(*t) : ""; }
nnp_status api_backward(const nnp_tensor* t, const nnp_tensor* grad, int32_t retain_graph) {
  return guard([&] {
    std::vector<TensorRef> roots{TensorRef::share(&arg(t, "backward", "t"))};
    std::vector<TensorRef> grads{grad ? TensorRef::share(grad) : TensorRef()};
    autograd::backward(roots, std::move(grads), retain_graph != 0);
  });
}
int32_t api_set_grad_enabled(int32_t enabled) {
  bool previous = autograd::grad_enabled();
  autograd::set_grad_enabled(enabled != 0);
  return previous ? 1 : 0;
}
int32_t api_is_grad_enabled() { return autograd::grad_enabled() ? 1 : 0; }
nnp_status api_register_tensor_hook(nnp_tensor* t, nnp_tensor_hook_fn fn, void* user_data, void (*release_fn)(void*),
                                    nnp_hook_handle** out) {
  // Owns user_data from here on, whatever happens.
  std::shared_ptr<void> data(user_data, [release_fn](void* p) {
    if (release_fn) release_fn(p);
  });
  return guard([&] {
    if (out) *out = nullptr;
    arg(t, "register_tensor_hook", "t");
    if (fn == nullptr || out == nullptr) fail(NNP_INVALID_ARGUMENT, "register_tensor_hook: fn and out are required");
    *out = autograd::register_hook(*t, [fn, data](const Tensor& grad) {
      nnp_tensor* replacement = nullptr;
      nnp_status status = fn(&grad, &replacement, data.get());
      TensorRef owned = TensorRef::adopt(replacement);
      if (status != NNP_OK) check_plugin_status(status, "tensor hook", "tensor hook");
      return owned;
    });
  });
}
void api_hook_remove(nnp_hook_handle* handle) {
  if (handle) handle->remove();
}
void api_hook_release(nnp_hook_handle* handle) {
  if (handle) release(handle);
}
nnp_status api_function_apply(const nnp_function* fn, void* user_data, const nnp_tensor* const* inputs,
                              int32_t n_inputs, nnp_tensor** outputs, int32_t n_outputs) {
  return guard([&] {
    if (fn == nullptr || outputs == nullptr) fail(NNP_INVALID_ARGUMENT, "function_apply: fn and outputs are required");
    for (int32_t i = 0; i < n_outputs; ++i) outputs[i] = nullptr;
    std::vector<TensorRef> results = autograd::apply_function(*fn, user_data, inputs, n_inputs, n_outputs);
    for (int32_t i = 0; i < n_outputs; ++i) outputs[i] = results[static_cast<size_t>(i)].take();
  });
}
nnp_status api_function_save(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count) {
  return guard([&] { autograd::save_for_backward(ctx, tensors, count); });
}
int32_t api_function_saved_count(const nnp_function_ctx* ctx) { return autograd::saved_count(ctx); }
nnp_status api_function_saved(const nnp_function_ctx* ctx, int32_t i, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "function_saved") = autograd::saved(ctx, i).take(); });
}

// ---- lists ----
const nnp_list& list_arg(const nnp_list* l, const char* op) {
  if (l == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": list is NULL");
  return *l;
}
const nnp_list::Entry* entry_at(const nnp_list* l, int32_t i) {
  if (l == nullptr || i < 0 || i >= static_cast<int32_t>(l->entries.size())) return nullptr;
  return &l->entries[static_cast<size_t>(i)];
}
nnp_status api_list_create(nnp_list** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "list_create: out is NULL");
    *out = new nnp_list();
  });
}
void api_list_release(nnp_list* l) { delete l; }
int32_t api_list_size(const nnp_list* l) { return l ? static_cast<int32_t>(l->entries.size()) : 0; }
const char* api_list_name(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->name.c_str() : nullptr;
}
nnp_tensor* api_list_tensor(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->tensor.get() : nullptr;
}
nnp_module* api_list_module(const nnp_list* l, int32_t i) {
  const nnp_list::Entry* e = entry_at(l, i);
  return e ? e->module.get() : nullptr;
}
int32_t api_list_find(const nnp_list* l, const char* name) { return l && name ? l->find(name) : -1; }
nnp_status api_list_append_tensor(nnp_list* l, const char* name, const nnp_tensor* t) {
  return guard([&] {
    list_arg(l, "list_append_tensor");
    if (name == nullptr) fail(NNP_INVALID_ARGUMENT, "list_append_tensor: name is NULL");
    l->add(name, t ? TensorRef::share(t) : TensorRef());
  });
}
nnp_status api_list_remove(nnp_list* l, int32_t i) {
  return guard([&] {
    list_arg(l, "list_remove");
    if (i < 0 || i >= static_cast<int32_t>(l->entries.size()))
      fail(NNP_INVALID_ARGUMENT, "list_remove: index ", i, " is out of range (", l->entries.size(), " entries)");
    l->entries.erase(l->entries.begin() + i);
  });
}

// ---- modules ----
nnp::core::nn::Module& module_arg(const nnp_module* m, const char* op) {
  if (m == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": module is NULL");
  return *const_cast<nnp_module*>(m);
}
template <typename Fill>
nnp_status list_result(nnp_list** out, const char* op, Fill fill) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": out is NULL");
    *out = nullptr;
    auto list = std::make_unique<nnp_list>();
    fill(*list);
    *out = list.release();
  });
}
std::shared_ptr<void> owned_user_data(void* user_data, void (*release_fn)(void*)) {
  return std::shared_ptr<void>(user_data, [release_fn](void* p) {
    if (release_fn) release_fn(p);
  });
}
nnp_status api_module_create(const char* type_name, const nnp_module_vtable* vtable, void* self, nnp_module** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "module_create: out is NULL");
    *out = nn::create_module(type_name, vtable, self).take();
  });
}
nnp_status api_container_create(nnp_container_kind kind, nnp_module** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "container_create: out is NULL");
    *out = nn::create_container(kind).take();
  });
}
void api_module_retain(nnp_module* m) {
  if (m) retain(m);
}
void api_module_release(nnp_module* m) {
  if (m) release(m);
}
void api_module_detach_self(nnp_module* m) {
  if (m) {
    m->self_detached = true;
    m->self = nullptr;
  }
}
const char* api_module_type_name(const nnp_module* m) { return m ? m->type_name.c_str() : ""; }
nnp_status api_register_parameter(nnp_module* m, const char* name, nnp_tensor* t, int32_t requires_grad) {
  return guard([&] { nn::register_parameter(module_arg(m, "register_parameter"), name, t, requires_grad != 0); });
}
nnp_status api_register_buffer(nnp_module* m, const char* name, nnp_tensor* t, int32_t persistent) {
  return guard([&] { nn::register_buffer(module_arg(m, "register_buffer"), name, t, persistent != 0); });
}
nnp_status api_register_module(nnp_module* m, const char* name, nnp_module* child) {
  return guard([&] { nn::register_module(module_arg(m, "register_module"), name, child); });
}
nnp_status api_get_parameter(const nnp_module* m, const char* path, nnp_tensor** out) {
  return guard([&] {
    *out_arg(out, "get_parameter") = nn::get_parameter(module_arg(m, "get_parameter"), path ? path : "").take();
  });
}
nnp_status api_get_buffer(const nnp_module* m, const char* path, nnp_tensor** out) {
  return guard(
      [&] { *out_arg(out, "get_buffer") = nn::get_buffer(module_arg(m, "get_buffer"), path ? path : "").take(); });
}
nnp_status api_get_submodule(const nnp_module* m, const char* path, nnp_module** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "get_submodule: out is NULL");
    *out = nullptr;
    *out = nn::get_submodule(module_arg(m, "get_submodule"), path ? path : "").take();
  });
}
nnp_status api_named_parameters(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                                nnp_list** out) {
  return list_result(out, "named_parameters", [&](nnp_list& l) {
    nn::named_parameters(module_arg(m, "named_parameters"), prefix ? prefix : "", recurse != 0, remove_duplicate != 0,
                         l);
  });
}
nnp_status api_named_buffers(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                             nnp_list** out) {
  return list_result(out, "named_buffers", [&](nnp_list& l) {
    nn::named_buffers(module_arg(m, "named_buffers"), prefix ? prefix : "", recurse != 0, remove_duplicate != 0, l);
  });
}
nnp_status api_named_children(const nnp_module* m, nnp_list** out) {
  return list_result(out, "named_children",
                     [&](nnp_list& l) { nn::named_children(module_arg(m, "named_children"), l); });
}
nnp_status api_named_modules(const nnp_module* m, const char* prefix, int32_t remove_duplicate, nnp_list** out) {
  return list_result(out, "named_modules", [&](nnp_list& l) {
    nn::named_modules(module_arg(m, "named_modules"), prefix ? prefix : "", remove_duplicate != 0, l);
  });
}
nnp_status api_module_apply(nnp_module* m, nnp_status (*fn)(nnp_module*, void*), void* user_data) {
  return guard([&] { nn::apply(module_arg(m, "apply"), fn, user_data); });
}
nnp_status api_module_train(nnp_module* m, int32_t mode) {
  return guard([&] { nn::train(module_arg(m, "train"), mode != 0); });
}
int32_t api_module_is_training(const nnp_module* m) { return m && m->training ? 1 : 0; }
nnp_status api_module_requires_grad(nnp_module* m, int32_t value) {
  return guard([&] { nn::requires_grad(module_arg(m, "requires_grad_"), value != 0); });
}
nnp_status api_module_zero_grad(nnp_module* m, int32_t set_to_none) {
  return guard([&] { nn::zero_grad(module_arg(m, "zero_grad"), set_to_none != 0); });
}
nnp_status api_module_to(nnp_module* m, const nnp_device* device, nnp_dtype dtype) {
  return guard([&] {
    if (device) check_device("to", *device);
    nn::to(module_arg(m, "to"), device, dtype);
  });
}
nnp_status api_module_to_empty(nnp_module* m, nnp_device device) {
  return guard([&] {
    check_device("to_empty", device);
    nn::to_empty(module_arg(m, "to_empty"), device);
  });
}
nnp_status api_module_call(nnp_module* m, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** out) {
  return guard([&] {
    nnp_tensor** result = out_arg(out, "module_call");
    if (n_inputs < 0 || (n_inputs > 0 && inputs == nullptr)) fail(NNP_INVALID_ARGUMENT, "module_call: bad inputs");
    std::vector<TensorRef> args;
    for (int32_t i = 0; i < n_inputs; ++i) args.push_back(TensorRef::share(&arg(inputs[i], "module_call", "input")));
    *result = nn::call(module_arg(m, "module_call"), args).take();
  });
}
nnp_status api_module_register_hook(nnp_module* m, nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                    void (*release_fn)(void*), int32_t prepend, nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "module_register_hook: out is NULL");
    *out = nn::register_hook(module_arg(m, "module_register_hook"), kind, fn, data, prepend != 0);
  });
}
nnp_status api_register_global_module_hook(nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                           void (*release_fn)(void*), nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "register_global_module_hook: out is NULL");
    *out = nn::register_global_hook(kind, fn, data);
  });
}
nnp_status api_module_repr(const nnp_module* m, char* buf, size_t size, size_t* needed) {
  return guard([&] { copy_string(nn::repr(module_arg(m, "module_repr")), buf, size, needed); });
}
nnp_status api_state_dict(nnp_module* m, const char* prefix, int32_t keep_vars, nnp_list** out) {
  return list_result(out, "state_dict", [&](nnp_list& l) {
    nn::state_dict(module_arg(m, "state_dict"), prefix ? prefix : "", keep_vars != 0, l);
  });
}
nnp_status api_load_state_dict(nnp_module* m, const nnp_list* state, int32_t strict, int32_t assign, nnp_list** missing,
                               nnp_list** unexpected) {
  return guard([&] {
    if (missing) *missing = nullptr;
    if (unexpected) *unexpected = nullptr;
    auto missing_keys = std::make_unique<nnp_list>();
    auto unexpected_keys = std::make_unique<nnp_list>();
    nn::load_state_dict(module_arg(m, "load_state_dict"), list_arg(state, "load_state_dict"), strict != 0, assign != 0,
                        *missing_keys, *unexpected_keys);
    if (missing) *missing = missing_keys.release();
    if (unexpected) *unexpected = unexpected_keys.release();
  });
}
nnp_status api_register_state_hook(nnp_module* m, nnp_state_hook_kind kind, nnp_state_hook_fn fn, void* user_data,
                                   void (*release_fn)(void*), nnp_hook_handle** out) {
  std::shared_ptr<void> data = owned_user_data(user_data, release_fn);
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "register_state_hook: out is NULL");
    *out = nn::register_state_hook(module_arg(m, "register_state_hook"), kind, fn, data);
  });
}

// ---- files ----
const char* path_arg(const char* path, const char* op) {
  if (path == nullptr || *path == '\0') fail(NNP_INVALID_ARGUMENT, op, ": path is empty");
  return path;
}
nnp_status api_save_safetensors(const nnp_list* tensors, const char* path, const char* const* keys,
                                const char* const* values, int32_t count) {
  return guard([&] {
    io::Metadata metadata;
    for (int32_t i = 0; i < count; ++i) {
      if (!keys || !values || !keys[i] || !values[i])
        fail(NNP_INVALID_ARGUMENT, "save_safetensors: metadata entry ", i, " is NULL");
      metadata[keys[i]] = values[i];
    }
    io::save_safetensors(list_arg(tensors, "save_safetensors"), path_arg(path, "save_safetensors"), metadata);
  });
}
nnp_status api_load_safetensors(const char* path, nnp_device device, nnp_list** out) {
  return list_result(out, "load_safetensors", [&](nnp_list& l) {
    check_device("load_safetensors", device);
    io::load_safetensors(path_arg(path, "load_safetensors"), device, l, nullptr);
  });
}
nnp_status api_safetensors_metadata(const char* path, const char* key, char* buf, size_t size, size_t* needed) {
  return guard([&] {
    if (key == nullptr) fail(NNP_INVALID_ARGUMENT, "safetensors_metadata: key is NULL");
    io::Metadata metadata;
    nnp_list ignored;
    io::load_safetensors(path_arg(path, "safetensors_metadata"), parse_device("cpu"), ignored, &metadata);
    auto it = metadata.find(key);
    if (it == metadata.end()) fail(NNP_NOT_FOUND, path, ": __metadata__ has no key '", key, "'");
    copy_string(it->second, buf, size, needed);
  });
}
nnp_status api_module_save(nnp_module* m, const char* path) {
  return guard([&] {
    nnp_list state;
    nn::state_dict(module_arg(m, "module_save"), "", false, state);
    io::save_safetensors(state, path_arg(path, "module_save"), {{"format", "pt"}, {"nnplug", NNP_VERSION_STRING}});
  });
}
nnp_status api_module_load(nnp_module* m, const char* path, int32_t strict, nnp_list** missing, nnp_list** unexpected) {
  return guard([&] {
    if (missing) *missing = nullptr;
    if (unexpected) *unexpected = nullptr;
    nn::Module& module = module_arg(m, "module_load");
    nnp_list state;
    io::load_safetensors(path_arg(path, "module_load"), parse_device("cpu"), state, nullptr);
    auto missing_keys = std::make_unique<nnp_list>();
    auto unexpected_keys = std::make_unique<nnp_list>();
    nn::load_state_dict(module, state, strict != 0, false, *missing_keys, *unexpected_keys);
    if (missing) *missing = missing_keys.release();
    if (unexpected) *unexpected = unexpected_keys.release();
  });
}

// ---- attributes ----
nnp_attrs& attrs_arg(const nnp_attrs* a, const char* op) {
  if (a == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": attrs is NULL");
  return *const_cast<nnp_attrs*>(a);
}
template <typename Fill>
nnp_status set_attr(nnp_attrs* a, const char* name, const char* op, Fill fill) {
  return guard([&] {
    nnp_attrs& attrs = attrs_arg(a, op);
    if (name == nullptr || *name == '\0') fail(NNP_INVALID_ARGUMENT, op, ": name is empty");
    nn::AttrValue v;
    fill(v);
    attrs.values[name] = std::move(v);
  });
}
const nn::AttrValue& get_attr(const nnp_attrs* a, const char* name, const char* op, nnp_attr_type type) {
  nnp_attrs& attrs = attrs_arg(a, op);
  auto it = attrs.values.find(name ? name : "");
  if (it == attrs.values.end()) fail(NNP_NOT_FOUND, op, ": no attribute '", name ? name : "", "'");
  bool ok = it->second.type == type || (type == NNP_ATTR_FLOAT && it->second.type == NNP_ATTR_INT);
  if (!ok)
    fail(NNP_DTYPE_MISMATCH, op, ": attribute '", name, "' is a ", nn::attr_type_name(it->second.type), ", not a ",
         nn::attr_type_name(type));
  return it->second;
}
nnp_status api_attrs_create(nnp_attrs** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "attrs_create: out is NULL");
    *out = new nnp_attrs();
  });
}
void api_attrs_release(nnp_attrs* a) { delete a; }
nnp_status api_attrs_set_int(nnp_attrs* a, const char* name, int64_t value) {
  return set_attr(a, name, "attrs_set_int", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_INT;
    v.i = value;
  });
}
nnp_status api_attrs_set_float(nnp_attrs* a, const char* name, double value) {
  return set_attr(a, name, "attrs_set_float", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_FLOAT;
    v.f = value;
  });
}
nnp_status api_attrs_set_bool(nnp_attrs* a, const char* name, int32_t value) {
  return set_attr(a, name, "attrs_set_bool", [&](nn::AttrValue& v) {
    v.type = NNP_ATTR_BOOL;
    v.b = value != 0;
  });
}
nnp_status api_attrs_set_string(nnp_attrs* a, const char* name, const char* value) {
  return set_attr(a, name, "attrs_set_string", [&](nn::AttrValue& v) {
    if (value == nullptr) fail(NNP_INVALID_ARGUMENT, "attrs_set_string: value is NULL");
    v.type = NNP_ATTR_STRING;
    v.s = value;
  });
}
nnp_status api_attrs_set_ints(nnp_attrs* a, const char* name, const int64_t* values, int32_t count) {
  return set_attr(a, name, "attrs_set_ints", [&](nn::AttrValue& v) {
    if (count < 0 || (count > 0 && values == nullptr)) fail(NNP_INVALID_ARGUMENT, "attrs_set_ints: bad values");
    v.type = NNP_ATTR_INTS;
    v.ints.assign(values, values + count);
  });
}
nnp_status api_attrs_get_int(const nnp_attrs* a, const char* name, int64_t* out) {
  return guard([&] { *out = get_attr(a, name, "attrs_get_int", NNP_ATTR_INT).i; });
}
nnp_status api_attrs_get_float(const nnp_attrs* a, const char* name, double* out) {
  return guard([&] {
    const nn::AttrValue& v = get_attr(a, name, "attrs_get_float", NNP_ATTR_FLOAT);
    *out = v.type == NNP_ATTR_INT ? static_cast<double>(v.i) : v.f;
  });
}
nnp_status api_attrs_get_bool(const nnp_attrs* a, const char* name, int32_t* out) {
  return guard([&] { *out = get_attr(a, name, "attrs_get_bool", NNP_ATTR_BOOL).b ? 1 : 0; });
}
nnp_status api_attrs_get_string(const nnp_attrs* a, const char* name, const char** out) {
  return guard([&] { *out = get_attr(a, name, "attrs_get_string", NNP_ATTR_STRING).s.c_str(); });
}
nnp_status api_attrs_get_ints(const nnp_attrs* a, const char* name, int64_t* values, int32_t capacity, int32_t* count) {
  return guard([&] {
    const nn::AttrValue& v = get_attr(a, name, "attrs_get_ints", NNP_ATTR_INTS);
    if (count) *count = static_cast<int32_t>(v.ints.size());
    for (int32_t i = 0; values && i < capacity && i < static_cast<int32_t>(v.ints.size()); ++i)
      values[i] = v.ints[static_cast<size_t>(i)];
  });
}

// ---- layer registry ----
int32_t api_layer_type_count() {
  int32_t count = 0;
  guard([&] {
    PluginRegistry::instance().discover();
    count = nn::LayerRegistry::instance().count();
  });
  return count;
}
nnp_status api_layer_type_info(int32_t i, nnp_layer_type* out) {
  return guard([&] {
    info_arg(out, "layer_type_info");
    PluginRegistry::instance().discover();
    write_info(out, nn::LayerRegistry::instance().at(i).c_type);
  });
}
nnp_status api_layer_create(const char* type, const nnp_attrs* attrs, nnp_module** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "layer_create: out is NULL");
    *out = nullptr;
    if (type == nullptr) fail(NNP_INVALID_ARGUMENT, "layer_create: type is NULL");
    *out = nn::LayerRegistry::instance().create(type, attrs).take();
  });
}

// ---- optimizers ----
nnp_optimizer& optimizer_arg(const nnp_optimizer* o, const char* op) {
  if (o == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": optimizer is NULL");
  return *const_cast<nnp_optimizer*>(o);
}
nnp_optimizer::Group& group_arg(const nnp_optimizer* o, int32_t group, const char* op) {
  nnp_optimizer& opt = optimizer_arg(o, op);
  if (group < 0 || group >= static_cast<int32_t>(opt.groups.size()))
    fail(NNP_INVALID_ARGUMENT, op, ": group ", group, " is out of range (", opt.groups.size(), " groups)");
  return opt.groups[static_cast<size_t>(group)];
}
nnp_status api_optimizer_create(const char* kind, const nnp_list* params, const nnp_attrs* options,
                                nnp_optimizer** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "optimizer_create: out is NULL");
    *out = nullptr;
    if (kind == nullptr) fail(NNP_INVALID_ARGUMENT, "optimizer_create: kind is NULL");
    *out = optim::create(kind, list_arg(params, "optimizer_create"), options).release();
  });
}
void api_optimizer_release(nnp_optimizer* o) { delete o; }
nnp_status api_optimizer_add_param_group(nnp_optimizer* o, const nnp_list* params, const nnp_attrs* options) {
  return guard([&] {
    optim::add_param_group(optimizer_arg(o, "add_param_group"), list_arg(params, "add_param_group"), options);
  });
}
int32_t api_optimizer_group_count(const nnp_optimizer* o) { return o ? static_cast<int32_t>(o->groups.size()) : 0; }
nnp_status api_optimizer_get_option(const nnp_optimizer* o, int32_t group, const char* name, double* out) {
  return guard([&] {
    const auto& options = group_arg(o, group, "optimizer_get_option").options;
    auto it = options.find(name ? name : "");
    if (it == options.end()) fail(NNP_NOT_FOUND, "optimizer_get_option: no option '", name ? name : "", "'");
    *out = it->second;
  });
}
nnp_status api_optimizer_set_option(nnp_optimizer* o, int32_t group, const char* name, double value) {
  return guard([&] {
    auto& options = group_arg(o, group, "optimizer_set_option").options;
    auto it = options.find(name ? name : "");
    if (it == options.end()) fail(NNP_NOT_FOUND, "optimizer_set_option: no option '", name ? name : "", "'");
    it->second = value;
  });
}
nnp_status api_optimizer_step(nnp_optimizer* o) {
  return guard([&] { optim::step(optimizer_arg(o, "step")); });
}
nnp_status api_optimizer_zero_grad(nnp_optimizer* o, int32_t set_to_none) {
  return guard([&] { optim::zero_grad(optimizer_arg(o, "zero_grad"), set_to_none != 0); });
}
nnp_status api_optimizer_state_dict(const nnp_optimizer* o, nnp_list** out) {
  return list_result(out, "optimizer_state_dict",
                     [&](nnp_list& l) { optim::state_dict(optimizer_arg(o, "optimizer_state_dict"), l); });
}
nnp_status api_optimizer_load_state_dict(nnp_optimizer* o, const nnp_list* state) {
  return guard([&] {
    optim::load_state_dict(optimizer_arg(o, "optimizer_load_state_dict"), list_arg(state, "optimizer_load_state_dict"));
  });
}
nnp_status api_clip_grad_norm(const nnp_list* params, double max_norm, double norm_type, double* total) {
  return guard([&] {
    double norm = optim::clip_grad_norm(list_arg(params, "clip_grad_norm"), max_norm, norm_type);
    if (total) *total = norm;
  });
}

// ---- model specs ----
nnp_status api_model_from_spec(const char* json_text, nnp_module** out) {
  return guard([&] {
    if (out == nullptr || json_text == nullptr) fail(NNP_INVALID_ARGUMENT, "model_from_spec: NULL argument");
    *out = nullptr;
    *out = io::model_from_spec(json_text, "spec").take();
  });
}
nnp_status api_model_from_spec_file(const char* path, nnp_module** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "model_from_spec_file: out is NULL");
    *out = nullptr;
    *out = io::model_from_spec_file(path_arg(path, "model_from_spec_file")).take();
  });
}

nnp_status api_device_stream(nnp_device device, void** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "device_stream: out is NULL");
    *out = nullptr;
    check_device("device_stream", device);
    *out = backend_of(device).context(device.index).stream;
  });
}
nnp_status api_layer_type_plugin(int32_t i, const char** out) {
  return guard([&] {
    if (out == nullptr) fail(NNP_INVALID_ARGUMENT, "layer_type_plugin: out is NULL");
    PluginRegistry::instance().discover();
    *out = nn::LayerRegistry::instance().at(i).plugin.c_str();
  });
}
nnp_status api_to_dlpack(const nnp_tensor* t, DLManagedTensor** out) {
  return guard([&] { *out_arg(out, "to_dlpack") = interop::to_dlpack(arg(t, "to_dlpack", "t")); });
}
nnp_status api_to_dlpack_versioned(const nnp_tensor* t, DLManagedTensorVersioned** out) {
  return guard(
      [&] { *out_arg(out, "to_dlpack_versioned") = interop::to_dlpack_versioned(arg(t, "to_dlpack_versioned", "t")); });
}
nnp_status api_from_dlpack(DLManagedTensor* src, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "from_dlpack") = interop::from_dlpack(src).take(); });
}
nnp_status api_from_dlpack_versioned(DLManagedTensorVersioned* src, nnp_tensor** out) {
  return guard([&] { *out_arg(out, "from_dlpack_versioned") = interop::from_dlpack_versioned(src).take(); });
}

const nnp_api kApi = {
    sizeof(nnp_api),
    NNP_ABI_MAJOR,
    NNP_ABI_MINOR,
    api_last_error,
    api_last_status,
    api_set_error,
    api_status_name,
    api_dtype_name,
    api_dtype_size,
    api_version,
    api_load_plugin,
    api_plugin_count,
    api_plugin_info,
    api_backend_count,
    api_backend_info,
    api_plugin_search_path,
    api_device_parse,
    api_device_name,
    api_device_info,
    api_synchronize,
    PluginRegistry::register_backend,
    api_tensor_retain,
    api_tensor_release,
    api_tensor_ndim,
    api_tensor_shape,
    api_tensor_strides,
    api_tensor_offset,
    api_tensor_numel,
    api_tensor_dtype,
    api_tensor_device,
    api_tensor_is_contiguous,
    api_tensor_data,
    api_empty,
    api_full,
    api_arange,
    api_from_host,
    api_random,
    api_manual_seed,
    api_get_rng_state,
    api_set_rng_state,
    api_copy_to_host,
    api_copy_into,
    api_to,
    api_view,
    api_reshape,
    api_transpose,
    api_permute,
    api_slice,
    api_expand,
    api_squeeze,
    api_unsqueeze,
    api_contiguous,
    api_clone,
    api_unary,
    api_binary,
    api_where,
    api_reduce,
    api_matmul,
    api_softmax,
    api_cat,
    api_index_select,
    api_gather,
    api_scatter_add,
    api_set_requires_grad,
    api_requires_grad,
    api_is_leaf,
    api_grad,
    api_set_grad,
    api_retain_grad,
    api_detach,
    api_grad_fn_name,
    api_backward,
    api_set_grad_enabled,
    api_is_grad_enabled,
    api_register_tensor_hook,
    api_hook_remove,
    api_hook_release,
    api_function_apply,
    api_function_save,
    api_function_saved_count,
    api_function_saved,
    api_list_create,
    api_list_release,
    api_list_size,
    api_list_name,
    api_list_tensor,
    api_list_module,
    api_list_find,
    api_list_append_tensor,
    api_list_remove,
    api_module_create,
    api_container_create,
    api_module_retain,
    api_module_release,
    api_module_detach_self,
    api_module_type_name,
    api_register_parameter,
    api_register_buffer,
    api_register_module,
    api_get_parameter,
    api_get_buffer,
    api_get_submodule,
    api_named_parameters,
    api_named_buffers,
    api_named_children,
    api_named_modules,
    api_module_apply,
    api_module_train,
    api_module_is_training,
    api_module_requires_grad,
    api_module_zero_grad,
    api_module_to,
    api_module_to_empty,
    api_module_call,
    api_module_register_hook,
    api_register_global_module_hook,
    api_module_repr,
    api_state_dict,
    api_load_state_dict,
    api_register_state_hook,
    api_save_safetensors,
    api_load_safetensors,
    api_safetensors_metadata,
    api_module_save,
    api_module_load,
    api_attrs_create,
    api_attrs_release,
    api_attrs_set_int,
    api_attrs_set_float,
    api_attrs_set_bool,
    api_attrs_set_string,
    api_attrs_set_ints,
    api_attrs_get_int,
    api_attrs_get_float,
    api_attrs_get_bool,
    api_attrs_get_string,
    api_attrs_get_ints,
    PluginRegistry::register_layer_type,
    api_layer_type_count,
    api_layer_type_info,
    api_layer_create,
    api_optimizer_create,
    api_optimizer_release,
    api_optimizer_add_param_group,
    api_optimizer_group_count,
    api_optimizer_get_option,
    api_optimizer_set_option,
    api_optimizer_step,
    api_optimizer_zero_grad,
    api_optimizer_state_dict,
    api_optimizer_load_state_dict,
    api_clip_grad_norm,
    api_model_from_spec,
    api_model_from_spec_file,
    // 1.1
    api_device_stream,
    api_layer_type_plugin,
    api_to_dlpack,
    api_to_dlpack_versioned,
    api_from_dlpack,
    api_from_dlpack_versioned,
};

}  // namespace

const nnp_api* api_table() { return &kApi; }

}  // namespace nnp::core

extern "C" NNP_EXPORT const nnp_api* nnp_get_api(uint32_t major, uint32_t minor) {
  if (major != NNP_ABI_MAJOR || minor > NNP_ABI_MINOR) {
    nnp::core::set_last_error(
        NNP_ABI_MISMATCH,
        nnp::core::str_cat("nnp_get_api: the caller asks for ABI ", major, ".", minor,
                           " but this libnnp implements ABI ", NNP_ABI_MAJOR, ".", NNP_ABI_MINOR,
                           major != NNP_ABI_MAJOR ? " (major versions differ)" : " (the caller's minor is newer)")
            .c_str());
    return nullptr;
  }
  return &nnp::core::kApi;
}
