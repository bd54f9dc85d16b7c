// The tensor record behind an nnp_tensor handle: a strided view of a
// reference-counted storage block owned by one backend device.
#pragma once

#include <nnp/plugin.h>

#include <atomic>
#include <memory>
#include <utility>

#include "backend_record.hpp"
#include "shape.hpp"

namespace nnp::core {

namespace autograd {
struct AutogradMeta;
}

struct Storage {
  std::atomic<int32_t> refs{1};
  // Which block this is (never reused), and how many in-place writes it has
  // had: what a tensor saved for backward is checked against (PyTorch's
  // version counter, shared by every view of the block).
  uint64_t id = next_id();
  std::atomic<uint64_t> version{0};
  // How many captured steps' tapes read or write the block (capture/tape.hpp):
  // replacing a tensor's block that one does makes them capture again.
  std::atomic<int32_t> taped{0};
  // Unique in the process (compared for equality only). Each thread takes
  // them in blocks, so making a tensor rarely touches the shared counter.
  static uint64_t next_id() {
    constexpr uint64_t kBlock = 1024;
    static std::atomic<uint64_t> counter{1};
    thread_local uint64_t next = 0, end = 0;
    if (next == end) {
      next = counter.fetch_add(kBlock, std::memory_order_relaxed);
      end = next + kBlock;
    }
    return next++;
  }
  const BackendRecord* backend = nullptr;
  int32_t device = 0;
  void* data = nullptr;
  size_t bytes = 0;
  // Memory another library owns (a DLPack import): the last release calls
  // this instead of the backend's free.
  void (*release_external)(void* context) = nullptr;
  void* external_context = nullptr;
};

void retain(Storage* storage);
void release(Storage* storage);

}  // namespace nnp::core

struct nnp_tensor {
  std::atomic<int32_t> refs{1};
  nnp::core::Storage* storage = nullptr;
  int64_t offset = 0;  // elements into storage
  nnp::core::Dims shape;
  nnp::core::Dims strides;  // elements
  int64_t numel = 0;
  nnp_dtype dtype = NNP_F32;
  nnp_device device{};
  // Shares another tensor's data (a view op's result, detach(), aliases).
  bool is_view = false;
  // For a view op's result made in grad mode (PyTorch's differentiable
  // view): the tensor it views (the first non-view one up the chain; one
  // reference held), and the storage version its history was made at. An
  // in-place write to the view under autograd rewrites the base's history
  // (CopySlices); a write anywhere in the storage since makes the view's
  // history stale, and it is rebuilt from the base's (autograd/views.hpp).
  nnp_tensor* view_base = nullptr;
  std::atomic<uint64_t> view_version{0};
  // Set only for tensors that take part in autograd.
  std::shared_ptr<nnp::core::autograd::AutogradMeta> autograd;

  const nnp::core::BackendRecord& backend() const { return *storage->backend; }
  void* data() const;  // first element
  bool is_contiguous() const;
};

// Inline: every op asks it of each operand.
inline bool nnp_tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int32_t i = shape.ndim - 1; i >= 0; --i) {
    if (shape.d[i] == 1) continue;
    if (shape.d[i] == 0) return true;
    if (strides.d[i] != expected) return false;
    expected *= shape.d[i];
  }
  return true;
}

namespace nnp::core {

using Tensor = nnp_tensor;

void retain(Tensor* t);
void release(Tensor* t);

// An owning reference to a tensor record.
class TensorRef {
 public:
  TensorRef() = default;
  static TensorRef adopt(Tensor* t) { return TensorRef(t); }  // takes over one reference
  static TensorRef share(const Tensor* t) {
    retain(const_cast<Tensor*>(t));
    return TensorRef(const_cast<Tensor*>(t));
  }
  TensorRef(const TensorRef& other) : t_(other.t_) {
    if (t_) retain(t_);
  }
  TensorRef(TensorRef&& other) noexcept : t_(std::exchange(other.t_, nullptr)) {}
  TensorRef& operator=(TensorRef other) noexcept {
    std::swap(t_, other.t_);
    return *this;
  }
  ~TensorRef() {
    if (t_) release(t_);
  }
  Tensor* get() const { return t_; }
  Tensor* operator->() const { return t_; }
  Tensor& operator*() const { return *t_; }
  Tensor* take() { return std::exchange(t_, nullptr); }  // hands the reference out
  explicit operator bool() const { return t_ != nullptr; }

 private:
  explicit TensorRef(Tensor* t) : t_(t) {}
  Tensor* t_ = nullptr;
};

// A new tensor with fresh, uninitialised contiguous storage.
TensorRef make_tensor(const Dims& shape, nnp_dtype dtype, nnp_device device);
// The same on like's device (skips the registry lookup on op paths).
TensorRef make_tensor_like(const Dims& shape, nnp_dtype dtype, const Tensor& like);
// A tensor sharing base's storage with another shape, strides and offset.
TensorRef make_view(const Tensor& base, const Dims& shape, const Dims& strides, int64_t offset);

// Makes dst show src's data (storage, layout, dtype, device) while keeping
// dst's identity and autograd state: how Module::to changes parameters that
// optimizers and user code already hold (PyTorch's `param.data = ...`).
void replace_data(Tensor& dst, const Tensor& src);

// Whether dst can take fresh's values by adopting its storage, a step that
// cannot fail: dst must be the only view of a plain (not externally owned)
// storage it covers contiguously, and fresh a contiguous tensor of the same
// shape, dtype and device that nothing else views. Optimizers and
// load_state_dict compute new values first and then commit them this way, so
// that a failure part-way changes nothing.
bool can_adopt(const Tensor& dst, const Tensor& fresh);

// The raw view kernels receive.
nnp_view kernel_view(const Tensor& t);
// The same for a contiguous tensor, as one dimension of numel elements:
// what coalesce would make of it, without the walk.
nnp_view flat_view(const Tensor& t);

const BackendRecord& backend_of(nnp_device device);
const nnp_kernel_ctx& kernel_ctx(const Tensor& t);

}  // namespace nnp::core
