#include "tensor.hpp"

#include "autograd/node.hpp"
#include "capture/tape.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "object_pool.hpp"
#include "plugin_registry.hpp"
#include "profiler/profiler.hpp"

namespace nnp::core {

void retain(Storage* storage) { storage->refs.fetch_add(1, std::memory_order_relaxed); }

void release(Storage* storage) {
  if (storage->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const nnp_backend& table = storage->backend->table();
  if (storage->release_external) {
    storage->release_external(storage->external_context);
  } else if (storage->data) {
    if (profiler::active()) profiler::note_free(storage->bytes);
    storage->backend->memory(storage->device).freed(static_cast<int64_t>(storage->bytes));
    table.free(table.state, storage->device, storage->data, storage->bytes);
  }
  ObjectPool<Storage>::destroy(storage);
}

void retain(Tensor* t) { t->refs.fetch_add(1, std::memory_order_relaxed); }

void release(Tensor* t) {
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  release(t->storage);
  Tensor* base = t->view_base;
  ObjectPool<Tensor>::destroy(t);
  if (base) release(base);
}

const BackendRecord& backend_of(nnp_device device) { return PluginRegistry::instance().backend(device.backend); }

namespace {

TensorRef allocate(const Dims& shape, nnp_dtype dtype, const BackendRecord& backend, nnp_device device) {
  if (!backend.computes(dtype)) {
    if (dtype == NNP_I8 && !backend.knows_1_7())
      fail(NNP_DTYPE_MISMATCH, "backend '", backend.name(),
           "' predates ABI 1.7 and cannot hold i8 tensors; keep them on cpu, or rebuild the backend against ABI 1.7");
    fail(NNP_DTYPE_MISMATCH, "backend '", backend.name(), "' does not compute ", dtype_name(dtype),
         " (it declares ", dtype_set_text(backend.dtypes()), "): keep ", dtype_name(dtype),
         " tensors on another device (cpu), or convert them with to(dtype) first");
  }
  size_t bytes = checked_bytes("allocation", shape, dtype_size(dtype));
  void* data = nullptr;
  if (bytes > 0) {
    const nnp_backend& table = backend.table();
    check_plugin_status(table.alloc(table.state, device.index, bytes, &data), backend.name().c_str(), "alloc");
    if (profiler::active()) profiler::note_alloc(bytes);
    backend.memory(device.index).allocated(static_cast<int64_t>(bytes));
  }
  Storage* storage = ObjectPool<Storage>::create();
  storage->backend = &backend;
  storage->device = device.index;
  storage->data = data;
  storage->bytes = bytes;
  if (capture::any_recording()) capture::note_allocation(storage);

  Tensor* t = ObjectPool<Tensor>::create();
  t->storage = storage;
  t->shape = shape;
  set_contiguous_strides(shape, t->strides);  // t is fresh: its other strides are 0
  t->numel = shape.numel();
  t->dtype = dtype;
  t->device = device;
  return TensorRef::adopt(t);
}

}  // namespace

TensorRef make_tensor(const Dims& shape, nnp_dtype dtype, nnp_device device) {
  return allocate(shape, dtype, backend_of(device), device);
}

TensorRef make_tensor_like(const Dims& shape, nnp_dtype dtype, const Tensor& like) {
  return allocate(shape, dtype, like.backend(), like.device);
}

TensorRef make_view(const Tensor& base, const Dims& shape, const Dims& strides, int64_t offset) {
  retain(base.storage);
  Tensor* t = ObjectPool<Tensor>::create();
  t->storage = base.storage;
  t->offset = offset;
  t->shape = shape;
  t->strides = strides;
  t->numel = shape.numel();
  t->dtype = base.dtype;
  t->device = base.device;
  t->is_view = true;
  return TensorRef::adopt(t);
}

void replace_data(Tensor& dst, const Tensor& src) {
  // A tensor saved for backward sees other data now: its check compares
  // storage ids, so no version bump is needed here.
  capture::note_replaced(dst.storage);
  retain(src.storage);
  Storage* old = dst.storage;
  dst.storage = src.storage;
  dst.offset = src.offset;
  dst.shape = src.shape;
  dst.strides = src.strides;
  dst.numel = src.numel;
  dst.dtype = src.dtype;
  dst.device = src.device;
  release(old);
}

bool can_adopt(const Tensor& dst, const Tensor& fresh) {
  auto sole_view = [](const Tensor& t) {
    const Storage& s = *t.storage;
    return s.refs.load(std::memory_order_acquire) == 1 && s.release_external == nullptr && t.offset == 0 &&
           t.is_contiguous() && s.bytes == static_cast<size_t>(t.numel) * dtype_size(t.dtype);
  };
  return &dst != &fresh && dst.storage != fresh.storage && dst.shape == fresh.shape && dst.dtype == fresh.dtype &&
         dst.device.backend == fresh.device.backend && dst.device.index == fresh.device.index && sole_view(dst) &&
         sole_view(fresh);
}

nnp_view kernel_view(const Tensor& t) {
  if (capture::any_recording()) capture::note_view(t.storage);
  nnp_view v;
  v.data = t.data();
  v.dtype = t.dtype;
  v.ndim = t.shape.ndim;
  for (int32_t i = 0; i < NNP_MAX_DIMS; ++i) {
    v.shape[i] = i < t.shape.ndim ? t.shape.d[i] : 0;
    v.strides[i] = i < t.shape.ndim ? t.strides.d[i] : 0;
  }
  return v;
}

nnp_view flat_view(const Tensor& t) {
  if (capture::any_recording()) capture::note_view(t.storage);
  nnp_view v;
  v.data = t.data();
  v.dtype = t.dtype;
  v.ndim = 1;
  v.shape[0] = t.numel;
  v.strides[0] = 1;
  // The unused dimensions are zero, as in every view. Written from 1 on, not
  // by value-initialising the whole view: gcc zeroes a whole 144-byte struct
  // with `rep stos`, which starts slowly, and this runs three times an op.
  for (int32_t i = 1; i < NNP_MAX_DIMS; ++i) v.shape[i] = v.strides[i] = 0;
  return v;
}

const nnp_kernel_ctx& kernel_ctx(const Tensor& t) { return t.backend().context(t.device.index); }

}  // namespace nnp::core

void* nnp_tensor::data() const {
  if (storage->data == nullptr) return nullptr;
  return static_cast<char*>(storage->data) + offset * static_cast<int64_t>(nnp::core::dtype_size(dtype));
}

