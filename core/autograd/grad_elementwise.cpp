// Backward of unary, binary and where.
#include <cmath>

#include "../dispatch/dispatcher.hpp"
#include "../op_compute.hpp"
#include "functions.hpp"
#include "grad_math.hpp"
#include "record.hpp"

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
  SavedTensor ta = share(a), tb = share(b), result = saved_output(*out);
  FunctionNode::Backward backward;
  switch (op) {
    case NNP_BINARY_ADD: backward = [sa, sb](Grads& g) { return Grads{sum_to(g[0], sa), sum_to(g[0], sb)}; }; break;
    case NNP_BINARY_SUB:
      backward = [sa, sb](Grads& g) { return Grads{sum_to(g[0], sa), sum_to(un(NNP_UNARY_NEG, g[0]), sb)}; };
      break;
    case NNP_BINARY_MUL:
      backward = [ta, tb](Grads& g) {
        return Grads{requires_grad(*ta) ? sum_to(mul(g[0], tb), ta->shape) : TensorRef(),
                     requires_grad(*tb) ? sum_to(mul(g[0], ta), tb->shape) : TensorRef()};
      };
      break;
    case NNP_BINARY_DIV:
      backward = [ta, tb](Grads& g) {
        TensorRef ga = div(g[0], tb);
        TensorRef gb = requires_grad(*tb) ? un(NNP_UNARY_NEG, div(mul(ga, ta), tb)) : TensorRef();
        return Grads{requires_grad(*ta) ? sum_to(ga, ta->shape) : TensorRef(), gb ? sum_to(gb, tb->shape) : gb};
      };
      break;
    case NNP_BINARY_POW:  // d/da = b a^(b-1); d/db = a^b log a (0 where a == 0, as PyTorch)
      backward = [ta, tb, result](Grads& g) {
        TensorRef ga, gb;
        if (requires_grad(*ta))
          ga = sum_to(mul(g[0], mul(tb, core::binary(NNP_BINARY_POW, *ta, *sub(tb, scalar(tb, 1))))), ta->shape);
        if (requires_grad(*tb)) {
          TensorRef zero = scalar(ta, 0);
          TensorRef safe_log = where(cmp(NNP_BINARY_EQ, ta, zero), zero, un(NNP_UNARY_LOG, ta));
          gb = sum_to(mul(g[0], mul(result, safe_log)), tb->shape);
        }
        return Grads{ga, gb};
      };
      break;
    case NNP_BINARY_MAXIMUM:
    case NNP_BINARY_MINIMUM:  // the winner takes the gradient; ties split it evenly
      backward = [ta, tb, op](Grads& g) {
        nnp_binary_op wins = op == NNP_BINARY_MAXIMUM ? NNP_BINARY_GT : NNP_BINARY_LT;
        TensorRef half = mul(g[0], scalar(g[0], 0.5)), zero = scalar(g[0], 0);
        TensorRef tie = cmp(NNP_BINARY_EQ, ta, tb);
        TensorRef ga = where(cmp(wins, ta, tb), g[0], where(tie, half, zero));
        TensorRef gb = where(cmp(wins, tb, ta), g[0], where(tie, half, zero));
        return Grads{sum_to(ga, ta->shape), sum_to(gb, tb->shape)};
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
  record(dispatch::schema(dispatch::OpId::WHERE).backward, {nullptr, &a, &b}, {out.get()}, [c, sa, sb](Grads& g) {
    TensorRef zero = scalar(g[0], 0);
    return Grads{TensorRef(), sum_to(where(c, g[0], zero), sa), sum_to(where(c, zero, g[0]), sb)};
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
