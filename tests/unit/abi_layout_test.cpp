// Pins the released layouts (ABI 1.0, then what 1.1 appended): a change here
// breaks every plugin and application built against them. New fields go at
// the end only; tests/abi builds a plugin against the frozen 1.0 headers.
#include <gtest/gtest.h>
#include <nnp/plugin.h>

#include <cstddef>
#include <cstring>
#include <string>

#define PIN(type, field, offset) static_assert(offsetof(type, field) == (offset), #type "." #field " moved")

PIN(nnp_api, struct_size, 0);
PIN(nnp_api, abi_major, 8);
PIN(nnp_api, abi_minor, 12);
PIN(nnp_api, last_error, 16);
PIN(nnp_api, version, 64);
PIN(nnp_api, load_plugin, 72);
PIN(nnp_api, register_backend, 152);
PIN(nnp_api, tensor_retain, 160);
PIN(nnp_api, tensor_data, 240);
PIN(nnp_api, empty, 248);
PIN(nnp_api, set_rng_state, 304);
PIN(nnp_api, copy_to_host, 312);
PIN(nnp_api, to, 328);
PIN(nnp_api, view, 336);
PIN(nnp_api, clone, 408);
PIN(nnp_api, unary, 416);
PIN(nnp_api, scatter_add, 488);
PIN(nnp_api, set_requires_grad, 496);
PIN(nnp_api, backward, 560);
PIN(nnp_api, function_saved, 632);
PIN(nnp_api, list_create, 640);
PIN(nnp_api, module_create, 712);
PIN(nnp_api, module_call, 896);
PIN(nnp_api, register_state_hook, 944);
PIN(nnp_api, save_safetensors, 952);
PIN(nnp_api, module_load, 984);
PIN(nnp_api, attrs_create, 992);
PIN(nnp_api, register_layer_type, 1088);
PIN(nnp_api, layer_create, 1112);
PIN(nnp_api, optimizer_create, 1120);
PIN(nnp_api, clip_grad_norm, 1200);
PIN(nnp_api, model_from_spec_file, 1216);
static_assert(offsetof(nnp_api, device_stream) == 1224, "1.1 starts where nnp_api 1.0 (1224 bytes) ended");
PIN(nnp_attr_def, default_value, 24);
PIN(nnp_layer_type, create, 40);
static_assert(NNP_LAYER_TYPE_SIZE_1_0 == 56, "nnp_layer_type 1.0 is 56 bytes");
PIN(nnp_module_vtable, forward, 8);
PIN(nnp_module_vtable, set_extra_state, 40);
static_assert(NNP_MODULE_VTABLE_SIZE_1_0 == 48, "nnp_module_vtable 1.0 is 48 bytes");
PIN(nnp_function, forward, 16);
PIN(nnp_function, release, 32);

PIN(nnp_plugin_descriptor, abi_major, 8);
PIN(nnp_plugin_descriptor, name, 16);
PIN(nnp_plugin_descriptor, init, 32);
static_assert(offsetof(nnp_plugin_descriptor, description) == 40, "nnp_plugin_descriptor 1.0 was 40 bytes");

PIN(nnp_view, data, 0);
PIN(nnp_view, dtype, 8);
PIN(nnp_view, ndim, 12);
PIN(nnp_view, shape, 16);
PIN(nnp_view, strides, 16 + 8 * NNP_MAX_DIMS);
static_assert(sizeof(nnp_view) == 16 + 16 * NNP_MAX_DIMS, "nnp_view 1.0 size");

PIN(nnp_kernel_ctx, backend_state, 8);
PIN(nnp_kernel_ctx, stream, 24);
PIN(nnp_kernels, copy, 8);
PIN(nnp_kernels, gemm, 56);
PIN(nnp_kernels, random, 96);

PIN(nnp_backend, name, 8);
PIN(nnp_backend, score, 16);
PIN(nnp_backend, flags, 20);
PIN(nnp_backend, state, 24);
PIN(nnp_backend, device_count, 32);
PIN(nnp_backend, alloc, 56);
PIN(nnp_backend, stream, 104);
PIN(nnp_backend, kernels, 112);

PIN(nnp_device_info, score, 32);
PIN(nnp_backend_info, unavailable_reason, 32);
PIN(nnp_plugin_info, reason, 40);
static_assert(sizeof(nnp_device) == 8, "nnp_device is passed by value");

// ---- ABI 1.1 ----
PIN(nnp_api, device_stream, 1224);
PIN(nnp_api, layer_type_plugin, 1232);
PIN(nnp_api, to_dlpack, 1240);
PIN(nnp_api, to_dlpack_versioned, 1248);
PIN(nnp_api, from_dlpack, 1256);
PIN(nnp_api, from_dlpack_versioned, 1264);
// ---- ABI 1.2 ----
PIN(nnp_api, load_csv, 1272);
PIN(nnp_api, assign, 1280);
static_assert(NNP_API_SIZE_1_2 == 1288, "nnp_api 1.2 is 1288 bytes");
PIN(nnp_csv_options, header, 8);
static_assert(sizeof(nnp_csv_options) == 16, "nnp_csv_options 1.2 is 16 bytes");
PIN(nnp_csv_info, rows, 8);
PIN(nnp_csv_info, largest_label_line, 32);
PIN(nnp_csv_info, header_skipped, 40);
static_assert(sizeof(nnp_csv_info) == 48, "nnp_csv_info 1.2 is 48 bytes");
// ---- ABI 1.3 ----
PIN(nnp_api, list_kind, 1288);
PIN(nnp_api, list_string, 1352);
PIN(nnp_api, module_call_values, 1360);
PIN(nnp_api, register_global_module_values_hook, 1376);
PIN(nnp_api, device_manual_seed, 1384);
PIN(nnp_api, device_set_rng_state, 1400);
// ---- ABI 1.5 ----
PIN(nnp_api, attrs_set_floats, 1408);
PIN(nnp_api, attrs_get_floats, 1416);
PIN(nnp_api, attrs_set_none, 1424);
static_assert(NNP_ATTR_INTS_OR_STRING == 5 && NNP_ATTR_FLOATS == 6 && NNP_ATTR_NONE == 7, "attribute types");
PIN(nnp_module_vtable, forward_values, 48);
static_assert(NNP_VALUE_NONE == 0 && NNP_VALUE_TENSOR == 1 && NNP_VALUE_MODULE == 2 && NNP_VALUE_INT == 3 &&
                  NNP_VALUE_FLOAT == 4 && NNP_VALUE_BOOL == 5 && NNP_VALUE_STRING == 6,
              "value kinds");
// ---- ABI 1.6 ----
PIN(nnp_api, prune, 1432);
PIN(nnp_api, prune_is_pruned, 1456);
PIN(nnp_api, register_parametrization, 1464);
PIN(nnp_api, parametrize_cache_exit, 1504);
PIN(nnp_api, module_get_tensor, 1512);
PIN(nnp_api, profiler_start, 1520);
PIN(nnp_api, profile_summary, 1592);
PIN(nnp_backend, event_record, 120);
PIN(nnp_backend, event_release, 136);
static_assert(NNP_BACKEND_SIZE_1_6 == 144, "nnp_backend 1.6 is 144 bytes");
static_assert(sizeof(nnp_profiler_options) == 24 && NNP_PROFILER_OPTIONS_SIZE_1_6 == 20, "nnp_profiler_options 1.6");
PIN(nnp_profile_event, kind, 16);
PIN(nnp_profile_event, start_ns, 24);
PIN(nnp_profile_event, shapes, 48);
PIN(nnp_profile_event, device_us, 88);
static_assert(sizeof(nnp_profile_event) == 96 && NNP_PROFILE_EVENT_SIZE_1_6 == 96, "nnp_profile_event 1.6");
static_assert(NNP_PROFILE_OP == 0 && NNP_PROFILE_MODULE == 1 && NNP_PROFILE_SCOPE == 2 && NNP_PROFILE_BACKWARD == 3,
              "profile event kinds");
PIN(nnp_module_vtable, right_inverse, 56);
static_assert(sizeof(nnp_module_vtable) == 64, "nnp_module_vtable 1.6 is 64 bytes");
PIN(nnp_prune_spec, method, 8);
PIN(nnp_prune_spec, amount, 16);
PIN(nnp_prune_spec, dim, 32);
PIN(nnp_prune_spec, mask, 48);
static_assert(sizeof(nnp_prune_spec) == 56 && NNP_PRUNE_SPEC_SIZE_1_6 == 56, "nnp_prune_spec 1.6 is 56 bytes");
static_assert(NNP_PRUNE_IDENTITY == 0 && NNP_PRUNE_L1_UNSTRUCTURED == 2 && NNP_PRUNE_CUSTOM_FROM_MASK == 5,
              "pruning methods");
// ---- ABI 1.7 ----
PIN(nnp_api, quantize_per_tensor, 1600);
PIN(nnp_api, fake_quantize_per_channel, 1640);
PIN(nnp_api, matmul_i8, 1648);
static_assert(NNP_API_SIZE_1_7 == 1656, "nnp_api 1.7 is 1656 bytes");
PIN(nnp_kernels, gemm_i8, 104);
static_assert(NNP_KERNELS_SIZE_1_7 == 112, "nnp_kernels 1.7 is 112 bytes");
static_assert(NNP_I8 == 8 && NNP_UNARY_ROUND == 15, "1.7's dtype and op");
// ---- ABI 1.8 ----
PIN(nnp_api, onnx_export, 1656);
PIN(nnp_api, onnx_graph_opset, 1696);
PIN(nnp_api, onnx_load, 1704);
PIN(nnp_api, module_layer_attrs, 1712);
static_assert(NNP_API_SIZE_1_8 == 1720, "nnp_api 1.8 is 1720 bytes");
PIN(nnp_layer_type, to_onnx, 56);
static_assert(sizeof(nnp_layer_type) == 64 && NNP_LAYER_TYPE_SIZE_1_8 == 64, "nnp_layer_type 1.8 is 64 bytes");
static_assert(sizeof(nnp_onnx_export_options) == 48 && NNP_ONNX_EXPORT_OPTIONS_SIZE_1_8 == 44,
              "nnp_onnx_export_options 1.8");
// ---- ABI 1.9 ----
PIN(nnp_kernels, conv2d, 112);
static_assert(NNP_KERNELS_SIZE_1_9 == 120, "nnp_kernels 1.9 is 120 bytes");
PIN(nnp_conv2d_params, stride, 8);
PIN(nnp_conv2d_params, padding, 24);
PIN(nnp_conv2d_params, dilation, 40);
PIN(nnp_conv2d_params, groups, 56);
static_assert(NNP_CONV2D_PARAMS_SIZE_1_9 == 64, "nnp_conv2d_params 1.9");
// ---- ABI 1.10 ----
PIN(nnp_kernels, max_pool2d, 120);
static_assert(NNP_KERNELS_SIZE_1_10 == 128, "nnp_kernels 1.10 is 128 bytes");
PIN(nnp_kernels, sgd_step, 128);
PIN(nnp_kernels, conv2d_backward, 136);
static_assert(NNP_KERNELS_SIZE_1_12 == 144, "nnp_kernels 1.12 is 144 bytes");
#define NNP_COUNT_SLOT(slot) +1
static_assert(sizeof(size_t) +
                      (0 NNP_KERNELS_REQUIRED_SLOTS(NNP_COUNT_SLOT) NNP_KERNELS_OPTIONAL_SLOTS(NNP_COUNT_SLOT)) *
                          sizeof(void*) ==
                  sizeof(nnp_kernels),
              "every kernel slot is listed, as required or as optional");
#undef NNP_COUNT_SLOT
PIN(nnp_sgd_params, lr, 8);
PIN(nnp_sgd_params, weight_decay, 32);
PIN(nnp_sgd_params, nesterov, 40);
PIN(nnp_sgd_params, maximize, 44);
static_assert(sizeof(nnp_sgd_params) == 48 && NNP_SGD_PARAMS_SIZE_1_12 == 48, "nnp_sgd_params 1.12 is 48 bytes");
PIN(nnp_pool2d_params, kernel, 8);
PIN(nnp_pool2d_params, stride, 24);
PIN(nnp_pool2d_params, padding, 40);
PIN(nnp_pool2d_params, dilation, 56);
static_assert(sizeof(nnp_pool2d_params) == 72 && NNP_POOL2D_PARAMS_SIZE_1_10 == 72, "nnp_pool2d_params 1.10");
PIN(nnp_api, register_comm, 1720);
PIN(nnp_api, comm_count, 1728);
PIN(nnp_api, comm_info, 1736);
PIN(nnp_api, process_group_new, 1744);
PIN(nnp_api, process_group_release, 1752);
PIN(nnp_api, process_group_rank, 1760);
PIN(nnp_api, process_group_size, 1768);
PIN(nnp_api, comm_all_reduce, 1776);
PIN(nnp_api, comm_broadcast, 1784);
PIN(nnp_api, comm_all_gather, 1792);
PIN(nnp_api, comm_reduce_scatter, 1800);
PIN(nnp_api, comm_barrier, 1808);
PIN(nnp_api, work_wait, 1816);
PIN(nnp_api, work_test, 1824);
PIN(nnp_api, work_release, 1832);
static_assert(NNP_API_SIZE_1_10 == 1840, "nnp_api 1.10 is 1840 bytes");
PIN(nnp_api, register_post_accumulate_grad_hook, 1840);
PIN(nnp_api, autograd_queue_callback, 1848);
static_assert(NNP_API_SIZE_1_11 == 1856, "nnp_api 1.11 is 1856 bytes");
PIN(nnp_api, backend_summary, 1856);
PIN(nnp_api, comm_summary, 1864);
static_assert(NNP_API_SIZE_1_12 == 1872, "nnp_api 1.12 is 1872 bytes");
PIN(nnp_api, op_count, 1872);
PIN(nnp_api, op_info, 1880);
PIN(nnp_api, conv2d_fused, 1888);
PIN(nnp_api, max_pool2d_fused, 1896);
static_assert(NNP_API_SIZE_1_14 == 1904, "nnp_api 1.14 is 1904 bytes");
PIN(nnp_api, register_optimizer, 1904);
PIN(nnp_api, optimizer_kind_count, 1912);
PIN(nnp_api, optimizer_kind_info, 1920);
PIN(nnp_api, sgd_step_fused, 1928);
PIN(nnp_api, register_graph_op, 1936);
PIN(nnp_api, graph_op_count, 1944);
PIN(nnp_api, graph_op_info, 1952);
PIN(nnp_api, attrs_has, 1960);
PIN(nnp_api, safetensors_metadata_all, 1968);
static_assert(NNP_API_SIZE_1_15 == 1976, "nnp_api 1.15 is 1976 bytes");
PIN(nnp_graph_op, op_type, 8);
PIN(nnp_graph_op, doc, 16);
PIN(nnp_graph_op, run, 24);
PIN(nnp_graph_op, user_data, 32);
static_assert(NNP_GRAPH_OP_SIZE_1_15 == 40, "nnp_graph_op 1.15 is 40 bytes");
PIN(nnp_optimizer_algorithm, kind, 8);
PIN(nnp_optimizer_algorithm, doc, 16);
PIN(nnp_optimizer_algorithm, option_names, 24);
PIN(nnp_optimizer_algorithm, option_defaults, 32);
PIN(nnp_optimizer_algorithm, option_count, 40);
PIN(nnp_optimizer_algorithm, host_state, 48);
PIN(nnp_optimizer_algorithm, check_options, 56);
PIN(nnp_optimizer_algorithm, update, 64);
PIN(nnp_optimizer_algorithm, user_data, 72);
static_assert(sizeof(nnp_optimizer_algorithm) == 80 && NNP_OPTIMIZER_ALGORITHM_SIZE_1_15 == 80,
              "nnp_optimizer_algorithm 1.15 is 80 bytes");
PIN(nnp_op_info, name, 8);
PIN(nnp_op_info, backward, 16);
PIN(nnp_op_info, trace, 24);
static_assert(sizeof(nnp_op_info) == 32 && NNP_OP_INFO_SIZE_1_14 == 28, "nnp_op_info 1.14");
PIN(nnp_comm, name, 8);
PIN(nnp_comm, backends, 16);
PIN(nnp_comm, state, 24);
PIN(nnp_comm, group_new, 32);
PIN(nnp_comm, group_release, 40);
PIN(nnp_comm, all_reduce, 48);
PIN(nnp_comm, broadcast, 56);
PIN(nnp_comm, all_gather, 64);
PIN(nnp_comm, reduce_scatter, 72);
PIN(nnp_comm, barrier, 80);
PIN(nnp_comm, wait, 88);
PIN(nnp_comm, test, 96);
PIN(nnp_comm, work_release, 104);
static_assert(NNP_COMM_SIZE_1_10 == 112, "nnp_comm 1.10 is 112 bytes");
PIN(nnp_comm, unavailable_reason, 112);
static_assert(sizeof(nnp_comm) == 120 && NNP_COMM_SIZE_1_11 == 120, "nnp_comm 1.11 is 120 bytes");
PIN(nnp_comm_store, state, 8);
PIN(nnp_comm_store, set, 16);
PIN(nnp_comm_store, get, 24);
static_assert(NNP_COMM_STORE_SIZE_1_10 == 32, "nnp_comm_store 1.10");
PIN(nnp_comm_store, local_address, 32);
static_assert(sizeof(nnp_comm_store) == 40 && NNP_COMM_STORE_SIZE_1_16 == 40, "nnp_comm_store 1.16");
PIN(nnp_process_group_options, comm, 8);
PIN(nnp_process_group_options, rank, 16);
PIN(nnp_process_group_options, world_size, 20);
PIN(nnp_process_group_options, init_method, 24);
PIN(nnp_process_group_options, timeout_ms, 32);
PIN(nnp_process_group_options, device, 40);
static_assert(NNP_PROCESS_GROUP_OPTIONS_SIZE_1_10 == 48, "nnp_process_group_options 1.10");
PIN(nnp_process_group_options, job_token, 48);
static_assert(sizeof(nnp_process_group_options) == 56 && NNP_PROCESS_GROUP_OPTIONS_SIZE_1_16 == 56,
              "nnp_process_group_options 1.16");
// ---- ABI 1.16 ----
PIN(nnp_backend, dtypes, 144);
PIN(nnp_backend, unary_ops, 148);
static_assert(NNP_BACKEND_SIZE_1_16 == 152, "nnp_backend 1.16 is 152 bytes");
PIN(nnp_backend_info, dtypes, 44);
PIN(nnp_backend_info, unary_ops, 48);
static_assert(NNP_BACKEND_INFO_SIZE_1_16 == 52, "nnp_backend_info 1.16");
static_assert(NNP_DTYPES_1_7 == 0x1FF && NNP_UNARY_OPS_1_7 == 0xFFFF, "the 1.7 sets");
// ---- ABI 1.17 ----
static_assert(NNP_I16 == 9 && NNP_U16 == 10 && NNP_U32 == 11 && NNP_U64 == 12 && NNP_DTYPE_COUNT == 13,
              "1.17's dtypes, appended");
static_assert(NNP_DTYPES_1_17 == 0x1FFF, "the 1.17 set");
// ---- ABI 1.18 ----
PIN(nnp_kernels, layer_norm, 144);
PIN(nnp_kernels, gemm_epilogue, 152);
static_assert(NNP_KERNELS_SIZE_1_18 == 160, "nnp_kernels 1.18 is 160 bytes");
PIN(nnp_api, layer_norm_fused, 1976);
static_assert(NNP_API_SIZE_1_18 == 1984, "nnp_api 1.18 is 1984 bytes");
PIN(nnp_conv2d_params, activation, 64);
static_assert(sizeof(nnp_conv2d_params) == 72 && NNP_CONV2D_PARAMS_SIZE_1_18 == 72, "nnp_conv2d_params 1.18");
static_assert(NNP_ACTIVATION_NONE == 0 && NNP_ACTIVATION_RELU == 1, "the 1.18 activations");
// ---- ABI 1.19 ----
PIN(nnp_kernels, quantized_gemm, 160);
PIN(nnp_kernels, elementwise_chain, 168);
static_assert(NNP_KERNELS_SIZE_1_19 == 176, "nnp_kernels 1.19 is 176 bytes");
PIN(nnp_elementwise_step, kind, 0);
PIN(nnp_elementwise_step, op, 4);
PIN(nnp_elementwise_step, a, 8);
PIN(nnp_elementwise_step, b, 12);
static_assert(sizeof(nnp_elementwise_step) == 16 && NNP_STEP_UNARY == 0 && NNP_STEP_BINARY == 1,
              "nnp_elementwise_step 1.19");
PIN(nnp_api, quantized_matmul, 1984);
PIN(nnp_api, module_compile, 1992);
PIN(nnp_api, module_compile_explain, 2000);
static_assert(NNP_API_SIZE_1_19 == 2008, "nnp_api 1.19 is 2008 bytes");
PIN(nnp_compile_options, fixed_batch, 8);
static_assert(NNP_COMPILE_OPTIONS_SIZE_1_19 == 12, "nnp_compile_options 1.19");
// ---- ABI 1.20 ----
PIN(nnp_kernels, attention, 176);
static_assert(NNP_KERNELS_SIZE_1_20 == 184, "nnp_kernels 1.20 is 184 bytes");
PIN(nnp_graph_op, host_inputs, 40);
static_assert(sizeof(nnp_graph_op) == 48 && NNP_GRAPH_OP_SIZE_1_20 == 48, "nnp_graph_op 1.20 is 48 bytes");
PIN(nnp_api, npy_load, 2008);
PIN(nnp_api, npy_save, 2016);
static_assert(NNP_API_SIZE_1_20 == 2024, "nnp_api 1.20 is 2024 bytes");
// ---- ABI 1.21 ----
PIN(nnp_kernels, conv2d_pack, 184);
PIN(nnp_kernels, conv2d_packed, 192);
PIN(nnp_kernels, gemm_pack, 200);
PIN(nnp_kernels, gemm_packed, 208);
static_assert(NNP_KERNELS_SIZE_1_21 == 216, "nnp_kernels 1.21 is 216 bytes");
// ---- ABI 1.22 ----
PIN(nnp_kernels, quantized_conv2d_pack, 216);
PIN(nnp_kernels, quantized_conv2d_packed, 224);
static_assert(NNP_KERNELS_SIZE_1_22 == 232, "nnp_kernels 1.22 is 232 bytes");
PIN(nnp_quantized_conv2d_params, input_inv_scale, 8);
PIN(nnp_quantized_conv2d_params, input_offset_min, 12);
PIN(nnp_quantized_conv2d_params, output_scale, 16);
PIN(nnp_quantized_conv2d_params, output_inv_scale, 20);
PIN(nnp_quantized_conv2d_params, output_zero_point, 24);
PIN(nnp_quantized_conv2d_params, output_min, 28);
PIN(nnp_quantized_conv2d_params, output_max, 32);
static_assert(sizeof(nnp_quantized_conv2d_params) == 40 && NNP_QUANTIZED_CONV2D_PARAMS_SIZE_1_22 == 36,
              "nnp_quantized_conv2d_params 1.22 is 40 bytes");
// ---- ABI 1.23 ----
PIN(nnp_kernels, add_layer_norm, 232);
static_assert(NNP_KERNELS_SIZE_1_23 == 240, "nnp_kernels 1.23 is 240 bytes");
// ---- ABI 1.24 ----
PIN(nnp_compile_options, fallback, 16);
static_assert(sizeof(nnp_compile_options) == 24 && NNP_COMPILE_OPTIONS_SIZE_1_24 == 24, "nnp_compile_options 1.24");
PIN(nnp_backend, missing_kernels, 152);
PIN(nnp_backend, capability, 160);
PIN(nnp_backend, compile, 168);
PIN(nnp_backend, execute, 176);
PIN(nnp_backend, release, 184);
static_assert(NNP_BACKEND_SIZE_1_24 == 192, "nnp_backend 1.24 is 192 bytes");
PIN(nnp_graph_value, name, 8);
PIN(nnp_graph_value, dtype, 16);
PIN(nnp_graph_value, ndim, 20);
PIN(nnp_graph_value, shape, 24);
PIN(nnp_graph_value, constant, 32);
static_assert(sizeof(nnp_graph_value) == 40 && NNP_GRAPH_VALUE_SIZE_1_24 == 40, "nnp_graph_value 1.24");
PIN(nnp_graph_node, op_type, 8);
PIN(nnp_graph_node, domain, 16);
PIN(nnp_graph_node, attrs, 24);
PIN(nnp_graph_node, inputs, 32);
PIN(nnp_graph_node, n_inputs, 40);
PIN(nnp_graph_node, outputs, 48);
PIN(nnp_graph_node, n_outputs, 56);
static_assert(sizeof(nnp_graph_node) == 64 && NNP_GRAPH_NODE_SIZE_1_24 == 60, "nnp_graph_node 1.24");
PIN(nnp_graph, values, 8);
PIN(nnp_graph, n_values, 16);
PIN(nnp_graph, nodes, 24);
PIN(nnp_graph, n_nodes, 32);
PIN(nnp_graph, inputs, 40);
PIN(nnp_graph, n_inputs, 48);
PIN(nnp_graph, outputs, 56);
PIN(nnp_graph, n_outputs, 64);
static_assert(sizeof(nnp_graph) == 72 && NNP_GRAPH_SIZE_1_24 == 68, "nnp_graph 1.24");
PIN(nnp_backend_info, missing_kernels, 52);
static_assert(sizeof(nnp_backend_info) == 56 && NNP_BACKEND_INFO_SIZE_1_24 == 56, "nnp_backend_info 1.24 is 56 bytes");
// ---- ABI 1.25 ----
PIN(nnp_api, step_compile, 2024);
PIN(nnp_api, step_call, 2032);
PIN(nnp_api, step_explain, 2040);
PIN(nnp_api, step_release, 2048);
static_assert(NNP_API_SIZE_1_25 == 2056, "nnp_api 1.25 is 2056 bytes");
static_assert(NNP_STEP_MAX_OUTPUTS == 16, "a captured step gives at most 16 results");
// ---- ABI 1.26 ----
PIN(nnp_kernels, relu_backward, 240);
static_assert(NNP_KERNELS_SIZE_1_26 == 248, "nnp_kernels 1.26 is 248 bytes");
// ---- ABI 1.27 ----
PIN(nnp_api, autocast_enter, 2056);
PIN(nnp_api, autocast_exit, 2064);
PIN(nnp_api, autocast_state, 2072);
PIN(nnp_api, autocast_args, 2080);
PIN(nnp_api, amp_unscale_grads, 2088);
PIN(nnp_api, checkpoint, 2096);
static_assert(NNP_API_SIZE_1_27 == 2104, "nnp_api 1.27 is 2104 bytes");
PIN(nnp_kernels, unscale_check, 248);
static_assert(NNP_KERNELS_SIZE_1_27 == 256, "nnp_kernels 1.27 is 256 bytes");
PIN(nnp_backend, autocast_dtype, 192);
static_assert(sizeof(nnp_backend) == 200 && NNP_BACKEND_SIZE_1_27 == 196, "nnp_backend 1.27");
static_assert(NNP_AUTOCAST_PREFERRED == -1, "autocast_enter's preferred dtype");
// ---- ABI 1.28 ----
PIN(nnp_api, memory_stats, 2104);
PIN(nnp_api, reset_peak_memory_stats, 2112);
static_assert(sizeof(nnp_api) == 2120 && NNP_API_SIZE_1_28 == 2120, "nnp_api 1.28 is 2120 bytes");
PIN(nnp_memory_stats, allocated_bytes, 8);
PIN(nnp_memory_stats, peak_allocated_bytes, 16);
PIN(nnp_memory_stats, allocations, 24);
PIN(nnp_memory_stats, total_allocations, 32);
static_assert(sizeof(nnp_memory_stats) == 40, "nnp_memory_stats 1.28 is 40 bytes");
// ---- ABI 1.29 ----
PIN(nnp_kernels, conv2d_integer_pack, 256);
PIN(nnp_kernels, conv2d_integer_packed, 264);
PIN(nnp_kernels, dynamic_quantize_linear, 272);
static_assert(sizeof(nnp_kernels) == 280 && NNP_KERNELS_SIZE_1_29 == 280, "nnp_kernels 1.29 is 280 bytes");
static_assert(NNP_KERNEL_RANDOM == 11 && NNP_KERNEL_REQUIRED_COUNT == 12 && NNP_PROFILE_COPY == 4,
              "kernel slot numbers and the copy event kind");
PIN(nnp_comm_info, name, 8);
PIN(nnp_comm_info, plugin_path, 16);
PIN(nnp_comm_info, backends, 24);
static_assert(NNP_COMM_INFO_SIZE_1_10 == 32, "nnp_comm_info 1.10");
PIN(nnp_comm_info, unavailable_reason, 32);
static_assert(sizeof(nnp_comm_info) == 40 && NNP_COMM_INFO_SIZE_1_11 == 40, "nnp_comm_info 1.11");
static_assert(sizeof(nnp_plugin_descriptor) == 48, "nnp_plugin_descriptor 1.1 is 48 bytes");
PIN(nnp_backend_info, flags, 40);
static_assert(NNP_BACKEND_INFO_SIZE_1_1 == 44, "nnp_backend_info 1.1 is 44 bytes and padding");
PIN(nnp_plugin_info, description, 48);
static_assert(sizeof(nnp_plugin_info) == 56, "nnp_plugin_info 1.1 is 56 bytes");

// The size constants the core checks struct_size against are these layouts.
static_assert(NNP_API_SIZE_1_0 == 1224 && NNP_API_SIZE_1_1 == 1272 && NNP_API_SIZE_1_2 == 1288 &&
                  NNP_API_SIZE_1_3 == 1408 && NNP_API_SIZE_1_5 == 1432 && NNP_API_SIZE_1_6 == 1600,
              "nnp_api sizes");
static_assert(NNP_MODULE_VTABLE_SIZE_1_3 == 56 && NNP_MODULE_VTABLE_SIZE_1_6 == 64, "nnp_module_vtable sizes");
static_assert(NNP_CSV_OPTIONS_SIZE_1_2 == 12 && NNP_CSV_INFO_SIZE_1_2 == 44, "csv struct sizes");
static_assert(NNP_PLUGIN_DESCRIPTOR_SIZE_1_0 == 40 && NNP_PLUGIN_DESCRIPTOR_SIZE_1_1 == 48, "descriptor sizes");
static_assert(NNP_BACKEND_SIZE_1_0 == 120 && NNP_KERNELS_SIZE_1_0 == 104 && NNP_KERNEL_CTX_SIZE_1_0 == 32,
              "backend sizes");
static_assert(NNP_BACKEND_INFO_SIZE_1_0 == 40 && NNP_BACKEND_INFO_SIZE_1_1 == 44, "nnp_backend_info sizes");
static_assert(NNP_PLUGIN_INFO_SIZE_1_0 == 48 && NNP_PLUGIN_INFO_SIZE_1_1 == 56, "nnp_plugin_info sizes");
static_assert(NNP_DEVICE_INFO_SIZE_1_0 == 36 && NNP_FUNCTION_SIZE_1_0 == 40, "device info, function sizes");
static_assert(NNP_MODULE_VTABLE_SIZE_1_0 == 48 && NNP_ATTR_DEF_SIZE_1_0 == 40 && NNP_LAYER_TYPE_SIZE_1_0 == 56,
              "module vtable, attribute and layer type sizes");
static_assert(sizeof(nnp_api_base) == 32 && offsetof(nnp_api, last_status) == 24, "nnp_api begins with its base");

TEST(AbiLayout, PinnedAtCompileTime) { SUCCEED() << "the static_asserts above are the test"; }

// Filled by field name: a slot left out would be NULL. Every slot of the
// table this core hands out is set.
TEST(AbiLayout, EveryTableSlotIsFilled) {
  const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  ASSERT_NE(api, nullptr);
  EXPECT_EQ(api->struct_size, sizeof(nnp_api));
  const size_t first = offsetof(nnp_api, last_error);
  for (size_t at = first; at < sizeof(nnp_api); at += sizeof(void (*)(void))) {
    void (*slot)(void) = nullptr;
    std::memcpy(&slot, reinterpret_cast<const char*>(api) + at, sizeof(slot));
    EXPECT_NE(slot, nullptr) << "slot at byte " << at << " is NULL";
  }
}

// A program whose nnp_get_api was refused learns why through the base.
TEST(AbiLayout, RefusedCallerReadsTheBase) {
  EXPECT_EQ(nnp_get_api(NNP_ABI_MAJOR + 1, 0), nullptr);
  const nnp_api_base* base = nnp_get_api_base();
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->abi_major, static_cast<uint32_t>(NNP_ABI_MAJOR));
  EXPECT_EQ(base->abi_minor, static_cast<uint32_t>(NNP_ABI_MINOR));
  EXPECT_EQ(base->last_status(), NNP_ABI_MISMATCH);
  EXPECT_NE(std::string(base->last_error()).find("major versions differ"), std::string::npos) << base->last_error();
  EXPECT_EQ(nnp_get_api(0, 0), nullptr);  // major 0 is just another major, refused
  EXPECT_EQ(nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR + 1), nullptr);
  EXPECT_NE(std::string(base->last_error()).find("minor is newer"), std::string::npos) << base->last_error();
}
