// nnp::nn::functional against PyTorch: each call's output and the gradient
// of sum(out * w) with respect to its first input, as torch.nn.functional
// gives them (functional_fixtures.inc, from functional_fixtures.py). Inputs
// are exact rationals built the same way on both sides.
#include <cmath>
#include <functional>
#include <map>

#include "pytorch_fixtures.hpp"

using namespace nnp;
namespace F = nnp::nn::functional;
using nnp::test::expect_error;

namespace {

const nnp::test::PyTorchFixture kFixtures[] = {
#include "functional_fixtures.inc"
};

Tensor values(const Shape& shape, int seed) { return nnp::test::rational_values(shape, seed); }
Tensor leaf(const Shape& shape, int seed) { return nnp::test::rational_leaf(shape, seed); }
Tensor ints(const std::vector<int64_t>& v, const Shape& shape) { return from_vector(v, shape); }

using Case = nnp::test::PyTorchCase;

std::map<std::string, Case> cases() {
  std::map<std::string, Case> c;
  const Tensor t = ints({1, 4, -100, 0}, {4}), w = values({5}, 2).abs() + 0.5;
  c["cross_entropy_weight_smoothing"] = [=] {
    Tensor x = leaf({4, 5}, 1);
    return std::pair{x, F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(w).label_smoothing(0.1))};
  };
  c["cross_entropy_none"] = [=] {
    Tensor x = leaf({4, 5}, 1);
    return std::pair{x, F::cross_entropy(x, t, F::CrossEntropyFuncOptions().reduction(kNone).label_smoothing(0.2))};
  };
  c["cross_entropy_sum_weight"] = [=] {
    Tensor x = leaf({4, 5}, 1);
    return std::pair{x, F::cross_entropy(x, t, F::CrossEntropyFuncOptions().weight(w).reduction(kSum))};
  };
  const Tensor tk = ints({0, 2, 1, 1, 2, 2, 0, 1}, {2, 4});
  c["cross_entropy_kdim"] = [=] {
    Tensor x = leaf({2, 3, 4}, 3);
    return std::pair{x, F::cross_entropy(x, tk)};
  };
  c["cross_entropy_kdim_none"] = [=] {
    Tensor x = leaf({2, 3, 4}, 3);
    return std::pair{x, F::cross_entropy(x, tk, F::CrossEntropyFuncOptions().reduction("none"))};
  };
  c["cross_entropy_probabilities"] = [] {
    Tensor x = leaf({3, 4}, 4), p = values({3, 4}, 5).softmax(1);
    return std::pair{
        x,
        F::cross_entropy(x, p, F::CrossEntropyFuncOptions().label_smoothing(0.2).weight(values({4}, 6).abs() + 0.1))};
  };
  c["nll_loss_weight"] = [=] {
    Tensor x = leaf({4, 5}, 1);
    return std::pair{x, F::nll_loss(x, t, F::NLLLossFuncOptions().weight(w))};
  };
  c["nll_loss_unbatched"] = [] {
    Tensor x = leaf({3}, 7);
    return std::pair{x, F::nll_loss(x, full({}, 2, Dtype::i64))};
  };
  const Tensor y = values({2, 3}, 9).sigmoid();
  c["binary_cross_entropy_weight"] = [=] {
    Tensor x = values({2, 3}, 8).sigmoid().detach().requires_grad_();
    return std::pair{x,
                     F::binary_cross_entropy(x, y, F::BinaryCrossEntropyFuncOptions().weight(values({3}, 10).abs()))};
  };
  c["bce_with_logits_pos_weight"] = [=] {
    Tensor x = leaf({2, 3}, 8);
    return std::pair{x, F::binary_cross_entropy_with_logits(x, y,
                                                            F::BinaryCrossEntropyWithLogitsFuncOptions()
                                                                .weight(values({3}, 10).abs())
                                                                .pos_weight(values({3}, 11).abs() + 0.5))};
  };
  c["bce_with_logits_none"] = [=] {
    Tensor x = leaf({2, 3}, 8);
    return std::pair{
        x, F::binary_cross_entropy_with_logits(x, y, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(kNone))};
  };
  c["mse_loss_sum"] = [=] {
    Tensor x = leaf({2, 3}, 8);
    return std::pair{x, F::mse_loss(x, y, kSum)};
  };
  c["l1_loss"] = [=] {
    Tensor x = leaf({2, 3}, 8);
    return std::pair{x, F::l1_loss(x, y + 0.01)};
  };
  for (const char* mode : {kReflect, kReplicate, kCircular, kConstant})
    c[std::string("pad_") + mode] = [mode] {
      Tensor x = leaf({1, 2, 3, 4}, 12);
      return std::pair{x, F::pad(x, F::PadFuncOptions({1, 2, 2, 1}).mode(mode).value(0.5))};
    };
  c["pad_negative"] = [] {
    Tensor x = leaf({1, 2, 3, 4}, 12);
    return std::pair{x, F::pad(x, F::PadFuncOptions({-1, 2}))};
  };
  c["normalize"] = [] {
    Tensor x = leaf({3, 4}, 13);
    return std::pair{x, F::normalize(x)};
  };
  c["normalize_p1_dim0"] = [] {
    Tensor x = leaf({3, 4}, 13);
    return std::pair{x, F::normalize(x, F::NormalizeFuncOptions().p(1).dim(0))};
  };
  c["conv2d"] = [] {
    Tensor x = leaf({2, 4, 5, 5}, 14);
    return std::pair{
        x,
        F::conv2d(x, values({6, 2, 3, 2}, 15),
                  F::Conv2dFuncOptions().bias(values({6}, 16)).stride({2, 1}).padding(1).dilation({1, 2}).groups(2))};
  };
  c["conv1d"] = [] {
    Tensor x = leaf({2, 4, 7}, 17);
    return std::pair{x, F::conv1d(x, values({3, 4, 3}, 18), F::Conv1dFuncOptions().stride(2).padding(1))};
  };
  c["max_pool2d"] = [] {
    Tensor x = leaf({2, 3, 5, 6}, 19);
    return std::pair{x, F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1))};
  };
  c["avg_pool2d"] = [] {
    Tensor x = leaf({2, 3, 5, 6}, 19);
    return std::pair{x, F::avg_pool2d(x, F::AvgPool2dFuncOptions({2, 3}).stride({1, 2}))};
  };
  c["max_pool1d"] = [] {
    Tensor x = leaf({2, 3, 7}, 20);
    return std::pair{x, F::max_pool1d(x, 2)};
  };
  c["avg_pool1d"] = [] {
    Tensor x = leaf({2, 3, 7}, 20);
    return std::pair{x, F::avg_pool1d(x, F::AvgPool1dFuncOptions(3).stride(2).padding(1))};
  };
  c["adaptive_avg_pool2d"] = [] {
    Tensor x = leaf({2, 3, 5, 7}, 21);
    return std::pair{x, F::adaptive_avg_pool2d(x, {2, 3})};
  };
  c["layer_norm"] = [] {
    Tensor x = leaf({2, 3, 4}, 22);
    return std::pair{
        x, F::layer_norm(x, F::LayerNormFuncOptions({3, 4}).weight(values({3, 4}, 23)).bias(values({3, 4}, 24)))};
  };
  // The running statistics are updated in place: kept here for their cases.
  static Tensor running_mean, running_var;
  c["batch_norm_training"] = [] {
    Tensor x = leaf({4, 3, 2}, 25);
    running_mean = values({3}, 26);
    running_var = values({3}, 27).abs() + 0.5;
    return std::pair{
        x, F::batch_norm(
               x, running_mean, running_var,
               F::BatchNormFuncOptions().weight(values({3}, 28)).bias(values({3}, 29)).training(true).momentum(0.3))};
  };
  c["batch_norm_running_mean"] = [] { return std::pair{Tensor(), running_mean}; };
  c["batch_norm_running_var"] = [] { return std::pair{Tensor(), running_var}; };
  c["batch_norm_eval"] = [] {
    Tensor x = leaf({4, 3, 2}, 25);
    return std::pair{x, F::batch_norm(x, values({3}, 26), values({3}, 27).abs() + 0.5)};
  };
  c["gelu_tanh"] = [] {
    Tensor x = leaf({2, 5}, 30);
    return std::pair{x, F::gelu(x, F::GELUFuncOptions().approximate("tanh"))};
  };
  c["leaky_relu"] = [] {
    Tensor x = leaf({2, 5}, 30);
    return std::pair{x, F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2))};
  };
  c["log_softmax"] = [] {
    Tensor x = leaf({2, 5}, 30);
    return std::pair{x, F::log_softmax(x, 0)};
  };
  c["softmax"] = [] {
    Tensor x = leaf({2, 5}, 30);
    return std::pair{x, F::softmax(x, F::SoftmaxFuncOptions(1))};
  };
  c["embedding_padding"] = [] {
    Tensor w = leaf({5, 3}, 31);
    return std::pair{w, F::embedding(ints({1, 2, 2, 4}, {2, 2}), w, F::EmbeddingFuncOptions().padding_idx(2))};
  };
  c["linear"] = [] {
    Tensor x = leaf({3, 4}, 32);
    return std::pair{x, F::linear(x, values({2, 4}, 33), values({2}, 34))};
  };
  // Activations.
  auto activation = [&c](const std::string& name, Shape shape, int seed, std::function<Tensor(const Tensor&)> f) {
    c[name] = [shape, seed, f] {
      Tensor x = leaf(shape, seed);
      return std::pair{x, f(x)};
    };
  };
  activation("elu", {3, 4}, 40, [](const Tensor& x) { return F::elu(x * 2.0, F::ELUFuncOptions().alpha(0.7)); });
  activation("selu", {3, 4}, 40, [](const Tensor& x) { return F::selu(x * 2.0); });
  activation("celu", {3, 4}, 40, [](const Tensor& x) { return F::celu(x * 2.0, F::CELUFuncOptions().alpha(1.5)); });
  activation("glu", {2, 6}, 41, [](const Tensor& x) { return F::glu(x, F::GLUFuncOptions().dim(1)); });
  activation("glu_dim0", {4, 3}, 41, [](const Tensor& x) { return F::glu(x, F::GLUFuncOptions().dim(0)); });
  activation("hardtanh", {3, 4}, 40,
             [](const Tensor& x) { return F::hardtanh(x * 2.0, F::HardtanhFuncOptions().min_val(-1.5).max_val(2.5)); });
  activation("relu6", {3, 4}, 40, [](const Tensor& x) { return F::relu6(x * 3.0); });
  activation("hardswish", {3, 4}, 40, [](const Tensor& x) { return F::hardswish(x * 2.0); });
  activation("hardsigmoid", {3, 4}, 40, [](const Tensor& x) { return F::hardsigmoid(x * 2.0); });
  activation("hardshrink", {3, 4}, 40,
             [](const Tensor& x) { return F::hardshrink(x, F::HardshrinkFuncOptions().lambda(0.6)); });
  activation("softshrink", {3, 4}, 40,
             [](const Tensor& x) { return F::softshrink(x, F::SoftshrinkFuncOptions().lambda(0.6)); });
  activation("tanhshrink", {3, 4}, 40, [](const Tensor& x) { return F::tanhshrink(x); });
  activation("softsign", {3, 4}, 40, [](const Tensor& x) { return F::softsign(x); });
  activation("softplus", {3, 4}, 40,
             [](const Tensor& x) { return F::softplus(x * 4.0, F::SoftplusFuncOptions().beta(2).threshold(5)); });
  activation("logsigmoid", {3, 4}, 40, [](const Tensor& x) { return F::logsigmoid(x * 10.0); });
  activation("mish", {3, 4}, 40, [](const Tensor& x) { return F::mish(x * 2.0); });
  activation("threshold", {3, 4}, 40,
             [](const Tensor& x) { return F::threshold(x, F::ThresholdFuncOptions(0.3, -7)); });
  activation("prelu_channels", {2, 3, 4}, 42, [](const Tensor& x) {
    return F::prelu(x, tensor({0.1, -0.2, 0.3}, kFloat64));
  });
  activation("prelu_one", {2, 3, 4}, 42, [](const Tensor& x) { return F::prelu(x, tensor({0.25}, kFloat64)); });
  activation("rrelu_eval", {3, 4}, 40,
             [](const Tensor& x) { return F::rrelu(x, F::RReLUFuncOptions().lower(0.1).upper(0.3)); });
  activation("softmin", {3, 4}, 40, [](const Tensor& x) { return F::softmin(x, 1); });
  activation("softmax2d", {2, 3, 2, 2}, 43, [](const Tensor& x) { return nn::Softmax2d()(x); });
  // More losses.
  auto sgn = [] { return (values({3, 4}, 45) + 0.01).sign(); };
  auto loss = [&c](const std::string& name, Shape shape, int seed, std::function<Tensor(const Tensor&)> f) {
    c[name] = [shape, seed, f] {
      Tensor x = leaf(shape, seed);
      return std::pair{x, f(x)};
    };
  };
  loss("smooth_l1_loss", {3, 4}, 40, [](const Tensor& x) {
    return F::smooth_l1_loss(x, values({3, 4}, 44), F::SmoothL1LossFuncOptions().beta(0.7));
  });
  loss("smooth_l1_loss_none", {3, 4}, 40, [](const Tensor& x) {
    return F::smooth_l1_loss(x, values({3, 4}, 44), kNone);
  });
  loss("huber_loss", {3, 4}, 40, [](const Tensor& x) {
    return F::huber_loss(x, values({3, 4}, 44), F::HuberLossFuncOptions(kSum).delta(0.6));
  });
  loss("soft_margin_loss", {3, 4}, 40, [sgn](const Tensor& x) { return F::soft_margin_loss(x * 5.0, sgn()); });
  auto probabilities = [] {
    Tensor p = values({3, 4}, 46).softmax(1);
    p.select(0, 0).select(0, 1).fill_(0.0);
    return p;
  };
  loss("kl_div_batchmean", {3, 4}, 40,
       [probabilities](const Tensor& x) { return F::kl_div(x, probabilities(), "batchmean"); });
  loss("kl_div_log_target", {3, 4}, 40, [](const Tensor& x) {
    return F::kl_div(x, values({3, 4}, 46).log_softmax(1), F::KLDivFuncOptions(kSum).log_target(true));
  });
  loss("hinge_embedding_loss", {3, 4}, 40, [sgn](const Tensor& x) {
    return F::hinge_embedding_loss(x, sgn(), F::HingeEmbeddingLossFuncOptions().margin(0.8));
  });
  auto counts = [] { return from_vector(std::vector<double>{0, 1, 2, 3, 0, 5, 1, 2, 4, 0, 3, 1}, {3, 4}); };
  loss("poisson_nll_loss", {3, 4}, 40, [counts](const Tensor& x) {
    return F::poisson_nll_loss(x, counts(), F::PoissonNLLLossFuncOptions().full(true));
  });
  loss("poisson_nll_loss_rate", {3, 4}, 40, [counts](const Tensor& x) {
    return F::poisson_nll_loss(x.abs() + 0.1, counts(), F::PoissonNLLLossFuncOptions(kNone).log_input(false));
  });
  loss("multilabel_soft_margin_loss", {3, 4}, 40, [](const Tensor& x) {
    Tensor labels = values({3, 4}, 48).gt(values({3, 4}, 48).scalar_like(0)).to(Dtype::f64);
    return F::multilabel_soft_margin_loss(x * 3.0, labels,
                                          F::MultiLabelSoftMarginLossFuncOptions().weight(values({4}, 49).abs()));
  });
  loss("margin_ranking_loss", {6}, 50, [](const Tensor& x) {
    return F::margin_ranking_loss(x, values({6}, 51), (values({6}, 52) + 0.01).sign(),
                                  F::MarginRankingLossFuncOptions().margin(0.3));
  });
  auto sdpa = [&](const char* name, const Shape& q_shape, int64_t source,
                  std::function<F::ScaledDotProductAttentionFuncOptions()> options) {
    c[name] = [=] {
      Tensor q = leaf(q_shape, 60);
      return std::pair{
          q, F::scaled_dot_product_attention(q, values({2, source, 4}, 61), values({2, source, 3}, 62), options())};
    };
  };
  c["ctc_loss"] = [] {
    Tensor x = leaf({6, 2, 4}, 115);
    return std::pair{
        x, F::ctc_loss(x.log_softmax(2), ints({1, 2, 2, 3, 1, 0}, {2, 3}), ints({6, 5}, {2}), ints({3, 2}, {2}))};
  };
  c["ctc_loss_unbatched_none"] = [] {
    Tensor x = leaf({5, 3}, 116);
    return std::pair{x, F::ctc_loss(x.log_softmax(1), ints({1, 2}, {2}), ints({5}, {}), ints({2}, {}),
                                    F::CTCLossFuncOptions().reduction(kNone))};
  };
  sdpa("sdpa", {2, 3, 4}, 5, [] { return F::ScaledDotProductAttentionFuncOptions(); });
  sdpa("sdpa_causal", {2, 4, 4}, 4, [] { return F::ScaledDotProductAttentionFuncOptions().is_causal(true); });
  sdpa("sdpa_bool_mask_scale", {2, 3, 4}, 5, [] {
    return F::ScaledDotProductAttentionFuncOptions()
        .attn_mask(values({3, 5}, 63).gt(values({}, 0).scalar_like(-2.0)))
        .scale(0.3);
  });
  sdpa("sdpa_float_mask", {2, 3, 4}, 5, [] {
    return F::ScaledDotProductAttentionFuncOptions().attn_mask(values({2, 3, 5}, 64));
  });
  return c;
}

}  // namespace

TEST(Functional, MatchesPyTorchValuesAndGradients) {
  // PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float (its
  // kernel's constant); nnplug's gradient is 1/6 in the tensor's dtype.
  nnp::test::check_against_pytorch(kFixtures, cases(), 1e-10, {{"hardsigmoid", 1e-7}});
}

TEST(Functional, OneHot) {
  Tensor hot = F::one_hot(from_vector(std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(hot.dtype(), Dtype::i64);
  EXPECT_EQ(hot.shape(), (Shape{3, 3}));
  EXPECT_EQ(hot.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0}));
  EXPECT_EQ(F::one_hot(from_vector(std::vector<int64_t>{1}), 4).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, 0, 0}));
  expect_error([] { F::one_hot(from_vector(std::vector<int64_t>{5}), 3); }, NNP_INVALID_ARGUMENT, {"num_classes"});
  expect_error([] { F::one_hot(from_vector(std::vector<int64_t>{-1})); }, NNP_INVALID_ARGUMENT, {"non-negative"});
  expect_error([] { F::one_hot(from_vector(std::vector<float>{1})); }, NNP_DTYPE_MISMATCH, {"i64"});
}

TEST(Functional, DropoutKeepsTheExpectedShareAndScales) {
  manual_seed(7);
  Tensor x = ones({10000}, Dtype::f64);
  EXPECT_EQ(F::dropout(x, F::DropoutFuncOptions().training(false)).get(), x.get());
  Tensor y = F::dropout(x, F::DropoutFuncOptions().p(0.25));
  const double kept = y.ne(y.scalar_like(0)).to(Dtype::f64).mean().item<double>();
  EXPECT_NEAR(kept, 0.75, 0.02);
  EXPECT_NEAR(y.amax().item<double>(), 1 / 0.75, 1e-12);
  expect_error([&] { F::dropout(x, F::DropoutFuncOptions().p(1.5)); }, NNP_INVALID_ARGUMENT, {"1.5"});
}

TEST(Functional, RefusesBadArgumentsNamingThem) {
  Tensor x = values({1, 2, 3, 4}, 1);
  expect_error(
      [&] {
        F::pad(x, F::PadFuncOptions({4, 0}).mode(kReflect));
      },
      NNP_INVALID_ARGUMENT, {"reflect", "smaller than the input dimension 4"});
  expect_error([&] { F::pad(x, F::PadFuncOptions({1}).mode(kReflect)); }, NNP_INVALID_ARGUMENT, {"divisible by 2"});
  expect_error(
      [&] {
        F::pad(x, F::PadFuncOptions({int64_t{1} << 40, 0}).mode(kReplicate));
      },
      NNP_INVALID_ARGUMENT, {"longer than 2^31"});
  expect_error([&] { F::pad(x, F::PadFuncOptions({1, 1}).mode("mirror")); }, NNP_INVALID_ARGUMENT, {"'mirror'"});
  expect_error([&] { F::conv2d(x, values({3, 3, 1, 1}, 2)); }, NNP_SHAPE_MISMATCH, {"2 channels", "expects 3"});
  expect_error(
      [&] {
        F::conv2d(x, values({3, 2, 1, 1}, 2), F::Conv2dFuncOptions().groups(2));
      },
      NNP_INVALID_ARGUMENT, {"groups 2"});
  expect_error([&] { F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).divisor_override(0)); }, NNP_INVALID_ARGUMENT,
               {"divisor_override must not be 0"});
  expect_error([&] { F::mse_loss(x, x, "avg"); }, NNP_INVALID_ARGUMENT, {"'none', 'mean' or 'sum'"});
  expect_error(
      [&] {
        F::cross_entropy(values({2, 3}, 1), from_vector(std::vector<int64_t>{0, 3}));
      },
      NNP_INVALID_ARGUMENT, {"outside [0, 3)"});
  expect_error(
      [&] {
        F::cross_entropy(values({2, 3}, 1), from_vector(std::vector<int64_t>{0, 1}),
                         F::CrossEntropyFuncOptions().weight(values({2}, 1)));
      },
      NNP_SHAPE_MISMATCH, {"one value per class (3)"});
  expect_error([&] { F::layer_norm(x, F::LayerNormFuncOptions({3})); }, NNP_SHAPE_MISMATCH, {"normalized_shape"});
}

TEST(Functional, NormalizeOfAZeroRowIsZeroWithAFiniteGradient) {
  Tensor x = zeros({2, 3}, Dtype::f64).requires_grad_();
  Tensor y = F::normalize(x);
  EXPECT_EQ(y.to_vector<double>(), std::vector<double>(6, 0.0));
  y.sum().backward();
  for (double g : x.grad().to_vector<double>()) EXPECT_TRUE(std::isfinite(g));
}
