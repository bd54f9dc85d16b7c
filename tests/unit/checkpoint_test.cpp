// Activation checkpointing (ABI 1.27): gradients equal to those without it,
// bit for bit, dropout included; parameters reached without inputs that
// require grad; hooks, no_grad, nesting, autocast and refusals as PyTorch's
// non-reentrant checkpoint.
#include <gtest/gtest.h>

#include <nnp/checkpoint.hpp>
#include <nnp/nnp.hpp>

#include "test_support.hpp"

namespace checkpoint_test {

using namespace nnp;
using nnp::test::expect_error;
using nnp::test::floats;

nn::Sequential model() {
  manual_seed(11);
  return nn::Sequential({nn::Linear(8, 16), nn::ReLU(), nn::Dropout(0.5), nn::Linear(16, 16), nn::GELU(),
                         nn::Dropout(0.3), nn::Linear(16, 16), nn::Tanh(), nn::Linear(16, 4)});
}

struct Outcome {
  std::vector<float> loss, x_grad, after;  // after: a draw once backward is done
  std::vector<std::vector<float>> grads;
};

Outcome run(const std::function<Tensor(nn::Sequential&, const Tensor&)>& forward, bool x_requires_grad) {
  nn::Sequential m = model();
  m.train();
  manual_seed(5);
  Tensor x = randn({6, 8});
  if (x_requires_grad) x.requires_grad_();
  manual_seed(7);
  Tensor loss = forward(m, x).pow(2).mean();
  loss.backward();
  Outcome r{floats(loss), x_requires_grad ? floats(x.grad()) : std::vector<float>{}, floats(rand({3})), {}};
  for (auto& [name, p] : m.named_parameters()) r.grads.push_back(floats(p.grad()));
  return r;
}

void expect_same(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.x_grad, b.x_grad);
  EXPECT_EQ(a.after, b.after);  // the recomputation left the generator where the forward had
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) EXPECT_EQ(a.grads[i], b.grads[i]) << "parameter " << i;
}

Tensor plain(nn::Sequential& m, const Tensor& x) { return m(x); }

TEST(Checkpoint, SequentialSegmentsGiveThePlainGradientsExactly) {
  for (bool x_requires_grad : {false, true}) {
    SCOPED_TRACE(x_requires_grad);
    const Outcome want = run(plain, x_requires_grad);
    for (int32_t segments : {1, 2, 3, 9})
      expect_same(run([&](nn::Sequential& m, const Tensor& x) { return utils::checkpoint_sequential(m, segments, x); },
                      x_requires_grad),
                  want);
  }
}

// Each module in a checkpoint of its own, and checkpoints inside one.
TEST(Checkpoint, EveryModuleAndNestedCheckpointsGiveThePlainGradients) {
  const Outcome want = run(plain, true);
  expect_same(run(
                  [](nn::Sequential& m, const Tensor& x) {
                    Tensor h = x;
                    for (int32_t i = 0; i < m.size(); ++i) {
                      nn::ModuleHandle layer = m[i];
                      h = utils::checkpoint([layer](const Tensor& t) mutable { return layer(t); }, h);
                    }
                    return h;
                  },
                  true),
              want);
  expect_same(run(
                  [](nn::Sequential& m, const Tensor& x) {
                    return utils::checkpoint(
                        [&m](const Tensor& t) {
                          Tensor h = utils::checkpoint([&m](const Tensor& u) { return m[0](u); }, t);
                          for (int32_t i = 1; i < m.size(); ++i) h = m[i](h);
                          return h;
                        },
                        x);
                  },
                  true),
              want);
}

// The recomputation runs each checkpoint's function again: forward hooks
// fire twice, a parameter's gradient hook once.
TEST(Checkpoint, RecomputesInBackwardAndRunsHooksAsPyTorch) {
  nn::Sequential m = model();
  int calls = 0, forward_hooks = 0, grad_hooks = 0;
  nn::ModuleHandle first = m[0];
  HookHandle counting = first.register_forward_hook([&](nn::ModuleHandle&, const std::vector<Tensor>&, const Tensor&) {
    ++forward_hooks;
    return Tensor();
  });
  HookHandle on_grad = m[0].named_parameters()[0].second.register_hook([&](const Tensor& g) {
    ++grad_hooks;
    return g;
  });
  Tensor y = utils::checkpoint(
      [&](const Tensor& x) {
        ++calls;
        return m(x);
      },
      randn({2, 8}));
  EXPECT_EQ(calls, 1);
  y.sum().backward();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(forward_hooks, 2);
  EXPECT_EQ(grad_hooks, 1);
  expect_error([&] { y.sum().backward(); }, NNP_INVALID_ARGUMENT, {"second time"});
}

TEST(Checkpoint, WithoutGradModeTheFunctionRunsOnce) {
  nn::Sequential m = model();
  int calls = 0;
  NoGradGuard no_grad;
  Tensor y = utils::checkpoint(
      [&](const Tensor& x) {
        ++calls;
        return m(x);
      },
      randn({2, 8}));
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(y.requires_grad());
}

// The casts of the forward's autocast scope are made again in backward,
// even where backward runs outside it.
TEST(Checkpoint, RecomputesUnderTheForwardsAutocastState) {
  auto amp = [](bool checkpointed) {
    nn::Sequential m = model();
    manual_seed(5);
    Tensor x = randn({6, 8});
    manual_seed(7);
    Tensor y;
    {
      nnp::autocast scope("cpu");
      y = checkpointed ? utils::checkpoint_sequential(m, 3, x) : m(x);
    }
    EXPECT_EQ(y.dtype(), Dtype::bf16);
    y.to(Dtype::f32).pow(2).mean().backward();
    std::vector<std::vector<float>> grads;
    for (auto& [name, p] : m.named_parameters()) grads.push_back(floats(p.grad()));
    return grads;
  };
  EXPECT_EQ(amp(true), amp(false));
}

TEST(Checkpoint, RefusesAnInputWrittenBeforeBackward) {
  Tensor x = randn({3}).requires_grad_();
  Tensor h = x * 2.0;
  Tensor y = utils::checkpoint([](const Tensor& t) { return t.exp(); }, h);
  h.add_(1.0);
  expect_error([&] { y.sum().backward(); }, NNP_INVALID_ARGUMENT, {"modified by an inplace operation"});
}

TEST(Checkpoint, ResultsThatAreInputsOrNeedNoGradientPassThrough) {
  Tensor x = randn({3}).requires_grad_();
  std::vector<Tensor> out = utils::checkpoint(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0], in[0].argmax(), in[0] * 3.0};
      },
      {x});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_FALSE(out[1].requires_grad());
  (out[0].sum() + out[2].sum()).backward();
  EXPECT_EQ(floats(x.grad()), (std::vector<float>{4, 4, 4}));
}

}  // namespace checkpoint_test
