// Adapters: tensor handles, creation, random numbers and data movement.
#include "../autograd/functions.hpp"
#include "../capture/tape.hpp"
#include "../device.hpp"
#include "../ops.hpp"
#include "../random_state.hpp"
#include "arguments.hpp"
#include "entries.hpp"

namespace nnp::core::api {

// Property reads cannot report a status: a NULL tensor answers neutral values.
void tensor_retain(nnp_tensor* t) {
  if (t) retain(t);
}
void tensor_release(nnp_tensor* t) {
  if (t) release(t);
}
int32_t tensor_ndim(const nnp_tensor* t) { return t ? t->shape.ndim : 0; }
const int64_t* tensor_shape(const nnp_tensor* t) { return t ? t->shape.d : nullptr; }
const int64_t* tensor_strides(const nnp_tensor* t) { return t ? t->strides.d : nullptr; }
int64_t tensor_offset(const nnp_tensor* t) { return t ? t->offset : 0; }
int64_t tensor_numel(const nnp_tensor* t) { return t ? t->numel : 0; }
nnp_dtype tensor_dtype(const nnp_tensor* t) { return t ? t->dtype : -1; }
nnp_device tensor_device(const nnp_tensor* t) { return t ? t->device : nnp_device{-1, -1}; }
int32_t tensor_is_contiguous(const nnp_tensor* t) { return t && t->is_contiguous() ? 1 : 0; }
void* tensor_data(const nnp_tensor* t) {
  // Code that reads or writes the memory itself runs only when it is called.
  if (t && capture::any_recording())
    capture::refuse("the step reaches a tensor's memory directly (tensor_data, as a plugin layer computing on the "
                    "host does): that work is not recorded");
  return t ? t->data() : nullptr;
}

nnp_status empty(const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device, nnp_tensor** out) {
  return handle_out(out, "empty", [&] { return core::empty(Dims::from_user("empty", shape, ndim), dtype, device); });
}
nnp_status full(const int64_t* shape, int32_t ndim, double value, nnp_dtype dtype, nnp_device device,
                nnp_tensor** out) {
  return handle_out(out, "full",
                    [&] { return core::full(Dims::from_user("full", shape, ndim), value, dtype, device); });
}
nnp_status arange(double start, double end, double step, nnp_dtype dtype, nnp_device device, nnp_tensor** out) {
  return handle_out(out, "arange", [&] { return core::arange(start, end, step, dtype, device); });
}
nnp_status from_host(const void* data, const int64_t* shape, int32_t ndim, nnp_dtype dtype, nnp_device device,
                     nnp_tensor** out) {
  return handle_out(out, "from_host",
                    [&] { return core::from_host(data, Dims::from_user("from_host", shape, ndim), dtype, device); });
}
nnp_status random(nnp_random_kind kind, double a, double b, const int64_t* shape, int32_t ndim, nnp_dtype dtype,
                  nnp_device device, nnp_tensor** out) {
  return handle_out(out, "random",
                    [&] { return core::random(kind, a, b, Dims::from_user("random", shape, ndim), dtype, device); });
}
void manual_seed(uint64_t seed) { core::manual_seed(seed); }
// Either output may be NULL (the function has no status to refuse with).
void get_rng_state(uint64_t* seed, uint64_t* offset) {
  uint64_t s = 0, o = 0;
  (void)guard([&] { core::get_rng_state(&s, &o); });
  optional_out(seed, s);
  optional_out(offset, o);
}
void set_rng_state(uint64_t seed, uint64_t offset) {
  (void)guard([&] { core::set_rng_state(seed, offset); });
}
nnp_status device_manual_seed(nnp_device device, uint64_t seed) {
  return guard([&] {
    check_device("device_manual_seed", device);
    core::set_device_rng_state(device, core::RngState{seed, 0});
  });
}
nnp_status device_get_rng_state(nnp_device device, uint64_t* seed, uint64_t* offset) {
  return guard([&] {
    check_device("device_get_rng_state", device);
    const core::RngState state = core::device_rng_state(device);
    optional_out(seed, state.seed);
    optional_out(offset, state.offset);
  });
}
nnp_status device_set_rng_state(nnp_device device, uint64_t seed, uint64_t offset) {
  return guard([&] {
    check_device("device_set_rng_state", device);
    core::set_device_rng_state(device, core::RngState{seed, offset});
  });
}

nnp_status copy_to_host(const nnp_tensor* t, void* dst, size_t bytes) {
  return guard([&] { core::copy_to_host(tensor_arg(t, "copy_to_host"), dst, bytes); });
}
nnp_status copy_into(nnp_tensor* dst, const nnp_tensor* src) {
  return guard([&] { autograd::copy_into(in_arg(dst, "copy_into", "dst"), tensor_arg(src, "copy_into", "src")); });
}
nnp_status assign(nnp_tensor* dst, const nnp_tensor* value) {
  return guard([&] { autograd::assign(in_arg(dst, "assign", "dst"), tensor_arg(value, "assign", "value")); });
}
nnp_status to(const nnp_tensor* t, nnp_device device, nnp_dtype dtype, nnp_tensor** out) {
  return handle_out(out, "to", [&] { return autograd::to(tensor_arg(t, "to"), device, dtype); });
}

}  // namespace nnp::core::api
