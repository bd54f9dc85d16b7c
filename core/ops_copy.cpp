// Copies within and across devices, dtype conversion, contiguous and clone.
#include <vector>

#include "device.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "op_checks.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core {
namespace {

// Same device, or both devices in plain host memory (one kernel can read
// the other's data), so the destination's copy kernel does all the work.
bool directly_copyable(const Tensor& dst, const Tensor& src) {
  bool same = dst.device.backend == src.device.backend && dst.device.index == src.device.index;
  return same || (dst.backend().host_memory() && src.backend().host_memory());
}

void kernel_copy(Tensor& dst, const Tensor& src) {
  nnp_view vsrc = broadcast_view(src, dst.shape);
  nnp_view vdst = kernel_view(dst);
  nnp_view* views[] = {&vdst, &vsrc};
  coalesce(views, 2);
  run_kernel(dst, "copy", dst.backend().kernels().copy(&kernel_ctx(dst), &vsrc, &vdst));
}

// Moves src's elements to dst's device unchanged (contiguous, same dtype).
TensorRef stage_on(const Tensor& src, nnp_device device) {
  TensorRef packed = contiguous(src);
  TensorRef staged = make_tensor(src.shape, src.dtype, device);
  size_t bytes = staged->storage->bytes;
  if (bytes == 0) return staged;
  const BackendRecord& from = packed->backend();
  const BackendRecord& to_backend = staged->backend();
  const void* host = packed->data();
  std::vector<unsigned char> buffer;
  if (!from.host_memory()) {
    buffer.resize(bytes);
    check_plugin_status(
        from.table().copy_to_host(from.table().state, packed->device.index, buffer.data(), packed->data(), bytes),
        from.name().c_str(), "copy to host");
    host = buffer.data();
  }
  check_plugin_status(
      to_backend.table().copy_from_host(to_backend.table().state, device.index, staged->data(), host, bytes),
      to_backend.name().c_str(), "copy from host");
  return staged;
}

}  // namespace

void compute::copy_into(Tensor& dst, const Tensor& src) {
  if (broadcast_shapes("copy_into", src.shape, dst.shape) != dst.shape)
    fail(NNP_SHAPE_MISMATCH, "copy_into: source shape ", format_dims(src.shape),
         " cannot be broadcast to destination shape ", format_dims(dst.shape));
  if (dst.numel == 0) return;
  dst.storage->version.fetch_add(1, std::memory_order_relaxed);  // an in-place write
  if (!directly_copyable(dst, src)) {
    TensorRef staged = stage_on(src, dst.device);
    kernel_copy(dst, *staged);
    return;
  }
  if (dst.storage == src.storage) {  // kernels assume no overlap
    TensorRef copy = clone(src);
    kernel_copy(dst, *copy);
    return;
  }
  kernel_copy(dst, src);
}

void copy_to_host(const Tensor& t, void* dst, size_t bytes) {
  size_t expected = static_cast<size_t>(t.numel) * dtype_size(t.dtype);
  if (bytes != expected)
    fail(NNP_INVALID_ARGUMENT, "copy_to_host: buffer holds ", bytes, " bytes but the ", dtype_name(t.dtype),
         " tensor of shape ", format_dims(t.shape), " needs ", expected);
  if (expected == 0) return;
  if (dst == nullptr) fail(NNP_INVALID_ARGUMENT, "copy_to_host: destination is NULL");
  TensorRef packed = contiguous(t);
  const nnp_backend& table = packed->backend().table();
  check_plugin_status(table.copy_to_host(table.state, packed->device.index, dst, packed->data(), bytes),
                      packed->backend().name().c_str(), "copy_to_host");
}

TensorRef compute::to(const Tensor& t, nnp_device device, nnp_dtype dtype) {
  check_dtype("to", dtype);
  check_device("to", device);
  if (t.device.backend == device.backend && t.device.index == device.index && t.dtype == dtype)
    return TensorRef::share(&t);
  TensorRef out = make_tensor(t.shape, dtype, device);
  copy_into(*out, t);
  return out;
}

TensorRef compute::contiguous(const Tensor& t) { return t.is_contiguous() ? TensorRef::share(&t) : clone(t); }

TensorRef compute::clone(const Tensor& t) {
  TensorRef out = make_tensor_like(t.shape, t.dtype, t);
  if (t.numel > 0) kernel_copy(*out, t);
  return out;
}

}  // namespace nnp::core
