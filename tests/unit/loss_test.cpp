// Losses against values computed by formula, for every reduction.
#include <cmath>

#include "test_support.hpp"

using namespace nnp;
using nnp::nn::Attrs;
using nnp::nn::create_layer;
using nnp::test::expect_error;

namespace {

Tensor call(const std::string& type, const Tensor& input, const Tensor& target, Attrs attrs = Attrs()) {
  return create_layer(type, attrs).call({input, target});
}

double logsumexp(const std::vector<double>& row) {
  double m = row[0];
  for (double v : row) m = std::max(m, v);
  double s = 0;
  for (double v : row) s += std::exp(v - m);
  return m + std::log(s);
}

}  // namespace

TEST(Losses, MseAndL1) {
  Tensor x = from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2}),
         y = from_vector(std::vector<double>{0, 2, 5, 1}, {2, 2});
  EXPECT_DOUBLE_EQ(call("nn.MSELoss", x, y).item<double>(), (1 + 0 + 4 + 9) / 4.0);
  EXPECT_DOUBLE_EQ(call("nn.MSELoss", x, y, std::move(Attrs().set("reduction", "sum"))).item<double>(), 14.0);
  EXPECT_EQ(call("nn.MSELoss", x, y, std::move(Attrs().set("reduction", "none"))).to_vector<double>(),
            (std::vector<double>{1, 0, 4, 9}));
  EXPECT_DOUBLE_EQ(call("nn.L1Loss", x, y).item<double>(), (1 + 0 + 2 + 3) / 4.0);
  expect_error([&] { call("nn.MSELoss", x, y.reshape({4})); }, NNP_SHAPE_MISMATCH, {"[4]", "[2,2]"});
  expect_error([&] { create_layer("nn.L1Loss", std::move(Attrs().set("reduction", "avg"))); }, NNP_INVALID_ARGUMENT,
               {"'none', 'mean' or 'sum'"});
  // PyTorch's losses print no options: MSELoss(reduction='sum') is "MSELoss()".
  EXPECT_EQ(create_layer("nn.MSELoss", std::move(Attrs().set("reduction", "sum"))).repr(), "MSELoss()");
}

TEST(Losses, CrossEntropyWithIgnoreIndexAndLabelSmoothing) {
  std::vector<double> logits = {1.0, 2.0, 0.5, -1.0, 0.0, 3.0, 0.2, 0.2, 0.2};
  Tensor x = from_vector(logits, {3, 3});
  Tensor t = from_vector(std::vector<int64_t>{1, 2, 0});
  std::vector<double> nll(3), smooth(3);
  for (int i = 0; i < 3; ++i) {
    std::vector<double> row(logits.begin() + 3 * i, logits.begin() + 3 * i + 3);
    double lse = logsumexp(row);
    int64_t target = std::vector<int64_t>{1, 2, 0}[static_cast<size_t>(i)];
    nll[static_cast<size_t>(i)] = lse - row[static_cast<size_t>(target)];
    smooth[static_cast<size_t>(i)] = (3 * lse - row[0] - row[1] - row[2]) / 3;
  }
  EXPECT_NEAR(call("nn.CrossEntropyLoss", x, t).item<double>(), (nll[0] + nll[1] + nll[2]) / 3, 1e-12);
  std::vector<double> none =
      call("nn.CrossEntropyLoss", x, t, std::move(Attrs().set("reduction", "none"))).to_vector<double>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(none[static_cast<size_t>(i)], nll[static_cast<size_t>(i)], 1e-12);
  // ignore_index: the sample drops out of the sum and of the mean's count.
  Tensor ignored = from_vector(std::vector<int64_t>{1, -100, 0});
  EXPECT_NEAR(call("nn.CrossEntropyLoss", x, ignored).item<double>(), (nll[0] + nll[2]) / 2, 1e-12);
  EXPECT_NEAR(call("nn.CrossEntropyLoss", x, from_vector(std::vector<int64_t>{1, 7, 0}),
                   std::move(Attrs().set("ignore_index", 7)))
                  .item<double>(),
              (nll[0] + nll[2]) / 2, 1e-12);
  // label_smoothing e: (1 - e) * nll + e * mean over classes of -log p.
  double e = 0.1, expected = 0;
  for (int i = 0; i < 3; ++i) expected += (1 - e) * nll[static_cast<size_t>(i)] + e * smooth[static_cast<size_t>(i)];
  EXPECT_NEAR(call("nn.CrossEntropyLoss", x, t, std::move(Attrs().set("label_smoothing", e))).item<double>(),
              expected / 3, 1e-12);
  // A single unbatched sample.
  EXPECT_NEAR(call("nn.CrossEntropyLoss", x.slice(0, 0, 1).squeeze(0), full({}, 1, Dtype::i64)).item<double>(), nll[0],
              1e-12);
  expect_error(
      [&] {
        call("nn.CrossEntropyLoss", x, from_vector(std::vector<int64_t>{1, 3, 0}));
      },
      NNP_INVALID_ARGUMENT, {"outside [0, 3)"});
  expect_error(
      [&] {
        call("nn.CrossEntropyLoss", x, from_vector(std::vector<int64_t>{1, 2}));
      },
      NNP_SHAPE_MISMATCH, {"expected [3]"});
  // A floating target of the input's shape is probabilities (tested in
  // functional_test); of any other shape it is not a class index.
  expect_error([&] { call("nn.CrossEntropyLoss", x, x.sum({1})); }, NNP_DTYPE_MISMATCH, {"class indices"});
}

TEST(Losses, CrossEntropyGradientIsSoftmaxMinusOneHot) {
  Tensor x = from_vector(std::vector<double>{1.0, 2.0, 0.5, -1.0, 0.0, 3.0}, {2, 3}).requires_grad_();
  Tensor t = from_vector(std::vector<int64_t>{2, 0});
  call("nn.CrossEntropyLoss", x, t).backward();
  std::vector<double> p = x.detach().softmax(1).to_vector<double>(), g = x.grad().to_vector<double>();
  std::vector<double> one_hot = {0, 0, 1, 1, 0, 0};
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(g[i], (p[i] - one_hot[i]) / 2, 1e-12);
}

TEST(Losses, NllAndBinaryCrossEntropy) {
  Tensor logp = from_vector(std::vector<double>{-0.1, -2.0, -3.0, -0.5}, {2, 2});
  EXPECT_NEAR(call("nn.NLLLoss", logp, from_vector(std::vector<int64_t>{1, 0})).item<double>(), (2.0 + 3.0) / 2, 1e-12);
  Tensor p = from_vector(std::vector<double>{0.9, 0.2, 0.0}), y = from_vector(std::vector<double>{1, 0, 1});
  std::vector<double> bce = call("nn.BCELoss", p, y, std::move(Attrs().set("reduction", "none"))).to_vector<double>();
  EXPECT_NEAR(bce[0], -std::log(0.9), 1e-12);
  EXPECT_NEAR(bce[1], -std::log(0.8), 1e-12);
  EXPECT_DOUBLE_EQ(bce[2], 100.0);  // log(0) clamped at -100, as PyTorch
  Tensor logits = from_vector(std::vector<double>{2.0, -1.0, 50.0, -50.0});
  Tensor labels = from_vector(std::vector<double>{1, 0, 0, 1});
  std::vector<double> got =
      call("nn.BCEWithLogitsLoss", logits, labels, std::move(Attrs().set("reduction", "none"))).to_vector<double>();
  auto reference = [](double x, double z) { return std::max(x, 0.0) - x * z + std::log1p(std::exp(-std::fabs(x))); };
  EXPECT_NEAR(got[0], reference(2, 1), 1e-12);
  EXPECT_NEAR(got[1], reference(-1, 0), 1e-12);
  EXPECT_NEAR(got[2], 50.0, 1e-12);  // stable for large logits
  EXPECT_NEAR(got[3], 50.0, 1e-12);
}

TEST(Losses, MarginEmbeddingAndSequenceLossesAsLibtorchCallsThem) {
  namespace nn = nnp::nn;
  namespace F = nnp::nn::functional;
  EXPECT_EQ(nn::CTCLoss()->repr(), "CTCLoss()");
  EXPECT_EQ(nn::TripletMarginLoss(nn::TripletMarginLossOptions().margin(3.0))->repr(), "TripletMarginLoss()");
  // A perfect alignment costs nothing: one label, certain at every step.
  Tensor certain = full({3, 1, 3}, -1e4);
  certain.select(2, 1).copy_(zeros({3, 1}));
  Tensor loss = nn::CTCLoss(nn::CTCLossOptions().reduction(kSum))(certain, from_vector<int64_t>({1}, {1, 1}),
                                                                  from_vector<int64_t>({3}), from_vector<int64_t>({1}));
  EXPECT_NEAR(loss.item<float>(), 0.0f, 1e-4f);
  // Two labels cannot fit one step: inf, or 0 with zero_infinity.
  Tensor short_input = randn({1, 1, 4}).log_softmax(2);
  const Tensor two = from_vector<int64_t>({1, 2}, {1, 2});
  EXPECT_TRUE(
      std::isinf(F::ctc_loss(short_input, two, from_vector<int64_t>({1}), from_vector<int64_t>({2})).item<float>()));
  EXPECT_EQ(F::ctc_loss(short_input, two, from_vector<int64_t>({1}), from_vector<int64_t>({2}),
                        F::CTCLossFuncOptions().zero_infinity(true))
                .item<float>(),
            0.0f);
  expect_error(
      [&] {
        F::ctc_loss(short_input, from_vector<int64_t>({0}, {1, 1}), from_vector<int64_t>({1}),
                    from_vector<int64_t>({1}));
      },
      NNP_INVALID_ARGUMENT, {"ctc_loss", "not a class other than blank"});
  expect_error([&] { F::ctc_loss(short_input, two, from_vector<int64_t>({2}), from_vector<int64_t>({2})); },
               NNP_INVALID_ARGUMENT, {"input length 2", "0 to 1"});
  expect_error([] { nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(3)); }, NNP_INVALID_ARGUMENT,
               {"only p == 1 and p == 2"});
  expect_error(
      [] {
        F::gaussian_nll_loss(zeros({2, 3}), zeros({2, 3}), full({2, 3}, -1.0));
      },
      NNP_INVALID_ARGUMENT, {"var has negative entry"});
  expect_error(
      [] {
        F::gaussian_nll_loss(zeros({2, 3}), zeros({2, 3}), ones({3, 2}));
      },
      NNP_SHAPE_MISMATCH, {"var is of incorrect size"});
  expect_error([] { nn::TripletMarginWithDistanceLoss(nn::TripletMarginWithDistanceLossOptions().margin(0)); },
               NNP_INVALID_ARGUMENT, {"margin must be greater than 0"});
  // A distance function of one's own, through the function.
  Tensor a = randn({4, 3}), p = randn({4, 3}), n = randn({4, 3});
  auto cosine_distance = [](const Tensor& x, const Tensor& y) { return 1.0 - F::cosine_similarity(x, y); };
  Tensor custom = F::triplet_margin_with_distance_loss(
      a, p, n, F::TripletMarginWithDistanceLossFuncOptions().distance_function(cosine_distance).reduction(kNone));
  Tensor by_hand = (cosine_distance(a, p) - cosine_distance(a, n) + 1.0).clamp_min(0.0);
  EXPECT_EQ(custom.to_vector<float>(), by_hand.to_vector<float>());
}
