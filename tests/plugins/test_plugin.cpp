// One source, many test plugins: NNP_TEST_PLUGIN selects what this build of
// it gets right or wrong. Each broken variant must be refused by the loader
// with its path and reason while the others still load.
#include <nnp/plugin.h>

#include <cstdint>
#include <stdexcept>

#define GOOD 1
#define WRONG_MAJOR 2
#define NEWER_MINOR 3
#define NULL_ENTRY 4
#define INIT_FAILS 5
#define INIT_THROWS 6
#define DUPLICATE_BACKEND 7
#define NULL_KERNEL_SLOT 8
#define NO_ENTRY 9
#define DUPLICATE_PLUGIN 10
#define REENTRANT 11
#define MANY_DEVICES 12

namespace {

const nnp_api* g_api = nullptr;

// Kernels of a backend that exists only to be registered.
nnp_status unimplemented() {
  g_api->set_error(NNP_UNIMPLEMENTED, "test plugin: kernels are not implemented");
  return NNP_UNIMPLEMENTED;
}
nnp_status k_copy(const nnp_kernel_ctx*, const nnp_view*, const nnp_view*) { return unimplemented(); }
nnp_status k_fill(const nnp_kernel_ctx*, const nnp_view*, double) { return unimplemented(); }
nnp_status k_unary(const nnp_kernel_ctx*, nnp_unary_op, const nnp_view*, const nnp_view*) { return unimplemented(); }
nnp_status k_binary(const nnp_kernel_ctx*, nnp_binary_op, const nnp_view*, const nnp_view*, const nnp_view*) {
  return unimplemented();
}
nnp_status k_where(const nnp_kernel_ctx*, const nnp_view*, const nnp_view*, const nnp_view*, const nnp_view*) {
  return unimplemented();
}
nnp_status k_reduce(const nnp_kernel_ctx*, nnp_reduce_op, const nnp_view*, int32_t, double, const nnp_view*) {
  return unimplemented();
}
nnp_status k_gemm(const nnp_kernel_ctx*, const nnp_view*, const nnp_view*, const nnp_view*) { return unimplemented(); }
nnp_status k_softmax(const nnp_kernel_ctx*, const nnp_view*, int32_t, int32_t, const nnp_view*) {
  return unimplemented();
}
nnp_status k_index(const nnp_kernel_ctx*, const nnp_view*, int32_t, const nnp_view*, const nnp_view*) {
  return unimplemented();
}
nnp_status k_random(const nnp_kernel_ctx*, nnp_random_kind, uint64_t, uint64_t, double, double, const nnp_view*) {
  return unimplemented();
}

#if NNP_TEST_PLUGIN == MANY_DEVICES
int32_t device_count(void*) { return INT32_MAX; }  // a device list no host could hold
#else
int32_t device_count(void*) { return 0; }
#endif
const char* unavailable_reason(void*) { return "test plugin: no such hardware"; }
nnp_status device_info(void*, int32_t, nnp_device_info*) { return unimplemented(); }
nnp_status alloc(void*, int32_t, size_t, void**) { return unimplemented(); }
void release(void*, int32_t, void*, size_t) {}
nnp_status copy_bytes(void*, int32_t, void*, const void*, size_t) { return unimplemented(); }
nnp_status synchronize(void*, int32_t) { return NNP_OK; }

nnp_kernels kernels = [] {
  nnp_kernels k{};
  k.struct_size = sizeof(nnp_kernels);
  k.copy = k_copy;
  k.fill = k_fill;
  k.unary = k_unary;
  k.binary = k_binary;
  k.where = k_where;
  k.reduce = k_reduce;
  k.gemm = k_gemm;
  k.softmax = k_softmax;
  k.index_select = k_index;
  k.gather = k_index;
  k.scatter_add = k_index;
  k.random = k_random;
  return k;
}();

nnp_backend backend = [] {
  nnp_backend b{};
  b.struct_size = sizeof(nnp_backend);
  b.name = NNP_TEST_BACKEND_NAME;
  b.score = 1;
  b.device_count = device_count;
  b.unavailable_reason = unavailable_reason;
  b.device_info = device_info;
  b.alloc = alloc;
  b.free = release;
  b.copy_from_host = copy_bytes;
  b.copy_to_host = copy_bytes;
  b.copy_on_device = copy_bytes;
  b.synchronize = synchronize;
  b.kernels = &kernels;
  return b;
}();

[[maybe_unused]] nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  g_api = api;
#if NNP_TEST_PLUGIN == INIT_THROWS
  throw std::runtime_error("test plugin: init threw on purpose");
#endif
#if NNP_TEST_PLUGIN == REENTRANT
  // Calls that need the registry, made while the registry is loading this
  // plugin (possibly during discovery): they must answer, not deadlock.
  nnp_device device;
  (void)api->device_parse("cpu", &device);
  (void)api->plugin_count();
#endif
#if NNP_TEST_PLUGIN == NULL_KERNEL_SLOT
  kernels.gemm = nullptr;
#endif
  nnp_status status = api->register_backend(host, &backend);
#if NNP_TEST_PLUGIN == INIT_FAILS
  (void)status;
  api->set_error(NNP_DEVICE_ERROR, "test plugin: the device refused to start");
  return NNP_DEVICE_ERROR;
#else
  return status;
#endif
}

}  // namespace

#if NNP_TEST_PLUGIN != NO_ENTRY
NNP_PLUGIN_ENTRY {
#if NNP_TEST_PLUGIN == NULL_ENTRY
  return nullptr;
#else
  static const nnp_plugin_descriptor descriptor = {
    sizeof(nnp_plugin_descriptor),
#if NNP_TEST_PLUGIN == WRONG_MAJOR
    NNP_ABI_MAJOR + 1,
#else
    NNP_ABI_MAJOR,
#endif
#if NNP_TEST_PLUGIN == NEWER_MINOR
    NNP_ABI_MINOR + 1,
#else
    NNP_ABI_MINOR,
#endif
    NNP_TEST_PLUGIN_NAME,
    "0.0.1",
    init,
    "a plugin of the loader's test corpus",
  };
  return &descriptor;
#endif
}
#endif
