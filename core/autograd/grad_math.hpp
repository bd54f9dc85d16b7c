// Short names for the plain ops the backward formulas are written in.
#pragma once

#include "../ops.hpp"

namespace nnp::core::autograd::math {

inline TensorRef add(const TensorRef& a, const TensorRef& b) { return core::binary(NNP_BINARY_ADD, *a, *b); }
inline TensorRef sub(const TensorRef& a, const TensorRef& b) { return core::binary(NNP_BINARY_SUB, *a, *b); }
inline TensorRef mul(const TensorRef& a, const TensorRef& b) { return core::binary(NNP_BINARY_MUL, *a, *b); }
inline TensorRef div(const TensorRef& a, const TensorRef& b) { return core::binary(NNP_BINARY_DIV, *a, *b); }
inline TensorRef un(nnp_unary_op op, const TensorRef& x) { return core::unary(op, *x); }
inline TensorRef cmp(nnp_binary_op op, const TensorRef& a, const TensorRef& b) { return core::binary(op, *a, *b); }
// A 0-d tensor holding v with like's dtype and device.
inline TensorRef scalar(const TensorRef& like, double v) { return core::full(Dims{}, v, like->dtype, like->device); }
inline TensorRef zeros_like(const TensorRef& like) { return core::full(like->shape, 0.0, like->dtype, like->device); }
inline TensorRef zeros(const Dims& shape, const TensorRef& like) {
  return core::full(shape, 0.0, like->dtype, like->device);
}
inline TensorRef where(const TensorRef& c, const TensorRef& a, const TensorRef& b) { return core::where(*c, *a, *b); }
// A tensor a backward keeps, with which data block it saw and that block's
// version (PyTorch's saved variables): when backward uses the values, an
// in-place write since, or data replaced under it, is an error naming the
// backward instead of a wrong gradient. Its shape, dtype and autograd state
// (*, ->) stay readable: a backward that only needs those (AddBackward's
// shapes) never fails.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(TensorRef t)
      : t_(std::move(t)),
        storage_id_(t_ ? t_->storage->id : 0),
        version_(t_ ? t_->storage->version.load(std::memory_order_relaxed) : 0) {}
  // The values: checked.
  operator const TensorRef&() const {  // NOLINT: implicit, so formulas read as before
    if (t_ && (t_->storage->id != storage_id_ || t_->storage->version.load(std::memory_order_relaxed) != version_))
      modified();
    return t_;
  }
  const TensorRef& values() const { return *this; }
  // The metadata: unchecked.
  const Tensor& operator*() const { return *t_; }
  const Tensor* operator->() const { return t_.get(); }
  explicit operator bool() const { return static_cast<bool>(t_); }

 private:
  [[noreturn]] void modified() const;
  TensorRef t_;
  uint64_t storage_id_ = 0;
  uint64_t version_ = 0;
};

inline SavedTensor share(const Tensor& t) { return SavedTensor(TensorRef::share(&t)); }
// How a backward keeps an op's own output: an alias of its data without its
// autograd state, since the output holds the node and the node must not hold
// the output back (a reference cycle that would never be freed).
inline SavedTensor saved_output(const Tensor& out) {
  return SavedTensor(make_view(out, out.shape, out.strides, out.offset));
}

}  // namespace nnp::core::autograd::math
