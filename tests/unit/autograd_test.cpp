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

// PyTorch 2.1's register_post_accumulate_grad_hook: after the tensor hooks
// and the accumulation, seeing the accumulated .grad; leaves only.
TEST(Autograd, PostAccumulateGradHooksSeeTheAccumulatedGrad) {
  Tensor x = from_vector(std::vector<float>{1, 2}).requires_grad_();
  std::vector<std::vector<float>> seen;
  HookHandle replace = x.register_hook([](const Tensor& g) { return g * 10.0; });
  HookHandle after = x.register_post_accumulate_grad_hook([&](Tensor& leaf) {
    EXPECT_TRUE(leaf.is_leaf());
    seen.push_back(leaf.grad().to_vector<float>());
  });
  (x * 2.0).sum().backward();
  (x * x).sum().backward();  // accumulates 10 * 2x
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<float>{20, 20}));
  EXPECT_EQ(seen[1], (std::vector<float>{40, 60}));
  Tensor unused = from_vector(std::vector<float>{1}).requires_grad_();
  int calls = 0;
  HookHandle never = unused.register_post_accumulate_grad_hook([&](Tensor&) { ++calls; });
  (x * 1.0).sum().backward();
  EXPECT_EQ(calls, 0) << "a leaf backward does not reach gets no call";
  after.remove();
  (x * 1.0).sum().backward();
  EXPECT_EQ(seen.size(), 3u) << "removed";
  expect_error([&] { (x * 2.0).register_post_accumulate_grad_hook([](Tensor&) {}).keep(); }, NNP_INVALID_ARGUMENT,
               {"cannot be registered on non-leaf tensors", "MulBackward"});
  expect_error([] { ones({1}).register_post_accumulate_grad_hook([](Tensor&) {}).keep(); }, NNP_INVALID_ARGUMENT,
               {"does not require grad"});
  HookHandle fails = x.register_post_accumulate_grad_hook([](Tensor&) { throw Error(NNP_IO_ERROR, "hook broke"); });
  expect_error([&] { (x * 1.0).sum().backward(); }, NNP_IO_ERROR, {"hook broke"});
}

// queue_callback: after every node of the backward that queued it, in
// order, those it queues after it; refused outside backward.
TEST(Autograd, QueuedCallbacksRunOnceTheWholeBackwardHasFinished) {
  Tensor a = from_vector(std::vector<float>{1, 2}).requires_grad_();
  Tensor b = from_vector(std::vector<float>{3}).requires_grad_();
  std::vector<std::string> order;
  HookHandle on_a = a.register_post_accumulate_grad_hook([&](Tensor&) {
    order.push_back("a");
    autograd::queue_callback([&] {
      // b's gradient is already there, whichever leaf came first.
      order.push_back("first, b.grad " + std::to_string(b.grad().item<float>()));
      autograd::queue_callback([&] { order.push_back("queued by the first"); });
    });
    autograd::queue_callback([&] { order.push_back("second"); });
  });
  HookHandle on_b = b.register_post_accumulate_grad_hook([&](Tensor&) { order.push_back("b"); });
  ((a * 2.0).sum() + b.sum() * 4.0).backward();
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(order.begin() + 2, order.end()),
            (std::vector<std::string>{"first, b.grad 4.000000", "second", "queued by the first"}));
  expect_error([] { autograd::queue_callback([] {}); }, NNP_INVALID_ARGUMENT,
               {"only be queued while a backward pass runs"});
  // A failing callback fails the backward; the next backward starts clean.
  on_a.remove();
  HookHandle failing = b.register_post_accumulate_grad_hook(
      [](Tensor&) { autograd::queue_callback([] { throw Error(NNP_COMM_ERROR, "reduction failed"); }); });
  expect_error([&] { (b * 1.0).sum().backward(); }, NNP_COMM_ERROR, {"reduction failed"});
  failing.remove();
  order.clear();
  (b * 1.0).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"b"}));
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
