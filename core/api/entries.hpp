// Every entry of the nnp_api table, declared once (as ONNX Runtime's
// ort_apis.h does). Each is defined in the adapter file of its concept in
// this folder; api_table.cpp puts them in the table by field name. An entry
// checks its arguments, calls the owner of the logic (ops, autograd, nn/,
// optim/, io/, the plugin registry) and turns exceptions into a status.
#pragma once

#include <nnp/plugin.h>

namespace nnp::core::api {

// errors.cpp: errors, names, versions
const char* last_error();
nnp_status last_status();
void set_error(nnp_status status, const char* message);
const char* status_name(nnp_status status);
const char* dtype_name(nnp_dtype dtype);
size_t dtype_size(nnp_dtype dtype);
const char* version();

// plugins.cpp: plugins, backends, devices
nnp_status load_plugin(const char* path);
int32_t plugin_count();
nnp_status plugin_info(int32_t i, nnp_plugin_info* info);
int32_t backend_count();
nnp_status backend_info(int32_t i, nnp_backend_info* info);
nnp_status backend_summary(int32_t i, nnp_backend_info* info);
nnp_status plugin_search_path(char* buf, size_t size, size_t* needed);
nnp_status device_parse(const char* name, nnp_device* out);
nnp_status device_name(nnp_device device, char* buf, size_t size, size_t* needed);
nnp_status device_info(nnp_device device, nnp_device_info* info);
nnp_status synchronize(nnp_device device);
nnp_status device_stream(nnp_device device, void** out);
nnp_status register_backend(nnp_plugin_host* host, const nnp_backend* backend);

// tensor.cpp: handles, creation, random numbers, data movement
void tensor_retain(nnp_tensor* t);
void tensor_release(nnp_tensor* t);
int32_t tensor_ndim(const nnp_tensor* t);
const int64_t* tensor_shape(const nnp_tensor* t);
const int64_t* tensor_strides(const nnp_tensor* t);
int64_t tensor_offset(const nnp_tensor* t);
int64_t tensor_numel(const nnp_tensor* t);
nnp_dtype tensor_dtype(const nnp_tensor* t);
nnp_device tensor_device(const nnp_tensor* t);
int32_t tensor_is_contiguous(const nnp_tensor* t);
void* tensor_data(const nnp_tensor* t);
nnp_status empty(const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device, nnp_tensor** out);
nnp_status full(const int64_t* shape, int32_t ndim, double value, nnp_dtype dtype, nnp_device device, nnp_tensor** out);
nnp_status arange(double start, double end, double step, nnp_dtype dtype, nnp_device device, nnp_tensor** out);
nnp_status from_host(const void* data, const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device,
                     nnp_tensor** out);
nnp_status random(nnp_random_kind kind, double a, double b, const int64_t* shape, int32_t ndim, nnp_dtype dtype,
                  nnp_device device, nnp_tensor** out);
void manual_seed(uint64_t seed);
void get_rng_state(uint64_t* seed, uint64_t* offset);
void set_rng_state(uint64_t seed, uint64_t offset);
nnp_status device_manual_seed(nnp_device device, uint64_t seed);
nnp_status device_get_rng_state(nnp_device device, uint64_t* seed, uint64_t* offset);
nnp_status device_set_rng_state(nnp_device device, uint64_t seed, uint64_t offset);
nnp_status copy_to_host(const nnp_tensor* t, void* dst, size_t bytes);
nnp_status copy_into(nnp_tensor* dst, const nnp_tensor* src);
nnp_status to(const nnp_tensor* t, nnp_device device, nnp_dtype dtype, nnp_tensor** out);

// ops.cpp: views and compute
nnp_status view(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out);
nnp_status reshape(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out);
nnp_status transpose(const nnp_tensor* t, int32_t dim0, int32_t dim1, nnp_tensor** out);
nnp_status permute(const nnp_tensor* t, const int32_t* dims, int32_t ndim, nnp_tensor** out);
nnp_status slice(const nnp_tensor* t, int32_t dim, int64_t start, int64_t end, int64_t step, nnp_tensor** out);
nnp_status expand(const nnp_tensor* t, const int64_t* shape, int32_t ndim, nnp_tensor** out);
nnp_status squeeze(const nnp_tensor* t, int32_t dim, int32_t all_dims, nnp_tensor** out);
nnp_status unsqueeze(const nnp_tensor* t, int32_t dim, nnp_tensor** out);
nnp_status contiguous(const nnp_tensor* t, nnp_tensor** out);
nnp_status clone(const nnp_tensor* t, nnp_tensor** out);
nnp_status unary(nnp_unary_op op, const nnp_tensor* x, nnp_tensor** out);
nnp_status binary(nnp_binary_op op, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
nnp_status where(const nnp_tensor* cond, const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
nnp_status reduce(nnp_reduce_op op, const nnp_tensor* x, const int32_t* dims, int32_t ndims, int32_t keepdim,
                  double correction, nnp_tensor** out);
nnp_status matmul(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
// quantize.cpp
nnp_status quantize_per_tensor(const nnp_tensor* x, double scale, int64_t zero_point, nnp_dtype dtype,
                               nnp_tensor** out);
nnp_status quantize_per_channel(const nnp_tensor* x, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                int64_t axis, nnp_dtype dtype, nnp_tensor** out);
nnp_status dequantize_per_tensor(const nnp_tensor* q, double scale, int64_t zero_point, nnp_tensor** out);
nnp_status dequantize_per_channel(const nnp_tensor* q, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                  int64_t axis, nnp_tensor** out);
nnp_status fake_quantize_per_tensor(const nnp_tensor* x, double scale, int64_t zero_point, int64_t quant_min,
                                    int64_t quant_max, nnp_tensor** out);
nnp_status fake_quantize_per_channel(const nnp_tensor* x, const nnp_tensor* scales, const nnp_tensor* zero_points,
                                     int64_t axis, int64_t quant_min, int64_t quant_max, nnp_tensor** out);
nnp_status matmul_i8(const nnp_tensor* a, const nnp_tensor* b, nnp_tensor** out);
nnp_status quantized_matmul(const nnp_tensor* x, double scale, int64_t zero_point, const nnp_tensor* w,
                            const nnp_tensor* col_scale, const nnp_tensor* bias, nnp_tensor** out);  // 1.19

// onnx.cpp (1.8)
nnp_status onnx_export(nnp_module* module, const nnp_tensor* const* inputs, int32_t n_inputs, const char* path,
                       const nnp_onnx_export_options* options);
nnp_status onnx_graph_add_node(nnp_onnx_graph* graph, const char* op_type, const char* domain,
                               const char* const* inputs, int32_t n_inputs, const char* const* outputs,
                               int32_t n_outputs, const nnp_attrs* attributes);
nnp_status onnx_graph_add_constant(nnp_onnx_graph* graph, const nnp_tensor* value, const char* name_hint,
                                   const char** name);
nnp_status onnx_graph_tensor_name(nnp_onnx_graph* graph, nnp_module* module, const char* tensor, const char** name);
nnp_status onnx_graph_new_name(nnp_onnx_graph* graph, const char* hint, const char** name);
int64_t onnx_graph_opset(const nnp_onnx_graph* graph);
nnp_status onnx_load(const char* path, nnp_module** out);
nnp_status module_compile(nnp_module* module, const nnp_tensor* const* example_inputs, int32_t n_inputs,
                          const nnp_compile_options* options, nnp_module** out);                        // 1.19
nnp_status module_compile_explain(const nnp_module* compiled, char* buf, size_t size, size_t* needed);  // 1.19
nnp_status module_layer_attrs(const nnp_module* m, const char** type, nnp_attrs** attrs);               // layers.cpp

// comm.cpp (1.10)
nnp_status register_comm(nnp_plugin_host* host, const nnp_comm* comm);
int32_t comm_count();
nnp_status comm_info(int32_t i, nnp_comm_info* out);
nnp_status comm_summary(int32_t i, nnp_comm_info* out);
// ops.cpp (1.14)
int32_t op_count();
nnp_status op_info(int32_t i, nnp_op_info* out);
nnp_status conv2d_fused(const nnp_tensor* x, const nnp_tensor* w, const nnp_tensor* bias, const nnp_conv2d_params* p,
                        nnp_tensor** out);
nnp_status max_pool2d_fused(const nnp_tensor* x, const nnp_pool2d_params* p, int64_t out_h, int64_t out_w,
                            nnp_tensor** values, nnp_tensor** indices);
nnp_status layer_norm_fused(const nnp_tensor* x, const nnp_tensor* weight, const nnp_tensor* bias,
                            int32_t normalized_ndim, double eps, nnp_tensor** out);  // (1.18)
// optim.cpp (1.15)
nnp_status register_optimizer(nnp_plugin_host* host, const nnp_optimizer_algorithm* algorithm);
int32_t optimizer_kind_count();
nnp_status optimizer_kind_info(int32_t i, nnp_optimizer_algorithm* out);
nnp_status sgd_step_fused(const nnp_tensor* param, const nnp_tensor* grad, const nnp_tensor* buffer,
                          const nnp_sgd_params* p, nnp_tensor** param_out, nnp_tensor** buffer_out);
// onnx.cpp (1.15)
nnp_status register_graph_op(nnp_plugin_host* host, const nnp_graph_op* op);
int32_t graph_op_count();
nnp_status graph_op_info(int32_t i, nnp_graph_op* out);
int32_t attrs_has(const nnp_attrs* attrs, const char* name);            // layers.cpp
nnp_status safetensors_metadata_all(const char* path, nnp_list** out);  // io.cpp
nnp_status process_group_new(const nnp_process_group_options* options, nnp_process_group** out);
void process_group_release(nnp_process_group* group);
int32_t process_group_rank(const nnp_process_group* group);
int32_t process_group_size(const nnp_process_group* group);
nnp_status comm_all_reduce(nnp_process_group* group, nnp_tensor* tensor, nnp_comm_op op, nnp_work** work);
nnp_status comm_broadcast(nnp_process_group* group, nnp_tensor* tensor, int32_t root, nnp_work** work);
nnp_status comm_all_gather(nnp_process_group* group, const nnp_tensor* input, nnp_tensor* output, nnp_work** work);
nnp_status comm_reduce_scatter(nnp_process_group* group, const nnp_tensor* input, nnp_tensor* output, nnp_comm_op op,
                               nnp_work** work);
nnp_status comm_barrier(nnp_process_group* group, nnp_work** work);
nnp_status work_wait(nnp_work* work, int64_t timeout_ms);
nnp_status work_test(nnp_work* work, int32_t* done);
void work_release(nnp_work* work);
nnp_status softmax(const nnp_tensor* x, int32_t dim, int32_t log, nnp_tensor** out);
nnp_status cat(const nnp_tensor* const* tensors, int32_t count, int32_t dim, nnp_tensor** out);
nnp_status index_select(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out);
nnp_status gather(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, nnp_tensor** out);
nnp_status scatter_add(const nnp_tensor* x, int32_t dim, const nnp_tensor* index, const nnp_tensor* src,
                       nnp_tensor** out);

// autograd.cpp: gradients, grad mode, tensor hooks, custom functions
nnp_status set_requires_grad(nnp_tensor* t, int32_t value);
int32_t requires_grad(const nnp_tensor* t);
int32_t is_leaf(const nnp_tensor* t);
nnp_status grad(const nnp_tensor* t, nnp_tensor** out);
nnp_status set_grad(nnp_tensor* t, const nnp_tensor* grad);
nnp_status retain_grad(nnp_tensor* t);
nnp_status detach(const nnp_tensor* t, nnp_tensor** out);
const char* grad_fn_name(const nnp_tensor* t);
nnp_status backward(const nnp_tensor* t, const nnp_tensor* grad, int32_t retain_graph);
int32_t set_grad_enabled(int32_t enabled);
int32_t is_grad_enabled();
nnp_status register_tensor_hook(nnp_tensor* t, nnp_tensor_hook_fn fn, void* user_data, void (*release_fn)(void*),
                                nnp_hook_handle** out);
nnp_status register_post_accumulate_grad_hook(nnp_tensor* t, nnp_post_accumulate_grad_hook_fn fn, void* user_data,
                                              void (*release_fn)(void*), nnp_hook_handle** out);
nnp_status autograd_queue_callback(nnp_autograd_callback_fn fn, void* user_data, void (*release_fn)(void*));
void hook_remove(nnp_hook_handle* handle);
void hook_release(nnp_hook_handle* handle);
nnp_status function_apply(const nnp_function* fn, void* user_data, const nnp_tensor* const* inputs, int32_t n_inputs,
                          nnp_tensor** outputs, int32_t n_outputs);
nnp_status function_save(nnp_function_ctx* ctx, const nnp_tensor* const* tensors, int32_t count);
int32_t function_saved_count(const nnp_function_ctx* ctx);
nnp_status function_saved(const nnp_function_ctx* ctx, int32_t i, nnp_tensor** out);

// list.cpp: named lists (state dicts, parameter lists) and value lists
nnp_status list_create(nnp_list** out);
void list_release(nnp_list* l);
int32_t list_size(const nnp_list* l);
const char* list_name(const nnp_list* l, int32_t i);
nnp_tensor* list_tensor(const nnp_list* l, int32_t i);
nnp_module* list_module(const nnp_list* l, int32_t i);
int32_t list_find(const nnp_list* l, const char* name);
nnp_status list_append_tensor(nnp_list* l, const char* name, const nnp_tensor* t);
nnp_status list_remove(nnp_list* l, int32_t i);
nnp_value_kind list_kind(const nnp_list* l, int32_t i);
nnp_status list_append_int(nnp_list* l, const char* name, int64_t value);
nnp_status list_append_float(nnp_list* l, const char* name, double value);
nnp_status list_append_bool(nnp_list* l, const char* name, int32_t value);
nnp_status list_append_string(nnp_list* l, const char* name, const char* value);
nnp_status list_int(const nnp_list* l, int32_t i, int64_t* out);
nnp_status list_float(const nnp_list* l, int32_t i, double* out);
nnp_status list_bool(const nnp_list* l, int32_t i, int32_t* out);
const char* list_string(const nnp_list* l, int32_t i);

// module.cpp: modules, traversal, modes, calls, hooks, state dicts
nnp_status module_create(const char* type_name, const nnp_module_vtable* vtable, void* self, nnp_module** out);
nnp_status container_create(nnp_container_kind kind, nnp_module** out);
void module_retain(nnp_module* m);
void module_release(nnp_module* m);
void module_detach_self(nnp_module* m);
const char* module_type_name(const nnp_module* m);
nnp_status register_parameter(nnp_module* m, const char* name, nnp_tensor* t, int32_t requires_grad);
nnp_status register_buffer(nnp_module* m, const char* name, nnp_tensor* t, int32_t persistent);
nnp_status register_module(nnp_module* m, const char* name, nnp_module* child);
nnp_status get_parameter(const nnp_module* m, const char* path, nnp_tensor** out);
nnp_status get_buffer(const nnp_module* m, const char* path, nnp_tensor** out);
nnp_status get_submodule(const nnp_module* m, const char* path, nnp_module** out);
nnp_status named_parameters(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                            nnp_list** out);
nnp_status named_buffers(const nnp_module* m, const char* prefix, int32_t recurse, int32_t remove_duplicate,
                         nnp_list** out);
nnp_status named_children(const nnp_module* m, nnp_list** out);
nnp_status named_modules(const nnp_module* m, const char* prefix, int32_t remove_duplicate, nnp_list** out);
nnp_status module_apply(nnp_module* m, nnp_status (*fn)(nnp_module*, void*), void* user_data);
nnp_status module_train(nnp_module* m, int32_t mode);
int32_t module_is_training(const nnp_module* m);
nnp_status module_requires_grad(nnp_module* m, int32_t value);
nnp_status module_zero_grad(nnp_module* m, int32_t set_to_none);
nnp_status module_to(nnp_module* m, const nnp_device* device, nnp_dtype dtype);
nnp_status module_to_empty(nnp_module* m, nnp_device device);
nnp_status module_call(nnp_module* m, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** out);
nnp_status module_register_hook(nnp_module* m, nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                void (*release_fn)(void*), int32_t prepend, nnp_hook_handle** out);
nnp_status register_global_module_hook(nnp_module_hook_kind kind, nnp_module_hook_fn fn, void* user_data,
                                       void (*release_fn)(void*), nnp_hook_handle** out);
nnp_status module_call_values(nnp_module* m, const nnp_list* args, nnp_list** out);
nnp_status module_register_values_hook(nnp_module* m, nnp_module_hook_kind kind, nnp_module_values_hook_fn fn,
                                       void* user_data, void (*release_fn)(void*), int32_t prepend,
                                       nnp_hook_handle** out);
nnp_status register_global_module_values_hook(nnp_module_hook_kind kind, nnp_module_values_hook_fn fn, void* user_data,
                                              void (*release_fn)(void*), nnp_hook_handle** out);
nnp_status module_repr(const nnp_module* m, char* buf, size_t size, size_t* needed);
nnp_status state_dict(nnp_module* m, const char* prefix, int32_t keep_vars, nnp_list** out);
nnp_status load_state_dict(nnp_module* m, const nnp_list* state, int32_t strict, int32_t assign, nnp_list** missing,
                           nnp_list** unexpected);
nnp_status register_state_hook(nnp_module* m, nnp_state_hook_kind kind, nnp_state_hook_fn fn, void* user_data,
                               void (*release_fn)(void*), nnp_hook_handle** out);

// io.cpp: safetensors files and model specs
nnp_status save_safetensors(const nnp_list* tensors, const char* path, const char* const* keys,
                            const char* const* values, int32_t count);
nnp_status load_safetensors(const char* path, nnp_device device, nnp_list** out);
nnp_status npy_load(const char* path, nnp_device device, nnp_tensor** out);  // 1.20, io.cpp
nnp_status npy_save(const nnp_tensor* t, const char* path);                   // 1.20
// step.cpp: captured training steps (1.25)
nnp_status step_compile(nnp_status (*fn)(void*, nnp_tensor* const*, int32_t, nnp_tensor**, int32_t*), void* user,
                        void (*release_user)(void*), nnp_step** out);
nnp_status step_call(nnp_step* step, const nnp_tensor* const* inputs, int32_t n_inputs, nnp_tensor** outputs,
                     int32_t capacity, int32_t* n_outputs);
nnp_status step_explain(const nnp_step* step, char* buf, size_t size, size_t* needed);
void step_release(nnp_step* step);
// amp.cpp: mixed precision (1.27)
nnp_status autocast_enter(const char* device_type, int32_t dtype, int32_t enabled, int32_t cache_enabled);
nnp_status autocast_exit(const char* device_type);
nnp_status autocast_state(const char* device_type, int32_t* enabled, nnp_dtype* dtype, int32_t* cache_enabled);
nnp_status autocast_args(const char* op, const nnp_tensor* const* inputs, int32_t count, nnp_tensor** outputs);
nnp_status amp_unscale_grads(nnp_optimizer* opt, double inv_scale, nnp_tensor* found_inf, int32_t allow_f16);
// autograd.cpp: activation checkpointing (1.27)
nnp_status checkpoint(nnp_status (*fn)(void*, nnp_tensor* const*, int32_t, nnp_tensor**, int32_t*), void* user,
                      void (*release_user)(void*), const nnp_tensor* const* inputs, int32_t n_inputs,
                      int32_t preserve_rng_state, nnp_tensor** outputs, int32_t capacity, int32_t* n_outputs);
// memory_stats.cpp: memory statistics (1.28)
nnp_status memory_stats(nnp_device device, nnp_memory_stats* out);
nnp_status reset_peak_memory_stats(nnp_device device);
nnp_status assign(nnp_tensor* dst, const nnp_tensor* value);
nnp_status load_csv(const char* path, const nnp_csv_options* options, nnp_device device, nnp_tensor** features,
                    nnp_tensor** labels, nnp_csv_info* info);
nnp_status safetensors_metadata(const char* path, const char* key, char* buf, size_t size, size_t* needed);
nnp_status module_save(nnp_module* m, const char* path);
nnp_status module_load(nnp_module* m, const char* path, int32_t strict, nnp_list** missing, nnp_list** unexpected);
nnp_status model_from_spec(const char* json_text, nnp_module** out);
nnp_status model_from_spec_file(const char* path, nnp_module** out);

// layers.cpp: attribute sets and the layer registry
nnp_status attrs_create(nnp_attrs** out);
void attrs_release(nnp_attrs* a);
nnp_status attrs_set_int(nnp_attrs* a, const char* name, int64_t value);
nnp_status attrs_set_float(nnp_attrs* a, const char* name, double value);
nnp_status attrs_set_bool(nnp_attrs* a, const char* name, int32_t value);
nnp_status attrs_set_string(nnp_attrs* a, const char* name, const char* value);
nnp_status attrs_set_ints(nnp_attrs* a, const char* name, const int64_t* values, int32_t count);
nnp_status attrs_get_int(const nnp_attrs* a, const char* name, int64_t* out);
nnp_status attrs_get_float(const nnp_attrs* a, const char* name, double* out);
nnp_status attrs_get_bool(const nnp_attrs* a, const char* name, int32_t* out);
nnp_status attrs_get_string(const nnp_attrs* a, const char* name, const char** out);
nnp_status attrs_get_ints(const nnp_attrs* a, const char* name, int64_t* values, int32_t capacity, int32_t* count);
nnp_status attrs_set_floats(nnp_attrs* a, const char* name, const double* values, int32_t count);
nnp_status attrs_get_floats(const nnp_attrs* a, const char* name, double* values, int32_t capacity, int32_t* count);
nnp_status attrs_set_none(nnp_attrs* a, const char* name);
nnp_status register_layer_type(nnp_plugin_host* host, const nnp_layer_type* type);
int32_t layer_type_count();
nnp_status layer_type_info(int32_t i, nnp_layer_type* out);
nnp_status layer_type_plugin(int32_t i, const char** out);
nnp_status layer_create(const char* type, const nnp_attrs* attrs, nnp_module** out);

// optim.cpp: optimizers and gradient clipping
nnp_status optimizer_create(const char* kind, const nnp_list* params, const nnp_attrs* options, nnp_optimizer** out);
void optimizer_release(nnp_optimizer* o);
nnp_status optimizer_add_param_group(nnp_optimizer* o, const nnp_list* params, const nnp_attrs* options);
int32_t optimizer_group_count(const nnp_optimizer* o);
nnp_status optimizer_get_option(const nnp_optimizer* o, int32_t group, const char* name, double* out);
nnp_status optimizer_set_option(nnp_optimizer* o, int32_t group, const char* name, double value);
nnp_status optimizer_step(nnp_optimizer* o);
nnp_status optimizer_zero_grad(nnp_optimizer* o, int32_t set_to_none);
nnp_status optimizer_state_dict(const nnp_optimizer* o, nnp_list** out);
nnp_status optimizer_load_state_dict(nnp_optimizer* o, const nnp_list* state);
nnp_status clip_grad_norm(const nnp_list* params, double max_norm, double norm_type, double* total);

// interop.cpp: DLPack
nnp_status to_dlpack(const nnp_tensor* t, DLManagedTensor** out);
nnp_status to_dlpack_versioned(const nnp_tensor* t, DLManagedTensorVersioned** out);
nnp_status from_dlpack(DLManagedTensor* src, nnp_tensor** out);
nnp_status from_dlpack_versioned(DLManagedTensorVersioned* src, nnp_tensor** out);

// reparametrize.cpp: pruning, parametrizations (1.6)
nnp_status prune(nnp_module* m, const char* name, const nnp_prune_spec* spec);
nnp_status prune_global(nnp_module* const* modules, const char* const* names, int32_t n, const nnp_prune_spec* spec,
                        const nnp_tensor* const* importance_scores);
nnp_status prune_remove(nnp_module* m, const char* name);
int32_t prune_is_pruned(const nnp_module* m);
nnp_status register_parametrization(nnp_module* m, const char* name, nnp_module* parametrization, int32_t unsafe);
nnp_status remove_parametrizations(nnp_module* m, const char* name, int32_t leave_parametrized);
int32_t is_parametrized(const nnp_module* m, const char* name);
nnp_status parametrization_assign(nnp_module* m, const char* name, const nnp_tensor* value);
void parametrize_cache_enter();
void parametrize_cache_exit();
nnp_status module_get_tensor(nnp_module* m, const char* path, nnp_tensor** out);

// profiler.cpp: the profiler (1.6)
nnp_status profiler_start(const nnp_profiler_options* options);
nnp_status profiler_stop(nnp_profile** out);
int32_t profiler_is_active();
nnp_status profiler_push_scope(const char* name);
nnp_status profiler_pop_scope();
void profile_release(nnp_profile* profile);
int64_t profile_event_count(const nnp_profile* profile);
nnp_status profile_event(const nnp_profile* profile, int64_t i, nnp_profile_event* out);
nnp_status profile_save_chrome_trace(const nnp_profile* profile, const char* path);
nnp_status profile_summary(const nnp_profile* profile, const char* sort_by, int32_t row_limit, char* buf, size_t size,
                           size_t* needed);

}  // namespace nnp::core::api
