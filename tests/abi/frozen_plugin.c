/*
 * A layer plugin compiled against the frozen copy of the first released
 * headers (sdk-1.0/: ABI 1.0, the smaller nnp_api, nnp_plugin_descriptor,
 * nnp_backend_info and nnp_plugin_info). It must keep loading and running on
 * every later 1.x core: the test loads it and trains through its layer.
 *
 * abi10.Affine(features, scale = 2.0): y = x * weight + scale, with weight a
 * Parameter of shape [features] starting at 1, composed of core ops.
 *
 * Its init also checks that the core writes no byte past the 1.0 sizes of
 * the info structs it fills, and refuses to load otherwise.
 */
#include <nnp/plugin.h>
#include <string.h>

static const nnp_api* api;

typedef struct affine {
  double scale;
} affine;

static affine instances[16];
static int instance_count;

static nnp_status affine_forward(void* self, nnp_module* module, const nnp_tensor* const* inputs, int32_t n_inputs,
                                 nnp_tensor** output) {
  nnp_tensor* weight = NULL;
  nnp_tensor* scaled = NULL;
  nnp_tensor* shift = NULL;
  nnp_status status;
  const affine* a = (const affine*)self;
  if (n_inputs != 1) {
    api->set_error(NNP_INVALID_ARGUMENT, "abi10.Affine takes one input");
    return NNP_INVALID_ARGUMENT;
  }
  status = api->get_parameter(module, "weight", &weight);
  if (status == NNP_OK) status = api->binary(NNP_BINARY_MUL, inputs[0], weight, &scaled);
  if (status == NNP_OK)
    status = api->full(NULL, 0, a->scale, api->tensor_dtype(inputs[0]), api->tensor_device(inputs[0]), &shift);
  if (status == NNP_OK) status = api->binary(NNP_BINARY_ADD, scaled, shift, output);
  api->tensor_release(weight);
  api->tensor_release(scaled);
  api->tensor_release(shift);
  return status;
}

static nnp_status affine_create(const nnp_attrs* attrs, void* user_data, nnp_module** out) {
  nnp_module_vtable vtable;
  int64_t features = 0;
  int64_t shape[1];
  nnp_tensor* weight = NULL;
  nnp_device cpu;
  affine* a;
  nnp_status status;
  (void)user_data;
  if (instance_count == (int)(sizeof instances / sizeof instances[0])) {
    api->set_error(NNP_OUT_OF_MEMORY, "abi10.Affine: this test plugin holds 16 instances at most");
    return NNP_OUT_OF_MEMORY;
  }
  a = &instances[instance_count];
  status = api->attrs_get_int(attrs, "features", &features);
  if (status == NNP_OK) status = api->attrs_get_float(attrs, "scale", &a->scale);
  if (status == NNP_OK) status = api->device_parse("cpu", &cpu);
  if (status != NNP_OK) return status;
  memset(&vtable, 0, sizeof vtable);
  vtable.struct_size = sizeof vtable;
  vtable.forward = affine_forward;
  status = api->module_create("Affine", &vtable, a, out);
  if (status != NNP_OK) return status;
  shape[0] = features;
  status = api->full(shape, 1, 1.0, NNP_F32, cpu, &weight);
  if (status == NNP_OK) status = api->register_parameter(*out, "weight", weight, 1);
  api->tensor_release(weight);
  if (status != NNP_OK) {
    api->module_release(*out);
    *out = NULL;
    return status;
  }
  ++instance_count;
  return NNP_OK;
}

/* The core fills an info struct no further than the struct_size it is given. */
static int writes_within(size_t size, nnp_status (*fill)(int32_t, void*)) {
  unsigned char buffer[256];
  size_t i;
  memset(buffer, 0xAB, sizeof buffer);
  memcpy(buffer, &size, sizeof size);
  if (fill(0, buffer) != NNP_OK) return 0;
  for (i = size; i < sizeof buffer; ++i)
    if (buffer[i] != 0xAB) return 0;
  return 1;
}
static nnp_status fill_backend_info(int32_t i, void* out) { return api->backend_info(i, (nnp_backend_info*)out); }
static nnp_status fill_plugin_info(int32_t i, void* out) { return api->plugin_info(i, (nnp_plugin_info*)out); }

static const nnp_attr_def attrs[] = {
    {sizeof(nnp_attr_def), "features", NNP_ATTR_INT, 1, NULL, "size of the last dimension"},
    {sizeof(nnp_attr_def), "scale", NNP_ATTR_FLOAT, 0, "2.0", "added to every output"}};

static nnp_status init(const nnp_api* table, nnp_plugin_host* host) {
  nnp_layer_type type;
  api = table;
  if (table->struct_size < sizeof(nnp_api)) {
    table->set_error(NNP_ABI_MISMATCH, "abi10: the core's table is smaller than ABI 1.0's");
    return NNP_ABI_MISMATCH;
  }
  if (table->backend_count() > 0 && !writes_within(sizeof(nnp_backend_info), fill_backend_info)) {
    table->set_error(NNP_ABI_MISMATCH, "abi10: backend_info wrote past the 1.0 nnp_backend_info");
    return NNP_ABI_MISMATCH;
  }
  if (table->plugin_count() > 0 && !writes_within(sizeof(nnp_plugin_info), fill_plugin_info)) {
    table->set_error(NNP_ABI_MISMATCH, "abi10: plugin_info wrote past the 1.0 nnp_plugin_info");
    return NNP_ABI_MISMATCH;
  }
  memset(&type, 0, sizeof type);
  type.struct_size = sizeof type;
  type.name = "abi10.Affine";
  type.doc = "x * weight + scale, from a plugin built against ABI 1.0";
  type.attrs = attrs;
  type.attr_count = 2;
  type.create = affine_create;
  return table->register_layer_type(host, &type);
}

static const nnp_plugin_descriptor descriptor = {
    sizeof(nnp_plugin_descriptor), NNP_ABI_MAJOR, NNP_ABI_MINOR, "test.abi10", "1.0.0", init};

NNP_PLUGIN_ENTRY { return &descriptor; }
