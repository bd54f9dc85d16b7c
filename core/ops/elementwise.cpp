// Unary, binary and where: broadcasting, dtype rules and one kernel call
// (compute), their backward formulas, and their descriptions for the
// dispatcher with the two faces (autograd:: public, core:: internal).
#include <cmath>

#include "../autograd/functions.hpp"
#include "../autograd/grad_math.hpp"
#include "../autograd/record.hpp"
#include "../dispatch/dispatcher.hpp"
#include "../dispatch/op_table.hpp"
#include "../dtype.hpp"
#include "../error.hpp"
#include "../op_checks.hpp"
#include "../ops.hpp"

// The ops' own work (their compute), called by their descriptions below.
namespace nnp::core::compute {
TensorRef unary(nnp_unary_op op, const Tensor& x);
TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b);
void binary_into(nnp_binary_op op, const Tensor& a, const Tensor& b, Tensor& out);
TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b);
}  // namespace nnp::core::compute

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
  check_computes_unary(x, op, name);
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

namespace nnp::core::autograd {

using namespace math;

namespace {

void unary_backward(nnp_unary_op op, const Tensor& x, TensorRef& out) {
  SavedTensor input = share(x), result = saved_output(*out);
  // The closures keep only what their formula needs.
  FunctionNode::Backward backward;
  switch (op) {
    case NNP_UNARY_NEG: backward = [](Grads& g) { return Grads{un(NNP_UNARY_NEG, g[0])}; }; break;
    case NNP_UNARY_ABS: backward = [input](Grads& g) { return Grads{mul(g[0], un(NNP_UNARY_SIGN, input))}; }; break;
    case NNP_UNARY_EXP: backward = [result](Grads& g) { return Grads{mul(g[0], result)}; }; break;
    case NNP_UNARY_LOG: backward = [input](Grads& g) { return Grads{div(g[0], input)}; }; break;
    case NNP_UNARY_SQRT:
      backward = [result](Grads& g) { return Grads{div(g[0], mul(scalar(result, 2), result))}; };
      break;
    case NNP_UNARY_RSQRT:  // d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 out^3
      backward = [result](Grads& g) {
        return Grads{mul(g[0], mul(scalar(result, -0.5), mul(result, mul(result, result))))};
      };
      break;
    case NNP_UNARY_SIN: backward = [input](Grads& g) { return Grads{mul(g[0], un(NNP_UNARY_COS, input))}; }; break;
    case NNP_UNARY_COS:
      backward = [input](Grads& g) { return Grads{un(NNP_UNARY_NEG, mul(g[0], un(NNP_UNARY_SIN, input)))}; };
      break;
    case NNP_UNARY_TANH:
      backward = [result](Grads& g) { return Grads{mul(g[0], sub(scalar(result, 1), mul(result, result)))}; };
      break;
    case NNP_UNARY_SIGMOID:
      backward = [result](Grads& g) { return Grads{mul(g[0], mul(result, sub(scalar(result, 1), result)))}; };
      break;
    case NNP_UNARY_RELU:  // PyTorch's threshold_backward: 0 where out <= 0, so a NaN passes the gradient
      backward = [result](Grads& g) {
        return Grads{where(cmp(NNP_BINARY_LE, result, scalar(result, 0)), scalar(g[0], 0), g[0])};
      };
      break;
    case NNP_UNARY_GELU:  // Phi(x) + x phi(x)
      backward = [input](Grads& g) {
        TensorRef cdf =
            mul(scalar(input, 0.5), add(scalar(input, 1), un(NNP_UNARY_ERF, mul(input, scalar(input, M_SQRT1_2)))));
        TensorRef pdf = mul(scalar(input, 0.5 * M_2_SQRTPI * M_SQRT1_2),
                            un(NNP_UNARY_EXP, mul(scalar(input, -0.5), mul(input, input))));
        return Grads{mul(g[0], add(cdf, mul(input, pdf)))};
      };
      break;
    case NNP_UNARY_SILU:  // s (1 + x (1 - s))
      backward = [input](Grads& g) {
        TensorRef s = un(NNP_UNARY_SIGMOID, input);
        TensorRef one = scalar(input, 1);
        return Grads{mul(g[0], mul(s, add(one, mul(input, sub(one, s)))))};
      };
      break;
    case NNP_UNARY_SIGN:
    case NNP_UNARY_ROUND: backward = [](Grads& g) { return Grads{zeros_like(g[0])}; }; break;
    case NNP_UNARY_ERF:  // 2/sqrt(pi) exp(-x^2)
      backward = [input](Grads& g) {
        return Grads{
            mul(g[0], mul(scalar(input, M_2_SQRTPI), un(NNP_UNARY_EXP, un(NNP_UNARY_NEG, mul(input, input)))))};
      };
      break;
    default: return;
  }
  record(dispatch::schema(dispatch::unary_id(op)).backward, {&x}, {out.get()}, std::move(backward));
  return;
}

void binary_backward(nnp_binary_op op, const Tensor& a, const Tensor& b, TensorRef& out) {
  const Dims sa = a.shape, sb = b.shape;
  // Gradients only for the inputs that take them (PyTorch's needs_input_grad,
  // decided as the edges are, when the op records): x + 1 or a dropout's
  // where(keep, x, 0) would otherwise sum a whole gradient down to a scalar
  // nobody reads.
  const bool need_a = requires_grad(a), need_b = requires_grad(b);
  SavedTensor ta = share(a), tb = share(b), result = saved_output(*out);
  FunctionNode::Backward backward;
  switch (op) {
    case NNP_BINARY_ADD:
      backward = [sa, sb, need_a, need_b](Grads& g) {
        return Grads{need_a ? sum_to(g[0], sa) : TensorRef(), need_b ? sum_to(g[0], sb) : TensorRef()};
      };
      break;
    case NNP_BINARY_SUB:
      backward = [sa, sb, need_a, need_b](Grads& g) {
        return Grads{need_a ? sum_to(g[0], sa) : TensorRef(), need_b ? sum_to(un(NNP_UNARY_NEG, g[0]), sb) : TensorRef()};
      };
      break;
    case NNP_BINARY_MUL:
      backward = [ta, tb, need_a, need_b](Grads& g) {
        return Grads{need_a ? sum_to(mul(g[0], tb), ta->shape) : TensorRef(),
                     need_b ? sum_to(mul(g[0], ta), tb->shape) : TensorRef()};
      };
      break;
    case NNP_BINARY_DIV:
      backward = [ta, tb, need_a, need_b](Grads& g) {
        TensorRef ga = div(g[0], tb);
        TensorRef gb = need_b ? un(NNP_UNARY_NEG, div(mul(ga, ta), tb)) : TensorRef();
        return Grads{need_a ? sum_to(ga, ta->shape) : TensorRef(), gb ? sum_to(gb, tb->shape) : gb};
      };
      break;
    case NNP_BINARY_POW:  // d/da = b a^(b-1); d/db = a^b log a (0 where a == 0, as PyTorch)
      backward = [ta, tb, result, need_a, need_b](Grads& g) {
        TensorRef ga, gb;
        if (need_a)
          ga = sum_to(mul(g[0], mul(tb, core::binary(NNP_BINARY_POW, *ta, *sub(tb, scalar(tb, 1))))), ta->shape);
        if (need_b) {
          TensorRef zero = scalar(ta, 0);
          TensorRef safe_log = where(cmp(NNP_BINARY_EQ, ta, zero), zero, un(NNP_UNARY_LOG, ta));
          gb = sum_to(mul(g[0], mul(result, safe_log)), tb->shape);
        }
        return Grads{ga, gb};
      };
      break;
    case NNP_BINARY_MAXIMUM:
    case NNP_BINARY_MINIMUM:  // the winner takes the gradient; ties split it evenly
      backward = [ta, tb, op, need_a, need_b](Grads& g) {
        nnp_binary_op wins = op == NNP_BINARY_MAXIMUM ? NNP_BINARY_GT : NNP_BINARY_LT;
        TensorRef half = mul(g[0], scalar(g[0], 0.5)), zero = scalar(g[0], 0);
        TensorRef tie = cmp(NNP_BINARY_EQ, ta, tb);
        TensorRef ga = need_a ? where(cmp(wins, ta, tb), g[0], where(tie, half, zero)) : TensorRef();
        TensorRef gb = need_b ? where(cmp(wins, tb, ta), g[0], where(tie, half, zero)) : TensorRef();
        return Grads{ga ? sum_to(ga, ta->shape) : ga, gb ? sum_to(gb, tb->shape) : gb};
      };
      break;
    default: return;
  }
  record(dispatch::schema(dispatch::binary_id(op)).backward, {&a, &b}, {out.get()}, std::move(backward));
  return;
}

void where_backward(const Tensor& cond, const Tensor& a, const Tensor& b, TensorRef& out) {
  SavedTensor c = share(cond);
  const Dims sa = a.shape, sb = b.shape;
  const bool need_a = requires_grad(a), need_b = requires_grad(b);  // as binary_backward's
  record(dispatch::schema(dispatch::OpId::WHERE).backward, {nullptr, &a, &b}, {out.get()},
         [c, sa, sb, need_a, need_b](Grads& g) {
           TensorRef zero = scalar(g[0], 0);
           return Grads{TensorRef(), need_a ? sum_to(where(c, g[0], zero), sa) : TensorRef(),
                        need_b ? sum_to(where(c, zero, g[0]), sb) : TensorRef()};
         });
  return;
}

// The ops' descriptions (dispatch/dispatcher.hpp).
struct UnaryOp {
  nnp_unary_op op;
  const Tensor* in[1];
  dispatch::OpId id() const { return dispatch::unary_id(op); }
  dispatch::Inputs inputs() const { return {in, 1}; }
  TensorRef compute() const { return compute::unary(op, *in[0]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_unary(g, op, *in[0], *out); }
  void differentiate(TensorRef& out) const { unary_backward(op, *in[0], out); }
};

struct BinaryOp {
  nnp_binary_op op;
  const Tensor* in[2];
  dispatch::OpId id() const { return dispatch::binary_id(op); }
  dispatch::Inputs inputs() const { return {in, 2}; }
  TensorRef compute() const { return compute::binary(op, *in[0], *in[1]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const { onnx::record_binary(g, op, *in[0], *in[1], *out); }
  void differentiate(TensorRef& out) const { binary_backward(op, *in[0], *in[1], out); }
};

// out = a op b into an existing tensor (optimizers' updates): no history.
struct BinaryIntoOp {
  nnp_binary_op op;
  const Tensor* in[2];
  Tensor* out;
  dispatch::OpId id() const { return dispatch::binary_id(op); }
  dispatch::Inputs inputs() const { return {in, 2}; }
  void compute() const { compute::binary_into(op, *in[0], *in[1], *out); }
};

struct WhereOp {
  const Tensor* in[3];  // cond, a, b
  dispatch::OpId id() const { return dispatch::OpId::WHERE; }
  dispatch::Inputs inputs() const { return {in, 3}; }
  TensorRef compute() const { return compute::where(*in[0], *in[1], *in[2]); }
  void lower(nnp_onnx_graph& g, const TensorRef& out) const {
    onnx::record_where(g, *in[0], *in[1], *in[2], *out);
  }
  void differentiate(TensorRef& out) const { where_backward(*in[0], *in[1], *in[2], out); }
};

}  // namespace

using dispatch::Face;

TensorRef unary(nnp_unary_op op, const Tensor& x) { return dispatch::dispatch(UnaryOp{op, {&x}}, Face::PUBLIC); }
TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b) {
  return dispatch::dispatch(BinaryOp{op, {&a, &b}}, Face::PUBLIC);
}
TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return dispatch::dispatch(WhereOp{{&cond, &a, &b}}, Face::PUBLIC);
}

}  // namespace nnp::core::autograd

namespace nnp::core {

using autograd::BinaryIntoOp;
using autograd::BinaryOp;
using autograd::UnaryOp;
using autograd::WhereOp;
using dispatch::Face;

TensorRef unary(nnp_unary_op op, const Tensor& x) { return dispatch::dispatch(UnaryOp{op, {&x}}, Face::INTERNAL); }
TensorRef binary(nnp_binary_op op, const Tensor& a, const Tensor& b) {
  return dispatch::dispatch(BinaryOp{op, {&a, &b}}, Face::INTERNAL);
}
void binary_into(nnp_binary_op op, const Tensor& a, const Tensor& b, Tensor& out) {
  dispatch::dispatch(BinaryIntoOp{op, {&a, &b}, &out}, Face::INTERNAL);
}
TensorRef where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return dispatch::dispatch(WhereOp{{&cond, &a, &b}}, Face::INTERNAL);
}

}  // namespace nnp::core
