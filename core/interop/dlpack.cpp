#include "dlpack.hpp"

#include <memory>
#include <type_traits>

#include "../autograd/record.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../object_pool.hpp"
#include "../plugin_registry.hpp"

namespace nnp::core::interop {
namespace {

// What an exported tensor keeps alive until the consumer calls the deleter:
// the storage (through a view of its own, so later changes to the user's
// handle, such as Module::to, do not move the consumer's data), and the
// backend plugin's library, so the memory's free function stays mapped.
struct ExportState {
  TensorRef view;
  std::shared_ptr<const void> library;
  int64_t shape[NNP_MAX_DIMS] = {};
  int64_t strides[NNP_MAX_DIMS] = {};
};

// One allocation per export: the struct handed out and its state.
template <typename Managed>
struct Exported {
  Managed managed{};
  ExportState state;
};

DLDataType dl_dtype(nnp_dtype dtype, bool versioned, const char* op) {
  switch (dtype) {
    case NNP_F32: return {kDLFloat, 32, 1};
    case NNP_F64: return {kDLFloat, 64, 1};
    case NNP_F16: return {kDLFloat, 16, 1};
    case NNP_BF16: return {kDLBfloat, 16, 1};
    case NNP_I64: return {kDLInt, 64, 1};
    case NNP_I32: return {kDLInt, 32, 1};
    case NNP_U8: return {kDLUInt, 8, 1};
    case NNP_I8: return {kDLInt, 8, 1};
    case NNP_I16: return {kDLInt, 16, 1};
    case NNP_U16: return {kDLUInt, 16, 1};
    case NNP_U32: return {kDLUInt, 32, 1};
    case NNP_U64: return {kDLUInt, 64, 1};
    case NNP_BOOL:
      if (!versioned)
        fail(NNP_DTYPE_MISMATCH, op,
             ": DLPack 0.6 has no bool type; use to_dlpack_versioned (DLPack 1.0) or convert the tensor to u8 first");
      return {kDLBoolCode, 8, 1};
    default: fail(NNP_DTYPE_MISMATCH, op, ": unknown dtype ", dtype);
  }
}

nnp_dtype nnp_dtype_of(const DLDataType& t, const char* op) {
  if (t.lanes != 1) fail(NNP_DTYPE_MISMATCH, op, ": vector types (", int(t.lanes), " lanes) have no nnplug dtype");
  int bits = t.bits;
  switch (t.code) {
    case kDLFloat:
      if (bits == 32) return NNP_F32;
      if (bits == 64) return NNP_F64;
      if (bits == 16) return NNP_F16;
      break;
    case kDLBfloat:
      if (bits == 16) return NNP_BF16;
      break;
    case kDLInt:
      if (bits == 64) return NNP_I64;
      if (bits == 32) return NNP_I32;
      if (bits == 8) return NNP_I8;
      if (bits == 16) return NNP_I16;
      break;
    case kDLUInt:
      if (bits == 8) return NNP_U8;
      if (bits == 16) return NNP_U16;
      if (bits == 32) return NNP_U32;
      if (bits == 64) return NNP_U64;
      break;
    case kDLBoolCode:
      if (bits == 8) return NNP_BOOL;
      break;
    default: break;
  }
  fail(
      NNP_DTYPE_MISMATCH, op, ": DLPack type code ", int(t.code), " with ", bits,
      " bits has no nnplug dtype (nnplug has f32, f64, f16, bf16, i64, i32, u8, i8 and bool); convert the array first");
}

DLDevice dl_device(const Tensor& t, const char* op) {
  const BackendRecord& backend = t.backend();
  if (backend.host_memory()) return {kDLCPU, 0};
  if (backend.name() == "cuda") return {kDLCUDA, t.device.index};
  if (backend.name() == "rocm") return {kDLROCM, t.device.index};
  fail(NNP_UNIMPLEMENTED, op, ": backend '", backend.name(),
       "' has no DLPack device type (host-memory, cuda and rocm tensors can be exchanged); copy the tensor to one of "
       "those first");
}

const BackendRecord& backend_for(const DLDevice& device, const char* op) {
  PluginRegistry& registry = PluginRegistry::instance();
  registry.discover();
  const BackendRecord* backend = nullptr;
  const char* wanted = "";
  switch (device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:  // pinned host memory: the CPU reads it directly
    case kDLROCMHost:
      wanted = "cpu";
      backend = registry.find_backend("cpu");
      for (int32_t i = 0; backend == nullptr && i < registry.backend_count(); ++i)
        if (registry.backend(i).host_memory()) backend = &registry.backend(i);
      break;
    case kDLCUDA:
    case kDLCUDAManaged:
      wanted = "cuda";
      backend = registry.find_backend("cuda");
      break;
    case kDLROCM:
      wanted = "rocm";
      backend = registry.find_backend("rocm");
      break;
    default:
      fail(NNP_UNIMPLEMENTED, op, ": DLPack device type ", int(device.device_type),
           " has no nnplug backend (kDLCPU, kDLCUDA and kDLROCM arrays can be taken in)");
  }
  if (backend == nullptr)
    fail(NNP_NOT_FOUND, op, ": the array lives on a ", wanted, " device but no ", wanted,
         " backend is loaded (`nnplug plugins` lists what is)");
  int32_t index = backend->host_memory() ? 0 : device.device_id;
  if (index < 0 || index >= backend->device_count())
    fail(NNP_INVALID_ARGUMENT, op, ": ", backend->name(), " device ", device.device_id, " does not exist (",
         backend->device_count(), " devices)");
  return *backend;
}

template <typename Managed>
Managed* export_tensor(const Tensor& t, bool versioned, const char* op) {
  if (autograd::requires_grad(t))
    fail(NNP_INVALID_ARGUMENT, op,
         ": the tensor requires grad, which a DLPack consumer cannot follow; export a detached tensor instead");
  DLDataType dtype = dl_dtype(t.dtype, versioned, op);
  DLDevice device = dl_device(t, op);
  // The consumer reads the memory without knowing our stream: finish it.
  const nnp_backend& table = t.backend().table();
  check_plugin_status(table.synchronize(table.state, t.device.index), t.backend().name().c_str(), "synchronize");

  auto exported = std::make_unique<Exported<Managed>>();
  ExportState& state = exported->state;
  state.view = make_view(t, t.shape, t.strides, t.offset);
  state.library = t.backend().library();
  for (int32_t i = 0; i < t.shape.ndim; ++i) {
    state.shape[i] = t.shape.d[i];
    state.strides[i] = t.strides.d[i];
  }
  Managed& managed = exported->managed;
  managed.dl_tensor.data = t.data();
  managed.dl_tensor.device = device;
  managed.dl_tensor.ndim = t.shape.ndim;
  managed.dl_tensor.dtype = dtype;
  managed.dl_tensor.shape = state.shape;
  managed.dl_tensor.strides = state.strides;
  managed.dl_tensor.byte_offset = 0;
  managed.manager_ctx = exported.get();
  managed.deleter = [](Managed* self) { delete static_cast<Exported<Managed>*>(self->manager_ctx); };
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    managed.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    managed.flags = 0;
  }
  return &exported.release()->managed;
}

template <typename Managed>
TensorRef import_tensor(Managed* src, const char* op) {
  if (src == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": src is NULL");
  const DLTensor& d = src->dl_tensor;
  if (d.ndim < 0 || d.ndim > NNP_MAX_DIMS)
    fail(NNP_SHAPE_MISMATCH, op, ": the array has ", d.ndim, " dimensions; nnplug tensors have 0 to ", NNP_MAX_DIMS);
  if (d.ndim > 0 && d.shape == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": dl_tensor.shape is NULL");
  nnp_dtype dtype = nnp_dtype_of(d.dtype, op);
  const BackendRecord& backend = backend_for(d.device, op);

  Dims shape;
  shape.ndim = d.ndim;
  for (int32_t i = 0; i < d.ndim; ++i) {
    if (d.shape[i] < 0) fail(NNP_SHAPE_MISMATCH, op, ": dimension ", i, " has negative size ", d.shape[i]);
    shape.d[i] = d.shape[i];
  }
  // NULL strides mean compact row-major (DLPack's rule).
  Dims strides = d.strides ? Dims{} : contiguous_strides(shape);
  if (d.strides) {
    strides.ndim = d.ndim;
    for (int32_t i = 0; i < d.ndim; ++i) {
      if (d.strides[i] < 0)
        fail(NNP_INVALID_ARGUMENT, op, ": dimension ", i, " has negative stride ", d.strides[i],
             "; nnplug views need non-negative strides, so make the array contiguous first");
      strides.d[i] = d.strides[i];
    }
  }
  size_t itemsize = dtype_size(dtype);
  int64_t numel = shape.numel();
  // The bytes the view can reach: up to its last element.
  size_t bytes = 0;
  if (numel > 0) {
    Dims span;
    span.ndim = 1;
    span.d[0] = 1;
    for (int32_t i = 0; i < shape.ndim; ++i) span.d[0] += (shape.d[i] - 1) * strides.d[i];
    bytes = checked_bytes(op, span, itemsize);
  }
  char* first = d.data ? static_cast<char*>(d.data) + d.byte_offset : nullptr;
  if (numel > 0 && first == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": dl_tensor.data is NULL");
  if (reinterpret_cast<uintptr_t>(first) % itemsize != 0)
    fail(NNP_INVALID_ARGUMENT, op, ": the data (with byte_offset ", d.byte_offset, ") is not aligned to its ", itemsize,
         "-byte elements");

  Storage* storage = ObjectPool<Storage>::create();
  storage->backend = &backend;
  storage->device = backend.host_memory() ? 0 : d.device.device_id;
  storage->data = first;
  storage->bytes = bytes;
  storage->external_context = src;
  storage->release_external = [](void* context) {
    auto* managed = static_cast<Managed*>(context);
    if (managed->deleter) managed->deleter(managed);
  };
  Tensor* t = ObjectPool<Tensor>::create();
  t->storage = storage;
  t->shape = shape;
  t->strides = strides;
  t->numel = numel;
  t->dtype = dtype;
  t->device = nnp_device{backend.id(), storage->device};
  return TensorRef::adopt(t);
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) { return export_tensor<DLManagedTensor>(t, false, "to_dlpack"); }

DLManagedTensorVersioned* to_dlpack_versioned(const Tensor& t) {
  return export_tensor<DLManagedTensorVersioned>(t, true, "to_dlpack_versioned");
}

TensorRef from_dlpack(DLManagedTensor* src) { return import_tensor(src, "from_dlpack"); }

TensorRef from_dlpack_versioned(DLManagedTensorVersioned* src) {
  const char* op = "from_dlpack_versioned";
  if (src == nullptr) fail(NNP_INVALID_ARGUMENT, op, ": src is NULL");
  // A newer major may have moved every field after `version`: read nothing.
  if (src->version.major != DLPACK_MAJOR_VERSION)
    fail(NNP_ABI_MISMATCH, op, ": the array is DLPack ", src->version.major, ".", src->version.minor,
         " but nnplug reads DLPack ", DLPACK_MAJOR_VERSION, ".x");
  if (src->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
    fail(NNP_UNIMPLEMENTED, op,
         ": the array is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) and nnplug tensors are writable; pass a writable "
         "copy");
  return import_tensor(src, op);
}

}  // namespace nnp::core::interop
