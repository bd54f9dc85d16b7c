/* Modules through the raw C table, from C99: a linear layer defined with a
 * C vtable, a Sequential of two, traversal, a forward hook, backward, the
 * state dict, a safetensors round trip, and strict loading errors; a forward
 * that takes a string (forward_values, 1.3) and a hook that sees it. */
#include <nnp/nnp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const nnp_api* api;
static int failures = 0;
#define CHECK(cond)                                                                                    \
  do {                                                                                                 \
    if (!(cond)) {                                                                                     \
      fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #cond, api->last_error()); \
      ++failures;                                                                                      \
    }                                                                                                  \
  } while (0)

/* forward(x) = x @ weight + bias, reading the parameters by name. */
static nnp_status linear_forward(void* self, nnp_module* m, const nnp_tensor* const* inputs, int32_t n,
                                 nnp_tensor** out) {
  nnp_tensor *w = NULL, *b = NULL, *xw = NULL;
  nnp_status s;
  (void)self;
  if (n != 1) {
    api->set_error(NNP_INVALID_ARGUMENT, "linear: one input expected");
    return NNP_INVALID_ARGUMENT;
  }
  s = api->get_parameter(m, "weight", &w);
  if (s == NNP_OK) s = api->get_parameter(m, "bias", &b);
  if (s == NNP_OK) s = api->matmul(inputs[0], w, &xw);
  if (s == NNP_OK) s = api->binary(NNP_BINARY_ADD, xw, b, out);
  api->tensor_release(w);
  api->tensor_release(b);
  api->tensor_release(xw);
  return s;
}

static nnp_status linear_extra_repr(void* self, char* buf, size_t size, size_t* needed) {
  const char* text = (const char*)self;
  if (needed) *needed = strlen(text) + 1;
  if (buf && size > strlen(text)) strcpy(buf, text);
  return NNP_OK;
}

static nnp_module* make_linear(int64_t in, int64_t out, const char* description) {
  nnp_module_vtable vtable;
  nnp_module* m = NULL;
  nnp_tensor *w = NULL, *b = NULL;
  nnp_device cpu;
  int64_t wshape[2];
  int64_t bshape[1];
  wshape[0] = in;
  wshape[1] = out;
  bshape[0] = out;
  memset(&vtable, 0, sizeof vtable);
  vtable.struct_size = sizeof vtable;
  vtable.forward = linear_forward;
  vtable.extra_repr = linear_extra_repr;
  CHECK(api->device_parse("cpu", &cpu) == NNP_OK);
  CHECK(api->module_create("Linear", &vtable, (void*)description, &m) == NNP_OK);
  CHECK(api->random(NNP_RANDOM_NORMAL, 0, 1, wshape, 2, NNP_F32, cpu, &w) == NNP_OK);
  CHECK(api->full(bshape, 1, 0.5, NNP_F32, cpu, &b) == NNP_OK);
  CHECK(api->register_parameter(m, "weight", w, 1) == NNP_OK);
  CHECK(api->register_parameter(m, "bias", b, 1) == NNP_OK);
  api->tensor_release(w);
  api->tensor_release(b);
  return m;
}

/* A forward hook that adds 1 to the output. */
static nnp_status add_one(nnp_module* m, const nnp_tensor* const* a, int32_t n_a, const nnp_tensor* const* b,
                          int32_t n_b, nnp_tensor** replace, void* calls) {
  nnp_tensor* one = NULL;
  nnp_status s;
  (void)m;
  (void)a;
  (void)n_a;
  (void)n_b;
  ++*(int*)calls;
  s = api->full(NULL, 0, 1.0, api->tensor_dtype(b[0]), api->tensor_device(b[0]), &one);
  if (s == NNP_OK) s = api->binary(NNP_BINARY_ADD, b[0], one, &replace[0]);
  api->tensor_release(one);
  return s;
}

/* forward(x, how) = x * 2 for "double", x * 0.5 for "half"; also gives how. */
static nnp_status scale_forward(void* self, nnp_module* m, const nnp_list* args, nnp_list* outputs) {
  const char* how = api->list_string(args, 1);
  const nnp_tensor* x = api->list_tensor(args, 0);
  nnp_tensor *factor = NULL, *y = NULL;
  nnp_status s;
  (void)self;
  (void)m;
  if (api->list_size(args) != 2 || x == NULL || how == NULL || (strcmp(how, "double") && strcmp(how, "half"))) {
    api->set_error(NNP_INVALID_ARGUMENT, "Scale: forward(x, \"double\" or \"half\")");
    return NNP_INVALID_ARGUMENT;
  }
  s = api->full(NULL, 0, strcmp(how, "double") == 0 ? 2.0 : 0.5, api->tensor_dtype(x), api->tensor_device(x), &factor);
  if (s == NNP_OK) s = api->binary(NNP_BINARY_MUL, x, factor, &y);
  if (s == NNP_OK) s = api->list_append_tensor(outputs, "", y);
  if (s == NNP_OK) s = api->list_append_string(outputs, "", how);
  api->tensor_release(factor);
  api->tensor_release(y);
  return s;
}

/* A forward pre-hook that sees the string and turns "double" into "half". */
static nnp_status halve(nnp_module* m, const nnp_list* args, const nnp_list* outputs, nnp_list** replace, void* calls) {
  nnp_status s;
  (void)m;
  (void)outputs;
  ++*(int*)calls;
  if (api->list_string(args, 1) == NULL || strcmp(api->list_string(args, 1), "double") != 0) return NNP_OK;
  s = api->list_create(replace);
  if (s == NNP_OK) s = api->list_append_tensor(*replace, "", api->list_tensor(args, 0));
  if (s == NNP_OK) s = api->list_append_string(*replace, "", "half");
  return s;
}

static void check_forward_values(nnp_device cpu) {
  nnp_module_vtable vtable;
  nnp_module* m = NULL;
  nnp_list *args = NULL, *out = NULL;
  nnp_tensor* x = NULL;
  nnp_hook_handle* hook = NULL;
  int64_t shape[1] = {2};
  float values[2];
  int calls = 0;
  memset(&vtable, 0, sizeof vtable);
  vtable.struct_size = sizeof vtable;
  vtable.forward_values = scale_forward;
  CHECK(api->module_create("Scale", &vtable, NULL, &m) == NNP_OK);
  CHECK(api->full(shape, 1, 3.0, NNP_F32, cpu, &x) == NNP_OK);
  CHECK(api->list_create(&args) == NNP_OK);
  CHECK(api->list_append_tensor(args, "", x) == NNP_OK);
  CHECK(api->list_append_string(args, "", "double") == NNP_OK);
  CHECK(api->module_call_values(m, args, &out) == NNP_OK);
  CHECK(api->list_size(out) == 2 && api->list_kind(out, 0) == NNP_VALUE_TENSOR);
  CHECK(api->copy_to_host(api->list_tensor(out, 0), values, sizeof values) == NNP_OK);
  CHECK(values[0] == 6.0f && values[1] == 6.0f);
  CHECK(strcmp(api->list_string(out, 1), "double") == 0);
  api->list_release(out);
  out = NULL;

  CHECK(api->module_register_values_hook(m, NNP_HOOK_FORWARD_PRE, halve, &calls, NULL, 0, &hook) == NNP_OK);
  CHECK(api->module_call_values(m, args, &out) == NNP_OK);
  CHECK(calls == 1);
  CHECK(api->copy_to_host(api->list_tensor(out, 0), values, sizeof values) == NNP_OK);
  CHECK(values[0] == 1.5f && strcmp(api->list_string(out, 1), "half") == 0);
  api->hook_remove(hook);
  api->hook_release(hook);
  api->list_release(out);

  /* The module's own error comes back whole. */
  CHECK(api->list_remove(args, 1) == NNP_OK);
  CHECK(api->list_append_int(args, "", 2) == NNP_OK);
  CHECK(api->module_call_values(m, args, &out) == NNP_INVALID_ARGUMENT);
  CHECK(out == NULL && strstr(api->last_error(), "Scale: forward(x,") != NULL);
  api->list_release(args);
  api->tensor_release(x);
  api->module_release(m);
}

int main(void) {
  nnp_module *seq = NULL, *first, *second, *found = NULL, *fresh = NULL;
  nnp_list *params = NULL, *state = NULL, *loaded = NULL, *missing = NULL, *unexpected = NULL;
  nnp_tensor *x = NULL, *y = NULL, *y_hooked = NULL, *grad = NULL, *loss = NULL;
  nnp_hook_handle* hook = NULL;
  nnp_device cpu;
  int64_t xshape[1] = {4};
  int calls = 0;
  char text[512];
  size_t needed = 0;
  float before[3], after[3];
  const char* path = "c_module_test.safetensors";

  api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  if (!api) return 1;
  CHECK(api->device_parse("cpu", &cpu) == NNP_OK);
  first = make_linear(4, 3, "in_features=4, out_features=3");
  second = make_linear(3, 1, "in_features=3, out_features=1");
  CHECK(api->container_create(NNP_SEQUENTIAL, &seq) == NNP_OK);
  CHECK(api->register_module(seq, "0", first) == NNP_OK);
  CHECK(api->register_module(seq, "1", second) == NNP_OK);
  api->module_release(first); /* the Sequential keeps them */
  api->module_release(second);

  CHECK(api->named_parameters(seq, "", 1, 1, &params) == NNP_OK);
  CHECK(api->list_size(params) == 4);
  CHECK(strcmp(api->list_name(params, 0), "0.weight") == 0);
  CHECK(strcmp(api->list_name(params, 3), "1.bias") == 0);
  CHECK(api->requires_grad(api->list_tensor(params, 0)) == 1);

  CHECK(api->module_repr(seq, text, sizeof text, &needed) == NNP_OK);
  CHECK(strcmp(text,
               "Sequential(\n  (0): Linear(in_features=4, out_features=3)\n"
               "  (1): Linear(in_features=3, out_features=1)\n)") == 0);

  CHECK(api->random(NNP_RANDOM_NORMAL, 0, 1, xshape, 1, NNP_F32, cpu, &x) == NNP_OK);
  CHECK(api->module_call(seq, (const nnp_tensor* const*)&x, 1, &y) == NNP_OK);
  CHECK(api->tensor_ndim(y) == 1 && api->tensor_shape(y)[0] == 1);
  CHECK(api->module_register_hook(seq, NNP_HOOK_FORWARD, add_one, &calls, NULL, 0, &hook) == NNP_OK);
  CHECK(api->module_call(seq, (const nnp_tensor* const*)&x, 1, &y_hooked) == NNP_OK);
  CHECK(calls == 1);
  CHECK(api->copy_to_host(y, &before[0], sizeof(float)) == NNP_OK);
  CHECK(api->copy_to_host(y_hooked, &after[0], sizeof(float)) == NNP_OK);
  CHECK(after[0] == before[0] + 1.0f);
  api->hook_remove(hook);
  api->hook_remove(hook);
  api->hook_release(hook);

  CHECK(api->reduce(NNP_REDUCE_SUM, y, NULL, 0, 0, 0, &loss) == NNP_OK);
  CHECK(api->backward(loss, NULL, 0) == NNP_OK);
  CHECK(api->grad(api->list_tensor(params, 3), &grad) == NNP_OK);
  CHECK(grad != NULL);
  if (grad) {
    CHECK(api->copy_to_host(grad, &after[0], sizeof(float)) == NNP_OK);
    CHECK(after[0] == 1.0f); /* d sum / d bias */
  }

  CHECK(api->get_submodule(seq, "1", &found) == NNP_OK && found == second);
  api->module_release(found);
  CHECK(api->get_submodule(seq, "2", &found) == NNP_NOT_FOUND);
  CHECK(strstr(api->last_error(), "no submodule `2`") != NULL);

  CHECK(api->state_dict(seq, "", 0, &state) == NNP_OK);
  CHECK(api->list_size(state) == 4);
  CHECK(api->save_safetensors(state, path, NULL, NULL, 0) == NNP_OK);
  CHECK(api->load_safetensors(path, cpu, &loaded) == NNP_OK);
  CHECK(api->list_size(loaded) == 4);
  CHECK(api->list_find(loaded, "0.weight") >= 0);

  /* A fresh Sequential loads the file; one missing a key refuses it. */
  CHECK(api->container_create(NNP_SEQUENTIAL, &fresh) == NNP_OK);
  first = make_linear(4, 3, "a");
  CHECK(api->register_module(fresh, "0", first) == NNP_OK);
  api->module_release(first);
  CHECK(api->module_load(fresh, path, 1, &missing, &unexpected) == NNP_NOT_FOUND);
  CHECK(strstr(api->last_error(), "unexpected key(s): \"1.bias\", \"1.weight\"") != NULL);
  CHECK(api->module_load(fresh, path, 0, &missing, &unexpected) == NNP_OK);
  CHECK(api->list_size(missing) == 0 && api->list_size(unexpected) == 2);
  remove(path);
  check_forward_values(cpu);

  api->list_release(missing);
  api->list_release(unexpected);
  api->list_release(loaded);
  api->list_release(state);
  api->list_release(params);
  api->tensor_release(grad);
  api->tensor_release(loss);
  api->tensor_release(y_hooked);
  api->tensor_release(y);
  api->tensor_release(x);
  api->module_release(fresh);
  api->module_release(seq);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("C module API: all checks passed\n");
  return failures ? 1 : 0;
}
