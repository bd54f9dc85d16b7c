/* The C API used from C99 (compiled with -std=c99 -pedantic-errors): the
 * table, devices, a computation, the copy out and an error with its text. */
#include <nnp/nnp.h>
#include <nnp/plugin.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(void) {
  const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  nnp_device cpu;
  int64_t shape[2] = {2, 3};
  int64_t row_shape[1] = {3};
  float a_data[6] = {1, 2, 3, 4, 5, 6};
  float b_data[3] = {10, 20, 30};
  float out[6];
  nnp_tensor *a = NULL, *b = NULL, *sum = NULL, *bad = NULL;
  int i;

  CHECK(api != NULL);
  if (!api) return 1;
  CHECK(api->struct_size >= sizeof(nnp_api));
  CHECK(nnp_get_api(NNP_ABI_MAJOR + 1, 0) == NULL);
  CHECK(strstr(api->last_error(), "major versions differ") != NULL);
  CHECK(nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR + 1) == NULL);

  CHECK(api->device_parse("cpu", &cpu) == NNP_OK);
  CHECK(api->from_host(a_data, shape, 2, NNP_F32, cpu, &a) == NNP_OK);
  CHECK(api->from_host(b_data, row_shape, 1, NNP_F32, cpu, &b) == NNP_OK);
  CHECK(api->binary(NNP_BINARY_ADD, a, b, &sum) == NNP_OK);
  CHECK(api->tensor_ndim(sum) == 2 && api->tensor_shape(sum)[1] == 3);
  CHECK(api->copy_to_host(sum, out, sizeof out) == NNP_OK);
  for (i = 0; i < 6; ++i) CHECK(out[i] == a_data[i] + b_data[i % 3]);

  CHECK(api->matmul(a, a, &bad) == NNP_SHAPE_MISMATCH);
  CHECK(bad == NULL);
  CHECK(strstr(api->last_error(), "[2,3] and [2,3]") != NULL);
  CHECK(api->last_status() == NNP_SHAPE_MISMATCH);
  CHECK(strcmp(api->status_name(NNP_SHAPE_MISMATCH), "NNP_SHAPE_MISMATCH") == 0);
  CHECK(api->binary(NNP_BINARY_ADD, NULL, b, &bad) == NNP_INVALID_ARGUMENT);
  CHECK(strstr(api->last_error(), "'a' is NULL") != NULL);
  CHECK(api->register_backend(NULL, NULL) == NNP_INVALID_ARGUMENT);

  api->tensor_release(sum);
  api->tensor_release(b);
  api->tensor_release(a);
  api->tensor_release(NULL);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("C API: all checks passed\n");
  return failures ? 1 : 0;
}
