// Unary, binary and where: broadcasting, dtype rules, then one kernel call.
#include "dispatch/op_table.hpp"
#include "dtype.hpp"
#include "error.hpp"
#include "op_checks.hpp"
#include "op_compute.hpp"
#include "ops.hpp"

namespace nnp::core::compute {
namespace {

const char* unary_name(nnp_unary_op op) { return dispatch::op_name(dispatch::unary_id(op)); }
const char* binary_name(nnp_binary_op op) { return dispatch::op_name(dispatch::binary_id(op)); }

// Ops that stay in the integers; the rest promote integers to f32 as
// PyTorch does.
bool keeps_integers(nnp_unary_op op) {
  return op == NNP_UNARY_NEG || op == NNP_UNARY_ABS || op == NNP_UNARY_RELU || op == NNP_UNARY_SIGN;
}

bool is_comparison(nnp_binary_op op) { return op >= NNP_BINARY_EQ; }

}  // namespace

TensorRef unary(nnp_unary_op op, const Tensor& x) {
  const char* name = unary_name(op);
  if (x.dtype == NNP_BOOL)
    fail(NNP_DTYPE_MISMATCH, name, ": not defined for bool tensors (shape ", format_dims(x.shape),
         "); convert with to(dtype)");
  if (op >= NNP_UNARY_ROUND) check_knows_1_7(x, name);
  if (op == NNP_UNARY_ROUND && !is_floating(x.dtype)) return clone(x);  // integers are already round
  if (!is_floating(x.dtype) && !keeps_integers(op)) {
    TensorRef promoted = to(x, x.device, NNP_F32);
    return unary(op, *promoted);
  }
  TensorRef out = make_tensor_like(x.shape, x.dtype, x);
  if (out->numel == 0) return out;
  nnp_view vx = kernel_view(x), vo = kernel_view(*out);
  nnp_view* views[] = {&vo, &vx};
  coalesce(views, 2);
  run_kernel(x, name, x.backend().kernels().unary(&kernel_ctx(x), op, &vx, &vo));
  return out;
}

namespace {

// The checks shared by binary and binary_into; returns the broadcast shape.
Dims binary_shape(const char* name, nnp_binary_op op, const Tensor& a, const Tensor& b) {
  check_same_device(name, a, b);
  check_same_dtype(name, a, b);
  if (a.dtype == NNP_BOOL && op <= NNP_BINARY_POW)
    fail(NNP_DTYPE_MISMATCH, name, ": arithmetic is not defined for bool tensors (shapes ", format_dims(a.shape),
         " and ", format_dims(b.shape), "); convert with to(dtype)");
  return a.shape == b.shape ? a.shape : broadcast_shapes(name, a.shape, b.shape);
}

void run_binary(const char* name, nnp_binary_op op, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (out.numel == 0) return;
  // The common case, same-shaped contiguous operands: one flat run.
  if (a.shape == out.shape && b.shape == out.shape && a.is_contiguous() && b.is_contiguous() && out.is_contiguous()) {
    nnp_view va = flat_view(a), vb = flat_view(b), vo = flat_view(out);
    run_kernel(a, name, a.backend().kernels().binary(&kernel_ctx(a), op, &va, &vb, &vo));
    return;
  }
  nnp_view va = a.shape == out.shape ? kernel_view(a) : broadcast_view(a, out.shape);
  nnp_view vb = b.shape == out.shape ? kernel_view(b) : broadcast_view(b, out.shape);
  nnp_view vo = kernel_view(out);
  nnp_view* views[] = {&vo, &va, &vb};
  coalesce(views, 3);
  run_kernel(a, name, a.backend().kernels().binary(&kernel_ctx(a), op, &va, &vb, &vo));
}

// Kernels accept an output that is exactly one of the inputs (same storage,
// offset, shape and strides); any other overlap needs a temporary.
bool overlaps_differently(const Tensor& out, const Tensor& in) {
  if (out.storage != in.storage) return false;
  return !(in.offset == out.offset && in.shape == out.shape && in.strides == out.strides);
}

}  // namespace

TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b) {
  const char* name = binary_name(op);
  Dims shape = binary_shape(name, op, a, b);
  if (op == NNP_BINARY_DIV && !is_floating(a.dtype)) {  // true division, as PyTorch
    TensorRef fa = to(a, a.device, NNP_F32), fb = to(b, b.device, NNP_F32);
    return binary(op, *fa, *fb);
  }
  TensorRef out = make_tensor_like(shape, is_comparison(op) ? NNP_BOOL : a.dtype, a);
  run_binary(name, op, a, b, *out);
  return out;
}

void binary_into(nnp_binary_op op, const Tensor& a, const Tensor& b, Tensor& out) {
  const char* name = binary_name(op);
  Dims shape = binary_shape(name, op, a, b);
  check_same_device(name, a, out);
  const nnp_dtype dtype = is_comparison(op) ? NNP_BOOL : a.dtype;
  if (shape != out.shape || dtype != out.dtype || (op == NNP_BINARY_DIV && !is_floating(a.dtype)))
    fail(NNP_SHAPE_MISMATCH, name, ": the result (", dtype_name(dtype), " ", format_dims(shape),
         ") does not fit the output (", dtype_name(out.dtype), " ", format_dims(out.shape), ")");
  if (overlaps_differently(out, a) || overlaps_differently(out, b)) {
    TensorRef result = binary(op, a, b);
    copy_into(out, *result);
    return;
  }
  run_binary(name, op, a, b, out);
}

TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_same_device("where", cond, a);
  check_same_device("where", a, b);
  if (cond.dtype != NNP_BOOL)
    fail(NNP_DTYPE_MISMATCH, "where: the condition must be bool, got ", dtype_name(cond.dtype), " of shape ",
         format_dims(cond.shape), "; compare first (for example ne(x, 0))");
  check_same_dtype("where", a, b);
  Dims shape = broadcast_shapes("where", broadcast_shapes("where", cond.shape, a.shape), b.shape);
  TensorRef out = make_tensor_like(shape, a.dtype, a);
  if (out->numel == 0) return out;
  nnp_view vc = broadcast_view(cond, shape), va = broadcast_view(a, shape), vb = broadcast_view(b, shape);
  nnp_view vo = kernel_view(*out);
  nnp_view* views[] = {&vo, &vc, &va, &vb};
  coalesce(views, 4);
  run_kernel(a, "where", a.backend().kernels().where(&kernel_ctx(a), &vc, &va, &vb, &vo));
  return out;
}

}  // namespace nnp::core::compute
