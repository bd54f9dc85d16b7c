// The nnp_api table, and nnp_get_api: the one symbol libnnp exports.
//
// Filled by field name, never by position, so two entries of the same
// signature cannot be swapped silently; the entries themselves live in
// core/api/, one adapter file per concept (api/entries.hpp lists them).
#include "api_table.hpp"

#include <cstddef>

#include "api/entries.hpp"
#include "error.hpp"

namespace nnp::core {
namespace {

// Released layouts end where they ended: a 1.0 caller's table is a prefix.
static_assert(offsetof(nnp_api, device_stream) == NNP_API_SIZE_1_0, "ABI 1.1 appends after the 1.0 table");
static_assert(sizeof(nnp_api) == NNP_API_SIZE_1_28, "nnp_api grew: add NNP_API_SIZE_1_29 and bump NNP_ABI_MINOR");
static_assert(offsetof(nnp_api, last_status) + sizeof(void*) == sizeof(nnp_api_base),
              "nnp_api starts with nnp_api_base in every version");

nnp_api make_table() {
  nnp_api t{};
  t.struct_size = sizeof(nnp_api);
  t.abi_major = NNP_ABI_MAJOR;
  t.abi_minor = NNP_ABI_MINOR;
  t.last_error = api::last_error;
  t.last_status = api::last_status;
  t.set_error = api::set_error;
  t.status_name = api::status_name;
  t.dtype_name = api::dtype_name;
  t.dtype_size = api::dtype_size;
  t.version = api::version;
  t.load_plugin = api::load_plugin;
  t.plugin_count = api::plugin_count;
  t.plugin_info = api::plugin_info;
  t.backend_count = api::backend_count;
  t.backend_info = api::backend_info;
  t.plugin_search_path = api::plugin_search_path;
  t.device_parse = api::device_parse;
  t.device_name = api::device_name;
  t.device_info = api::device_info;
  t.synchronize = api::synchronize;
  t.register_backend = api::register_backend;
  t.tensor_retain = api::tensor_retain;
  t.tensor_release = api::tensor_release;
  t.tensor_ndim = api::tensor_ndim;
  t.tensor_shape = api::tensor_shape;
  t.tensor_strides = api::tensor_strides;
  t.tensor_offset = api::tensor_offset;
  t.tensor_numel = api::tensor_numel;
  t.tensor_dtype = api::tensor_dtype;
  t.tensor_device = api::tensor_device;
  t.tensor_is_contiguous = api::tensor_is_contiguous;
  t.tensor_data = api::tensor_data;
  t.empty = api::empty;
  t.full = api::full;
  t.arange = api::arange;
  t.from_host = api::from_host;
  t.random = api::random;
  t.manual_seed = api::manual_seed;
  t.get_rng_state = api::get_rng_state;
  t.set_rng_state = api::set_rng_state;
  t.copy_to_host = api::copy_to_host;
  t.copy_into = api::copy_into;
  t.to = api::to;
  t.view = api::view;
  t.reshape = api::reshape;
  t.transpose = api::transpose;
  t.permute = api::permute;
  t.slice = api::slice;
  t.expand = api::expand;
  t.squeeze = api::squeeze;
  t.unsqueeze = api::unsqueeze;
  t.contiguous = api::contiguous;
  t.clone = api::clone;
  t.unary = api::unary;
  t.binary = api::binary;
  t.where = api::where;
  t.reduce = api::reduce;
  t.matmul = api::matmul;
  t.softmax = api::softmax;
  t.cat = api::cat;
  t.index_select = api::index_select;
  t.gather = api::gather;
  t.scatter_add = api::scatter_add;
  t.set_requires_grad = api::set_requires_grad;
  t.requires_grad = api::requires_grad;
  t.is_leaf = api::is_leaf;
  t.grad = api::grad;
  t.set_grad = api::set_grad;
  t.retain_grad = api::retain_grad;
  t.detach = api::detach;
  t.grad_fn_name = api::grad_fn_name;
  t.backward = api::backward;
  t.set_grad_enabled = api::set_grad_enabled;
  t.is_grad_enabled = api::is_grad_enabled;
  t.register_tensor_hook = api::register_tensor_hook;
  t.hook_remove = api::hook_remove;
  t.hook_release = api::hook_release;
  t.function_apply = api::function_apply;
  t.function_save = api::function_save;
  t.function_saved_count = api::function_saved_count;
  t.function_saved = api::function_saved;
  t.list_create = api::list_create;
  t.list_release = api::list_release;
  t.list_size = api::list_size;
  t.list_name = api::list_name;
  t.list_tensor = api::list_tensor;
  t.list_module = api::list_module;
  t.list_find = api::list_find;
  t.list_append_tensor = api::list_append_tensor;
  t.list_remove = api::list_remove;
  t.module_create = api::module_create;
  t.container_create = api::container_create;
  t.module_retain = api::module_retain;
  t.module_release = api::module_release;
  t.module_detach_self = api::module_detach_self;
  t.module_type_name = api::module_type_name;
  t.register_parameter = api::register_parameter;
  t.register_buffer = api::register_buffer;
  t.register_module = api::register_module;
  t.get_parameter = api::get_parameter;
  t.get_buffer = api::get_buffer;
  t.get_submodule = api::get_submodule;
  t.named_parameters = api::named_parameters;
  t.named_buffers = api::named_buffers;
  t.named_children = api::named_children;
  t.named_modules = api::named_modules;
  t.module_apply = api::module_apply;
  t.module_train = api::module_train;
  t.module_is_training = api::module_is_training;
  t.module_requires_grad = api::module_requires_grad;
  t.module_zero_grad = api::module_zero_grad;
  t.module_to = api::module_to;
  t.module_to_empty = api::module_to_empty;
  t.module_call = api::module_call;
  t.module_register_hook = api::module_register_hook;
  t.register_global_module_hook = api::register_global_module_hook;
  t.module_repr = api::module_repr;
  t.state_dict = api::state_dict;
  t.load_state_dict = api::load_state_dict;
  t.register_state_hook = api::register_state_hook;
  t.save_safetensors = api::save_safetensors;
  t.load_safetensors = api::load_safetensors;
  t.safetensors_metadata = api::safetensors_metadata;
  t.module_save = api::module_save;
  t.module_load = api::module_load;
  t.attrs_create = api::attrs_create;
  t.attrs_release = api::attrs_release;
  t.attrs_set_int = api::attrs_set_int;
  t.attrs_set_float = api::attrs_set_float;
  t.attrs_set_bool = api::attrs_set_bool;
  t.attrs_set_string = api::attrs_set_string;
  t.attrs_set_ints = api::attrs_set_ints;
  t.attrs_get_int = api::attrs_get_int;
  t.attrs_get_float = api::attrs_get_float;
  t.attrs_get_bool = api::attrs_get_bool;
  t.attrs_get_string = api::attrs_get_string;
  t.attrs_get_ints = api::attrs_get_ints;
  t.attrs_set_floats = api::attrs_set_floats;
  t.attrs_get_floats = api::attrs_get_floats;
  t.attrs_set_none = api::attrs_set_none;
  t.prune = api::prune;
  t.prune_global = api::prune_global;
  t.prune_remove = api::prune_remove;
  t.prune_is_pruned = api::prune_is_pruned;
  t.register_parametrization = api::register_parametrization;
  t.remove_parametrizations = api::remove_parametrizations;
  t.is_parametrized = api::is_parametrized;
  t.parametrization_assign = api::parametrization_assign;
  t.parametrize_cache_enter = api::parametrize_cache_enter;
  t.parametrize_cache_exit = api::parametrize_cache_exit;
  t.module_get_tensor = api::module_get_tensor;
  t.profiler_start = api::profiler_start;
  t.profiler_stop = api::profiler_stop;
  t.profiler_is_active = api::profiler_is_active;
  t.profiler_push_scope = api::profiler_push_scope;
  t.profiler_pop_scope = api::profiler_pop_scope;
  t.profile_release = api::profile_release;
  t.profile_event_count = api::profile_event_count;
  t.profile_event = api::profile_event;
  t.profile_save_chrome_trace = api::profile_save_chrome_trace;
  t.profile_summary = api::profile_summary;
  t.quantize_per_tensor = api::quantize_per_tensor;
  t.quantize_per_channel = api::quantize_per_channel;
  t.dequantize_per_tensor = api::dequantize_per_tensor;
  t.dequantize_per_channel = api::dequantize_per_channel;
  t.fake_quantize_per_tensor = api::fake_quantize_per_tensor;
  t.fake_quantize_per_channel = api::fake_quantize_per_channel;
  t.matmul_i8 = api::matmul_i8;
  t.onnx_export = api::onnx_export;
  t.onnx_graph_add_node = api::onnx_graph_add_node;
  t.onnx_graph_add_constant = api::onnx_graph_add_constant;
  t.onnx_graph_tensor_name = api::onnx_graph_tensor_name;
  t.onnx_graph_new_name = api::onnx_graph_new_name;
  t.onnx_graph_opset = api::onnx_graph_opset;
  t.onnx_load = api::onnx_load;
  t.module_layer_attrs = api::module_layer_attrs;
  t.register_comm = api::register_comm;
  t.comm_count = api::comm_count;
  t.comm_info = api::comm_info;
  t.process_group_new = api::process_group_new;
  t.process_group_release = api::process_group_release;
  t.process_group_rank = api::process_group_rank;
  t.process_group_size = api::process_group_size;
  t.comm_all_reduce = api::comm_all_reduce;
  t.comm_broadcast = api::comm_broadcast;
  t.comm_all_gather = api::comm_all_gather;
  t.comm_reduce_scatter = api::comm_reduce_scatter;
  t.comm_barrier = api::comm_barrier;
  t.work_wait = api::work_wait;
  t.work_test = api::work_test;
  t.work_release = api::work_release;
  t.register_post_accumulate_grad_hook = api::register_post_accumulate_grad_hook;
  t.autograd_queue_callback = api::autograd_queue_callback;
  t.backend_summary = api::backend_summary;
  t.comm_summary = api::comm_summary;
  t.op_count = api::op_count;
  t.op_info = api::op_info;
  t.conv2d_fused = api::conv2d_fused;
  t.max_pool2d_fused = api::max_pool2d_fused;
  t.layer_norm_fused = api::layer_norm_fused;
  t.quantized_matmul = api::quantized_matmul;
  t.module_compile = api::module_compile;
  t.module_compile_explain = api::module_compile_explain;
  t.npy_load = api::npy_load;
  t.npy_save = api::npy_save;
  t.step_compile = api::step_compile;
  t.step_call = api::step_call;
  t.step_explain = api::step_explain;
  t.step_release = api::step_release;
  t.autocast_enter = api::autocast_enter;
  t.autocast_exit = api::autocast_exit;
  t.autocast_state = api::autocast_state;
  t.autocast_args = api::autocast_args;
  t.amp_unscale_grads = api::amp_unscale_grads;
  t.checkpoint = api::checkpoint;
  t.memory_stats = api::memory_stats;
  t.reset_peak_memory_stats = api::reset_peak_memory_stats;
  t.register_optimizer = api::register_optimizer;
  t.optimizer_kind_count = api::optimizer_kind_count;
  t.optimizer_kind_info = api::optimizer_kind_info;
  t.sgd_step_fused = api::sgd_step_fused;
  t.register_graph_op = api::register_graph_op;
  t.graph_op_count = api::graph_op_count;
  t.graph_op_info = api::graph_op_info;
  t.attrs_has = api::attrs_has;
  t.safetensors_metadata_all = api::safetensors_metadata_all;
  t.register_layer_type = api::register_layer_type;
  t.layer_type_count = api::layer_type_count;
  t.layer_type_info = api::layer_type_info;
  t.layer_create = api::layer_create;
  t.optimizer_create = api::optimizer_create;
  t.optimizer_release = api::optimizer_release;
  t.optimizer_add_param_group = api::optimizer_add_param_group;
  t.optimizer_group_count = api::optimizer_group_count;
  t.optimizer_get_option = api::optimizer_get_option;
  t.optimizer_set_option = api::optimizer_set_option;
  t.optimizer_step = api::optimizer_step;
  t.optimizer_zero_grad = api::optimizer_zero_grad;
  t.optimizer_state_dict = api::optimizer_state_dict;
  t.optimizer_load_state_dict = api::optimizer_load_state_dict;
  t.clip_grad_norm = api::clip_grad_norm;
  t.model_from_spec = api::model_from_spec;
  t.model_from_spec_file = api::model_from_spec_file;
  // ---- ABI 1.1 ----
  t.device_stream = api::device_stream;
  t.layer_type_plugin = api::layer_type_plugin;
  t.to_dlpack = api::to_dlpack;
  t.to_dlpack_versioned = api::to_dlpack_versioned;
  t.from_dlpack = api::from_dlpack;
  t.from_dlpack_versioned = api::from_dlpack_versioned;
  t.load_csv = api::load_csv;
  t.assign = api::assign;
  // ---- ABI 1.3 ----
  t.list_kind = api::list_kind;
  t.list_append_int = api::list_append_int;
  t.list_append_float = api::list_append_float;
  t.list_append_bool = api::list_append_bool;
  t.list_append_string = api::list_append_string;
  t.list_int = api::list_int;
  t.list_float = api::list_float;
  t.list_bool = api::list_bool;
  t.list_string = api::list_string;
  t.module_call_values = api::module_call_values;
  t.module_register_values_hook = api::module_register_values_hook;
  t.register_global_module_values_hook = api::register_global_module_values_hook;
  t.device_manual_seed = api::device_manual_seed;
  t.device_get_rng_state = api::device_get_rng_state;
  t.device_set_rng_state = api::device_set_rng_state;
  return t;
}

}  // namespace

const nnp_api* api_table() {
  static const nnp_api table = make_table();
  return &table;
}

}  // namespace nnp::core

extern "C" NNP_EXPORT const nnp_api* nnp_get_api(uint32_t major, uint32_t minor) {
  // The base query (nnp_get_api_base) is answered by every version.
  if (major == NNP_ABI_BASE_QUERY && minor == 0) return nnp::core::api_table();
  if (major != NNP_ABI_MAJOR || minor > NNP_ABI_MINOR) {
    nnp::core::set_last_error(
        NNP_ABI_MISMATCH,
        nnp::core::str_cat("nnp_get_api: the caller asks for ABI ", major, ".", minor,
                           " but this libnnp implements ABI ", NNP_ABI_MAJOR, ".", NNP_ABI_MINOR,
                           major != NNP_ABI_MAJOR ? " (major versions differ)" : " (the caller's minor is newer)")
            .c_str());
    return nullptr;
  }
  return nnp::core::api_table();
}
