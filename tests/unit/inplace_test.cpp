// In-place ops (nnp/inplace.hpp over the core's assign): values, PyTorch's
// autograd rules (history continues through them, leaves and their views
// refused, writes to views rewrite the base's history as CopySlices, a saved
// tensor written since is an error at backward naming the op) and the
// version check against optimizer steps. Expected values are PyTorch 1.13's.
#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

namespace {
Tensor doubles(const std::vector<double>& v) { return from_vector(v); }
std::vector<double> values(const Tensor& t) { return t.to(Dtype::f64).to_vector<double>(); }
}  // namespace

TEST(InPlace, ValuesAndTheSameTensorBack) {
  Tensor t = doubles({1, -2, 3});
  Tensor& same = t.add_(1.0);
  EXPECT_EQ(&same, &t);
  EXPECT_EQ(values(t), (std::vector<double>{2, -1, 4}));
  t.mul_(doubles({1, 2, 0.5})).sub_(1.0);
  EXPECT_EQ(values(t), (std::vector<double>{1, -3, 1}));
  t.div_(2.0).pow_(2.0);
  EXPECT_EQ(values(t), (std::vector<double>{0.25, 2.25, 0.25}));
  t.neg_().relu_();
  EXPECT_EQ(values(t), (std::vector<double>{0, 0, 0}));
  t.fill_(7.0);
  EXPECT_EQ(values(t), (std::vector<double>{7, 7, 7}));
  t.copy_(doubles({-5, 0.5, 5})).clamp_(-1, 1);
  EXPECT_EQ(values(t), (std::vector<double>{-1, 0.5, 1}));
  t.clamp_max_(0.25).clamp_min_(-0.5);
  EXPECT_EQ(values(t), (std::vector<double>{-0.5, 0.25, 0.25}));
  t.zero_();
  EXPECT_EQ(values(t), (std::vector<double>{0, 0, 0}));
  Tensor ints = from_vector(std::vector<int64_t>{1, 2});
  ints.add_(3.0);  // the value is converted to the tensor's dtype
  EXPECT_EQ(ints.to_vector<int64_t>(), (std::vector<int64_t>{4, 5}));
  Tensor f = from_vector(std::vector<float>{1, 2});
  f.masked_fill_(f.gt(f.scalar_like(1.5)), -1);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, -1}));
  expect_error([&] { t.fill_(zeros({2})); }, NNP_INVALID_ARGUMENT, {"0-dimension"});
  expect_error([&] { t.clamp(std::nullopt, std::nullopt); }, NNP_INVALID_ARGUMENT, {"at least one"});
}

TEST(InPlace, WritesThroughViewsAndAcrossDevices) {
  Tensor v = ones({2, 3});
  v.select(0, 1).fill_(5.0);
  v.index({indexing::Slice(), 0}).mul_(2.0);
  EXPECT_EQ(values(v), (std::vector<double>{2, 1, 1, 10, 5, 5}));
  Tensor r = zeros({3}, Dtype::f64, Device("reference"));
  r.copy_(from_vector(std::vector<float>{1, 2, 3}));  // from cpu, converted
  EXPECT_EQ(r.device(), Device("reference"));
  EXPECT_EQ(values(r), (std::vector<double>{1, 2, 3}));
}

TEST(InPlace, RandomFillsDrawFromTheGlobalGenerator) {
  manual_seed(5);
  Tensor u = empty({2000}).uniform_(2, 3);
  EXPECT_GE(u.amin().item<float>(), 2.0f);
  EXPECT_LT(u.amax().item<float>(), 3.0f);
  Tensor n = empty({20000}, Dtype::f64).normal_(1.0, 2.0);
  EXPECT_NEAR(n.mean().item<double>(), 1.0, 0.05);
  EXPECT_NEAR(n.var().item<double>(), 4.0, 0.15);
  manual_seed(5);
  EXPECT_EQ(empty({2000}).uniform_(2, 3).to_vector<float>(), u.to_vector<float>());
  expect_error([] { empty({2}).uniform_(3, 2); }, NNP_INVALID_ARGUMENT, {"from=3"});
}

TEST(InPlace, HistoryContinuesThroughTheWrite) {
  Tensor x = doubles({1, 2}).requires_grad_();
  Tensor y = x * 2.0;
  y.add_(1.0);  // y = 2x + 1
  EXPECT_EQ(y.grad_fn_name(), "AddBackward");
  (y * y).sum().backward();  // d/dx (2x + 1)^2 = 4 (2x + 1)
  EXPECT_EQ(values(x.grad()), (std::vector<double>{12, 20}));

  // A constant written over values with history: they get a zero gradient.
  Tensor a = doubles({1, 2}).requires_grad_();
  Tensor b = a * 3.0;
  b.fill_(4.0);
  EXPECT_TRUE(b.requires_grad());
  EXPECT_EQ(b.grad_fn_name(), "FillBackward");
  b.sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0, 0}));

  // copy_ from a tensor with history carries it over.
  Tensor c = doubles({1, 2}).requires_grad_();
  Tensor d = zeros({2}, Dtype::f64);
  d.copy_(c * 3.0);
  d.sum().backward();
  EXPECT_EQ(values(c.grad()), (std::vector<double>{3, 3}));

  // clamp passes the gradient where min <= x <= max.
  Tensor e = doubles({-2, -1, 0, 1, 2}).requires_grad_();
  e.clamp(-1, 1).sum().backward();
  EXPECT_EQ(values(e.grad()), (std::vector<double>{0, 1, 1, 1, 0}));
}

TEST(InPlace, PyTorchsRefusals) {
  Tensor x = doubles({1, 2}).requires_grad_();
  expect_error([&] { x.add_(1.0); }, NNP_INVALID_ARGUMENT, {"leaf Variable that requires grad", "in-place"});
  {
    NoGradGuard no_grad;
    x.add_(1.0);  // how optimizers and initialisers write
  }
  EXPECT_EQ(values(x.detach()), (std::vector<double>{2, 3}));
  expect_error([&] { x.select(0, 0).add_(1.0); }, NNP_INVALID_ARGUMENT,
               {"a view of a leaf Variable that requires grad is being used in an in-place operation"});
  Tensor y = x * 1.0;
  expect_error([&] { y.narrow(0, 0, 1).expand({3}).add_(1.0); }, NNP_INVALID_ARGUMENT,
               {"more than one element of the written-to tensor", "refers to a single memory location", "clone()"});
  expect_error([&] { y.detach().add_(x); }, NNP_UNIMPLEMENTED, {"alias", "detach()"});
  Tensor z = (x * 2.0).clone();
  z.select(0, 0).detach().add_(1.0);  // no autograd involved: allowed
}

TEST(InPlace, WritesToViewsRewriteTheBasesHistory) {
  const Tensor w = doubles({1, 2, 3, 4});
  {  // y[1:3].mul_(3)
    Tensor x = doubles({1, 2, 3, 4}).requires_grad_();
    Tensor y = x * 2.0;
    y.narrow(0, 1, 2).mul_(3.0);
    EXPECT_EQ(values(y.detach()), (std::vector<double>{2, 12, 18, 8}));
    EXPECT_EQ(y.grad_fn_name(), "CopySlices");
    EXPECT_NE(y.str().find("grad_fn=<CopySlices>"), std::string::npos) << y.str();
    (y * w).sum().backward();
    EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 12, 18, 8}));
  }
  {  // y = x * x; v = y[0:2]; v.add_(x[2:4]); (y ** 2).sum()
    Tensor x = doubles({1, 2, 3, 4}).requires_grad_();
    Tensor y = x * x;
    Tensor v = y.narrow(0, 0, 2);
    v.add_(x.narrow(0, 2, 2));
    EXPECT_EQ(v.grad_fn_name(), "AsStridedBackward");
    (y * y).sum().backward();
    EXPECT_EQ(values(x.grad()), (std::vector<double>{16, 64, 116, 272}));
  }
  {  // a base that needed no grad gets history: b[1:3].copy_(x[0:2] * 5)
    Tensor x = doubles({1, 2, 3, 4}).requires_grad_();
    Tensor b = zeros({4}, Dtype::f64);
    b.narrow(0, 1, 2).copy_(x.narrow(0, 0, 2) * 5.0);
    EXPECT_TRUE(b.requires_grad());
    EXPECT_EQ(b.grad_fn_name(), "CopySlices");
    (b * w).sum().backward();
    EXPECT_EQ(values(x.grad()), (std::vector<double>{10, 15, 0, 0}));
  }
  {  // y.t()[0].mul_(x[0:2]) on a 2 x 2 base
    Tensor x = doubles({1, 2, 3, 4}).requires_grad_();
    Tensor y = x.view({2, 2}) * 1.0;
    y.t().select(0, 0).mul_(x.narrow(0, 0, 2));
    EXPECT_EQ(values(y.detach().reshape({4})), (std::vector<double>{1, 2, 6, 4}));
    (y * w.view({2, 2})).sum().backward();
    EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 11, 6, 4}));
  }
}

TEST(InPlace, OpsThatNeedTheOldValuesComputeFromACopy) {
  // y.mul_(x) with both requiring grad: MulBackward needs y's old values,
  // which the write replaces (PyTorch keeps the original self).
  Tensor x = doubles({1, 2}).requires_grad_();
  Tensor y = x * 2.0;
  y.mul_(x);
  y.log_();
  y.sum().backward();  // y = log(2x^2): dy/dx = 2 / x
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 1}));
}

TEST(InPlace, AViewWhoseBaseWasWrittenSinceFollowsTheBase) {
  // v = y[0:2]; y.mul_(3): v shows 6x and its gradient is 6, as PyTorch's
  // rebuilt AsStridedBackward0 gives.
  Tensor x = doubles({1, 2, 3, 4}).requires_grad_();
  Tensor y = x * 2.0;
  Tensor v = y.narrow(0, 0, 2);
  y.mul_(3.0);
  EXPECT_EQ(values(v.detach()), (std::vector<double>{6, 12}));
  (v * doubles({1, 2})).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{6, 12, 0, 0}));
  EXPECT_EQ(v.grad_fn_name(), "AsStridedBackward");
  // A view of a base that needed no grad when the view was made follows it too.
  Tensor q = doubles({1, 2, 3}).requires_grad_();
  Tensor b = zeros({3}, Dtype::f64);
  Tensor first = b.narrow(0, 0, 2);  // made before b had history
  b.narrow(0, 1, 2).copy_(q.narrow(0, 0, 2) * 2.0);
  EXPECT_TRUE(first.requires_grad());
  first.sum().backward();
  EXPECT_EQ(values(q.grad()), (std::vector<double>{2, 0, 0}));
}

TEST(InPlace, ASavedTensorWrittenSinceFailsAtBackwardNamingTheOp) {
  Tensor x = doubles({1, 2}).requires_grad_();
  Tensor y = x.exp();  // ExpBackward keeps its output
  y.add_(1.0);
  expect_error([&] { y.sum().backward(); }, NNP_INVALID_ARGUMENT,
               {"modified by an inplace operation", "needed by ExpBackward", "is at version 1; expected version 0"});

  // Written under no_grad after the forward: MulBackward saw the old values.
  Tensor w = doubles({1, 2}).requires_grad_();
  Tensor product = w * w;
  {
    NoGradGuard no_grad;
    w.mul_(10.0);
  }
  expect_error([&] { product.sum().backward(); }, NNP_INVALID_ARGUMENT, {"needed by MulBackward"});

  // An op that keeps only shapes does not care (AddBackward).
  Tensor a = doubles({1, 2}).requires_grad_();
  Tensor b = a * 2.0;
  Tensor c = b + 1.0;
  b.add_(5.0);
  c.sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 2}));
}

TEST(InPlace, AnOptimizerStepBetweenForwardAndBackwardIsCaught) {
  Tensor w = doubles({1, 2}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  Tensor loss = (w * w).sum();
  loss.backward(Tensor(), true);
  opt.step();  // replaces or overwrites w's data
  expect_error([&] { loss.backward(); }, NNP_INVALID_ARGUMENT, {"needed by MulBackward"});
}
