// Autograd semantics: leaves, accumulation, no_grad, detach, retain_grad,
// hooks, custom functions, and the errors PyTorch raises.
#include <cmath>

#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

TEST(Autograd, LeavesAccumulateAndNonLeavesDoNot) {
  Tensor x = from_vector(std::vector<float>{1, 2, 3}).requires_grad_();
  EXPECT_TRUE(x.is_leaf());
  Tensor y = (x * x).sum();  // dy/dx = 2x
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.grad_fn_name(), "SumBackward");
  EXPECT_EQ(x.grad_fn_name(), "");
  y.backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
  (x * 3.0).sum().backward();  // accumulates
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{5, 7, 9}));
  x.set_grad(Tensor());
  EXPECT_FALSE(x.grad().defined());
  Tensor z = x * 2.0;
  z.sum().backward();
  EXPECT_FALSE(z.grad().defined());  // non-leaf without retain_grad
}

TEST(Autograd, RetainGradAndExplicitGradient) {
  Tensor x = from_vector(std::vector<float>{1, 2}).requires_grad_();
  Tensor h = x * 3.0;
  h.retain_grad();
  Tensor out = h * h;  // non-scalar: needs an explicit gradient
  expect_error([&] { out.backward(); }, NNP_INVALID_ARGUMENT, {"single-element"});
  out.backward(from_vector(std::vector<float>{1, 10}));
  EXPECT_EQ(h.grad().to_vector<float>(), (std::vector<float>{6, 120}));  // 2h * g
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{18, 360}));
}

TEST(Autograd, NoGradAndDetach) {
  Tensor w = ones({2}).requires_grad_();
  {
    NoGradGuard no_grad;
    Tensor y = w * 2.0;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_TRUE(is_grad_enabled());
  Tensor d = (w * 2.0).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
  Tensor mixed = (w * d).sum();
  mixed.backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

TEST(Autograd, SharedSubexpressionsSumTheirGradients) {
  Tensor x = from_vector(std::vector<double>{0.5}).requires_grad_();
  Tensor a = x.exp();
  Tensor y = a * a + a;  // d/dx (e^2x + e^x)
  y.sum().backward();
  double v = 0.5;
  EXPECT_NEAR(x.grad().item<double>(), 2 * std::exp(2 * v) + std::exp(v), 1e-12);
}

TEST(Autograd, SecondBackwardNeedsRetainGraph) {
  Tensor x = from_vector(std::vector<float>{2}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward(ones({}), true);
  y.backward();  // allowed: the first kept the graph
  EXPECT_EQ(x.grad().item<float>(), 8.0f);
  expect_error([&] { y.backward(); }, NNP_INVALID_ARGUMENT, {"second time", "retain_graph"});
}

TEST(Autograd, Errors) {
  Tensor plain = ones({2});
  expect_error([&] { plain.sum().backward(); }, NNP_INVALID_ARGUMENT, {"does not require grad"});
  expect_error([] { ones({2}, Dtype::i64).requires_grad_(); }, NNP_DTYPE_MISMATCH, {"floating-point"});
  Tensor x = ones({2}).requires_grad_();
  Tensor y = x * 2.0;
  expect_error([&] { y.requires_grad_(false); }, NNP_INVALID_ARGUMENT, {"only leaf tensors", "MulBackward"});
  expect_error([&] { x.copy_(zeros({2})); }, NNP_INVALID_ARGUMENT, {"requires grad"});
  {
    NoGradGuard no_grad;
    x.copy_(zeros({2}));  // fine without recording: how optimizers update parameters
  }
  EXPECT_EQ(x.sum().item<float>(), 0.0f);
  expect_error([&] { y.sum().backward(ones({3})); }, NNP_SHAPE_MISMATCH, {"[3]"});
}

TEST(Autograd, TensorHooksSeeAndReplaceGradients) {
  Tensor x = from_vector(std::vector<float>{1, 2}).requires_grad_();
  std::vector<float> seen;
  HookHandle observe = x.register_hook([&](const Tensor& g) {
    seen = g.to_vector<float>();
    return Tensor();
  });
  Tensor h = x * 2.0;
  HookHandle doubled = h.register_hook([](const Tensor& g) { return g * 2.0; });  // on a non-leaf
  h.sum().backward();
  EXPECT_EQ(seen, (std::vector<float>{4, 4}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{4, 4}));
  doubled.remove();
  doubled.remove();  // idempotent
  x.set_grad(Tensor());
  (x * 2.0).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
  {
    HookHandle scoped = x.register_hook([](const Tensor& g) { return g * 0.0; });
  }  // removed when the handle goes
  x.set_grad(Tensor());
  (x * 2.0).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
  expect_error([] { ones({1}).register_hook([](const Tensor& g) { return g; }).keep(); }, NNP_INVALID_ARGUMENT,
               {"does not require grad"});
}

namespace {

// exp(x) with its own forward and backward through the C API.
nnp_status my_exp_forward(nnp_function_ctx* ctx, const nnp_tensor* const* inputs, int32_t, nnp_tensor** outputs,
                          int32_t, void* calls) {
  ++*static_cast<int*>(calls);
  const nnp_api& a = api();
  nnp_status s = a.unary(NNP_UNARY_EXP, inputs[0], &outputs[0]);
  if (s == NNP_OK) s = a.function_save(ctx, outputs, 1);
  return s;
}
nnp_status my_exp_backward(nnp_function_ctx* ctx, const nnp_tensor* const* grads, int32_t, nnp_tensor** grad_inputs,
                           int32_t, void*) {
  const nnp_api& a = api();
  nnp_tensor* result = nullptr;
  nnp_status s = a.function_saved(ctx, 0, &result);
  if (s == NNP_OK) s = a.binary(NNP_BINARY_MUL, grads[0], result, &grad_inputs[0]);
  a.tensor_release(result);
  return s;
}
int released = 0;
void release_calls(void*) { ++released; }

}  // namespace

TEST(Autograd, CustomFunctionThroughTheCApi) {
  int calls = 0;
  nnp_function fn{sizeof(nnp_function), "MyExpBackward", my_exp_forward, my_exp_backward, release_calls};
  Tensor x = from_vector(std::vector<double>{0.0, 1.0}).requires_grad_();
  {
    nnp_tensor* out = nullptr;
    const nnp_tensor* in[] = {x.get()};
    check(api().function_apply(&fn, &calls, in, 1, &out, 1));
    Tensor y = Tensor::adopt(out);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(y.grad_fn_name(), "MyExpBackward");
    (y * 2.0).sum().backward();
    std::vector<double> g = x.grad().to_vector<double>();
    EXPECT_NEAR(g[0], 2.0, 1e-12);
    EXPECT_NEAR(g[1], 2.0 * std::exp(1.0), 1e-12);
  }
  EXPECT_EQ(released, 1);  // the graph is gone, and with it the function
}

TEST(Autograd, TransposedWeightGradient) {
  // y = x @ w.t() as nn.Linear computes it (the backward computes w's
  // gradient directly in w's layout): a contiguous g.t() @ x.
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}).view({2, 3});
  Tensor w = from_vector(std::vector<float>{1, 0, -1, 2, 1, 0}).view({2, 3}).requires_grad_();
  Tensor g = from_vector(std::vector<float>{1, 2, 3, 4}).view({2, 2});
  x.matmul(w.t()).backward(g);
  EXPECT_TRUE(w.grad().is_contiguous());
  // g.t() @ x = [[1*1+3*4, 1*2+3*5, 1*3+3*6], [2*1+4*4, 2*2+4*5, 2*3+4*6]]
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{13, 17, 21, 18, 24, 30}));
}

// nnp/function.hpp: the C++ face of custom functions, with state.
struct ScaledSquare {
  static constexpr const char* name = "ScaledSquareBackward";
  double scale = 1.0;
  int* destroyed = nullptr;
  ScaledSquare(double s, int* d) : scale(s), destroyed(d) {}
  ScaledSquare(ScaledSquare&& other) noexcept
      : scale(other.scale), destroyed(std::exchange(other.destroyed, nullptr)) {}
  ~ScaledSquare() {
    if (destroyed) ++*destroyed;
  }
  std::vector<Tensor> forward(FunctionContext& ctx, const std::vector<Tensor>& in) {
    EXPECT_FALSE(api().is_grad_enabled()) << "forward records no history";
    ctx.save_for_backward({in[0]});
    return {in[0] * in[0] * scale};
  }
  std::vector<Tensor> backward(FunctionContext& ctx, const std::vector<Tensor>& grad) {
    return {grad[0] * ctx.saved_tensors()[0] * (2.0 * scale)};
  }
};

TEST(Autograd, CustomFunctionInCpp) {
  int destroyed = 0;
  Tensor x = from_vector(std::vector<double>{1.0, -2.0, 3.0}).requires_grad_();
  {
    Tensor y = apply_function<ScaledSquare>({x}, ScaledSquare(0.5, &destroyed))[0];
    EXPECT_EQ(y.grad_fn_name(), "ScaledSquareBackward");
    EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{0.5, 2.0, 4.5}));
    y.sum().backward();
    EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1.0, -2.0, 3.0}));  // d(0.5 x^2)/dx = x
    EXPECT_EQ(destroyed, 0) << "the graph still holds the function";
  }
  EXPECT_EQ(destroyed, 1);
  // A refused call still releases the state it was handed, once.
  test::expect_error([&] { apply_function<ScaledSquare>({Tensor()}, ScaledSquare(1.0, &destroyed)); },
                     NNP_INVALID_ARGUMENT, {"function_apply: input 0 is NULL"});
  EXPECT_EQ(destroyed, 2);
}
