/*
 * Every table and struct of the ABI (nnp.h, plugin.h, types.h), referenced
 * by one exported function, so `abidw` of this library records their
 * layouts. tests/abi/baseline.abi is that record for the last released
 * layouts; abi_check.sh compares today's against it with `abidiff`.
 * abi_check.sh also fails when a struct of the headers is missing here.
 */
#include <nnp/plugin.h>

NNP_EXPORT void nnp_abi_types(
    /* the tables */
    nnp_api* api, nnp_api_base* base, nnp_plugin_descriptor* descriptor, nnp_backend* backend, nnp_kernels* kernels,
    nnp_comm* comm, nnp_comm_store* comm_store, nnp_module_vtable* vtable, nnp_function* function,
    nnp_layer_type* layer_type, nnp_optimizer_algorithm* algorithm, nnp_graph_op* graph_op,
    /* the structs */
    nnp_device* device, nnp_device_info* device_info, nnp_backend_info* backend_info, nnp_plugin_info* plugin_info,
    nnp_process_group_options* group_options, nnp_comm_info* comm_info, nnp_conv2d_params* conv2d,
    nnp_pool2d_params* pool2d, nnp_sgd_params* sgd, nnp_prune_spec* prune, nnp_op_info* op_info,
    nnp_profiler_options* profiler_options, nnp_profile_event* profile_event, nnp_attr_def* attr_def,
    nnp_csv_options* csv_options, nnp_csv_info* csv_info, nnp_onnx_export_options* onnx_export, nnp_view* view,
    nnp_kernel_ctx* kernel_ctx) {
  (void)api, (void)base, (void)descriptor, (void)backend, (void)kernels, (void)comm, (void)comm_store, (void)vtable;
  (void)function, (void)layer_type, (void)algorithm, (void)graph_op, (void)device, (void)device_info;
  (void)backend_info, (void)plugin_info, (void)group_options, (void)comm_info, (void)conv2d, (void)pool2d, (void)sgd;
  (void)prune, (void)op_info, (void)profiler_options, (void)profile_event, (void)attr_def, (void)csv_options;
  (void)csv_info, (void)onnx_export, (void)view, (void)kernel_ctx;
}

/* Structs added after the baseline, one function per minor: a parameter
 * added to nnp_abi_types would read to abidiff as a changed function. */
NNP_EXPORT void nnp_abi_types_1_28(nnp_memory_stats* memory_stats) { (void)memory_stats; }
