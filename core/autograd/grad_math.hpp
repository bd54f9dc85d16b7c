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
inline TensorRef share(const Tensor& t) { return TensorRef::share(&t); }
// How a backward keeps an op's own output: an alias of its data without its
// autograd state, since the output holds the node and the node must not hold
// the output back (a reference cycle that would never be freed).
inline TensorRef saved_output(const Tensor& out) { return make_view(out, out.shape, out.strides, out.offset); }

}  // namespace nnp::core::autograd::math
