// The layer registry and the built-in layers: PyTorch's constructor
// arguments, defaults, initialisation, extra_repr and values.
#include <cmath>

#include "test_support.hpp"

using namespace nnp;
using nnp::nn::Attrs;
using nnp::nn::create_layer;
using nnp::test::expect_error;

namespace {

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tolerance = 1e-6f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "element " << i;
}

}  // namespace

TEST(Layers, LinearMatchesPyTorch) {
  auto linear = create_layer("nn.Linear", std::move(Attrs().set("in_features", 4).set("out_features", 3)));
  EXPECT_EQ(linear.repr(), "Linear(in_features=4, out_features=3, bias=True)");
  EXPECT_EQ(test::names_of(linear.named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  Tensor w = linear.get_parameter("weight"), b = linear.get_parameter("bias");
  EXPECT_EQ(w.shape(), (Shape{3, 4}));
  // kaiming_uniform_(a=sqrt(5)) and the bias rule both give U(-1/sqrt(4), 1/sqrt(4)).
  EXPECT_LE(w.abs().amax().item<float>(), 0.5f);
  EXPECT_LE(b.abs().amax().item<float>(), 0.5f);
  EXPECT_GT(w.abs().amax().item<float>(), 0.0f);
  Tensor x = randn({2, 4});
  expect_near(linear(x).to_vector<float>(), (x.matmul(w.t()) + b).to_vector<float>());

  auto plain =
      create_layer("nn.Linear", std::move(Attrs().set("in_features", 2).set("out_features", 2).set("bias", false)));
  EXPECT_EQ(test::names_of(plain.named_parameters()), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(plain.repr(), "Linear(in_features=2, out_features=2, bias=False)");
  EXPECT_EQ(test::names_of(plain.state_dict()), (std::vector<std::string>{"weight"}));
}

TEST(Layers, LinearInitialisationIsUniformInTheBound) {
  manual_seed(3);
  auto big = create_layer("nn.Linear", std::move(Attrs().set("in_features", 100).set("out_features", 200)));
  Tensor w = big.get_parameter("weight").to(Dtype::f64);
  double bound = 0.1;  // 1/sqrt(100)
  EXPECT_LE(w.abs().amax().item<double>(), bound);
  EXPECT_NEAR(w.mean().item<double>(), 0.0, 0.005);
  EXPECT_NEAR(w.var().item<double>(), bound * bound / 3, 0.0005);  // variance of U(-b, b)
}

TEST(Layers, IdentityFlattenDropout) {
  Tensor x = randn({2, 3, 4});
  EXPECT_EQ(create_layer("nn.Identity")(x).get(), x.get());
  auto flatten = create_layer("nn.Flatten");
  EXPECT_EQ(flatten(x).shape(), (Shape{2, 12}));
  EXPECT_EQ(flatten.repr(), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(create_layer("nn.Flatten", std::move(Attrs().set("start_dim", 0)))(x).shape(), (Shape{24}));
  EXPECT_EQ(create_layer("nn.Flatten", std::move(Attrs().set("end_dim", 1)))(x).shape(), (Shape{2, 3, 4}));
  expect_error([&] { create_layer("nn.Flatten", std::move(Attrs().set("start_dim", 5)))(x); }, NNP_INVALID_ARGUMENT,
               {"start_dim 5"});

  manual_seed(5);
  auto dropout = create_layer("nn.Dropout", std::move(Attrs().set("p", 0.25)));
  EXPECT_EQ(dropout.repr(), "Dropout(p=0.25, inplace=False)");
  Tensor ones_in = ones({20000});
  std::vector<float> out = dropout(ones_in).to_vector<float>();
  int zeroed = 0;
  for (float v : out) {
    if (v == 0)
      ++zeroed;
    else
      EXPECT_NEAR(v, 1.0f / 0.75f, 1e-6);
  }
  EXPECT_NEAR(zeroed / 20000.0, 0.25, 0.015);
  dropout.eval();
  EXPECT_EQ(dropout(ones_in).get(), ones_in.get());
  expect_error([] { create_layer("nn.Dropout", std::move(Attrs().set("p", 1.5))); }, NNP_INVALID_ARGUMENT,
               {"between 0 and 1, but got 1.5"});
}

TEST(Layers, Activations) {
  Tensor x = from_vector(std::vector<float>{-1, 0, 2});
  expect_near(create_layer("nn.ReLU")(x).to_vector<float>(), {0, 0, 2});
  auto leaky = create_layer("nn.LeakyReLU", std::move(Attrs().set("negative_slope", 0.2)));
  EXPECT_EQ(leaky.repr(), "LeakyReLU(negative_slope=0.2)");
  expect_near(leaky(x).to_vector<float>(), {-0.2f, 0, 2});
  EXPECT_EQ(create_layer("nn.LeakyReLU").repr(), "LeakyReLU(negative_slope=0.01)");
  auto gelu = create_layer("nn.GELU");
  EXPECT_EQ(gelu.repr(), "GELU(approximate='none')");
  expect_near(gelu(x).to_vector<float>(), {-0.15865525f, 0, 1.95449974f});
  auto gelu_tanh = create_layer("nn.GELU", std::move(Attrs().set("approximate", "tanh")));
  expect_near(gelu_tanh(x).to_vector<float>(), {-0.15880801f, 0, 1.95459769f});
  expect_near(create_layer("nn.SiLU")(x).to_vector<float>(), {-0.26894142f, 0, 1.76159416f});
  expect_near(create_layer("nn.Sigmoid")(x).to_vector<float>(), {0.26894142f, 0.5f, 0.88079708f});
  expect_near(create_layer("nn.Tanh")(x).to_vector<float>(), {-0.76159416f, 0, 0.96402758f});
  Tensor m = from_vector(std::vector<float>{1, 2, 3, 1, 1, 1}, {2, 3});
  auto softmax = create_layer("nn.Softmax", std::move(Attrs().set("dim", 1)));
  EXPECT_EQ(softmax.repr(), "Softmax(dim=1)");
  expect_near(softmax(m).to_vector<float>(), {0.09003057f, 0.24472847f, 0.66524096f, 1 / 3.f, 1 / 3.f, 1 / 3.f});
  expect_near(create_layer("nn.Softmax")(m).to_vector<float>(), softmax(m).to_vector<float>());  // implicit dim 1
  expect_near(create_layer("nn.LogSoftmax", std::move(Attrs().set("dim", 0)))(x).to_vector<float>(),
              x.log_softmax(0).to_vector<float>());
}

TEST(Layers, EveryActivationPrintsAsPyTorchsAndChecksItsArguments) {
  auto repr = [](const char* type, Attrs attrs = Attrs()) { return create_layer(type, attrs).repr(); };
  const std::vector<std::pair<std::string, std::string>> expected = {
      {repr("nn.ELU"), "ELU(alpha=1.0)"},
      {repr("nn.ELU", std::move(Attrs().set("alpha", 0.5).set("inplace", true))), "ELU(alpha=0.5, inplace=True)"},
      {repr("nn.CELU", std::move(Attrs().set("alpha", 2.0))), "CELU(alpha=2.0)"},
      {repr("nn.SELU"), "SELU()"},
      {repr("nn.SELU", std::move(Attrs().set("inplace", true))), "SELU(inplace=True)"},
      {repr("nn.GLU"), "GLU(dim=-1)"},
      {repr("nn.Hardtanh"), "Hardtanh(min_val=-1.0, max_val=1.0)"},
      {repr("nn.Hardtanh", std::move(Attrs().set("min_val", -2.0).set("max_val", 3.0))),
       "Hardtanh(min_val=-2.0, max_val=3.0)"},
      {repr("nn.ReLU6"), "ReLU6()"},
      {repr("nn.ReLU6", std::move(Attrs().set("inplace", true))), "ReLU6(inplace=True)"},
      {repr("nn.Hardswish"), "Hardswish()"},
      {repr("nn.Hardsigmoid"), "Hardsigmoid()"},
      {repr("nn.Hardshrink"), "Hardshrink(0.5)"},
      {repr("nn.Softshrink", std::move(Attrs().set("lambd", 0.25))), "Softshrink(0.25)"},
      {repr("nn.Tanhshrink"), "Tanhshrink()"},
      {repr("nn.Softplus"), "Softplus(beta=1, threshold=20)"},
      {repr("nn.Softplus", std::move(Attrs().set("beta", 2.0).set("threshold", 10.0))),
       "Softplus(beta=2, threshold=10)"},
      {repr("nn.Softsign"), "Softsign()"},
      {repr("nn.LogSigmoid"), "LogSigmoid()"},
      {repr("nn.Mish"), "Mish()"},
      {repr("nn.Threshold", std::move(Attrs().set("threshold", 0.1).set("value", 20.0))),
       "Threshold(threshold=0.1, value=20)"},
      {repr("nn.RReLU"), "RReLU(lower=0.125, upper=0.3333333333333333)"},
      {repr("nn.PReLU", std::move(Attrs().set("num_parameters", 3))), "PReLU(num_parameters=3)"},
      {repr("nn.Softmin", std::move(Attrs().set("dim", 1))), "Softmin(dim=1)"},
      {repr("nn.Softmin"), "Softmin(dim=None)"},
      {repr("nn.Softmax2d"), "Softmax2d()"},
  };
  for (const auto& [got, want] : expected) EXPECT_EQ(got, want);

  // PReLU's state is PyTorch's: one weight per channel, filled with init.
  auto prelu = create_layer("nn.PReLU", std::move(Attrs().set("num_parameters", 3)));
  ASSERT_EQ(prelu.state_dict().size(), 1u);
  EXPECT_EQ(prelu.state_dict()[0].first, "weight");
  EXPECT_EQ(prelu.state_dict()[0].second.to_vector<float>(), (std::vector<float>{0.25f, 0.25f, 0.25f}));
  expect_error([&] { prelu(ones({2, 4})); }, NNP_INVALID_ARGUMENT, {"parameter numbers = 3 and channel size = 4"});

  // Arguments PyTorch refuses.
  expect_error([] { create_layer("nn.Hardtanh", std::move(Attrs().set("min_val", 2.0))); }, NNP_INVALID_ARGUMENT,
               {"max_val must be larger than min_val"});
  expect_error([] { create_layer("nn.Softshrink", std::move(Attrs().set("lambd", -1.0))); }, NNP_INVALID_ARGUMENT,
               {"lambda must be greater or equal to 0"});
  expect_error([] { create_layer("nn.Threshold"); }, NNP_INVALID_ARGUMENT, {"threshold"});
  expect_error(
      [] {
        create_layer("nn.GLU")(ones({2, 3}));
      },
      NNP_INVALID_ARGUMENT, {"Halving dimension must be even, but dimension 1 is size 3"});
  expect_error(
      [] {
        create_layer("nn.Softmax2d")(ones({2, 3}));
      },
      NNP_INVALID_ARGUMENT, {"expected input to be 3D or 4D, got 2D instead"});

  // RReLU draws a slope in [lower, upper] per element while training and
  // uses the middle in eval.
  auto rrelu = create_layer("nn.RReLU", std::move(Attrs().set("lower", 0.1).set("upper", 0.3)));
  Tensor x = full({1000}, -1.0);
  std::vector<float> trained = rrelu(x).to_vector<float>();
  float lo = 0, hi = -1;
  for (float v : trained) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_GE(lo, -0.3f);
  EXPECT_LE(hi, -0.1f);
  EXPECT_LT(lo, hi);
  rrelu.eval();
  EXPECT_NEAR(rrelu(x).to_vector<float>()[0], -0.2f, 1e-7);

  // inplace=True writes into the input, as PyTorch's.
  Tensor y = full({3}, -2.0);
  create_layer("nn.ELU", std::move(Attrs().set("inplace", true)))(y);
  EXPECT_NEAR(y.to_vector<float>()[0], std::exp(-2.0f) - 1, 1e-6);
}

TEST(Layers, RegistryErrorsNameTheLayerAndTheAttribute) {
  expect_error([] { create_layer("nn.Lineer"); }, NNP_NOT_FOUND,
               {"unknown layer type 'nn.Lineer'", "closest: nn.Linear"});
  expect_error([] { create_layer("nn.Linear", std::move(Attrs().set("in_features", 2))); }, NNP_INVALID_ARGUMENT,
               {"nn.Linear: required attribute 'out_features' (an int) is missing"});
  expect_error(
      [] {
        create_layer("nn.Linear", std::move(Attrs().set("in_features", 2).set("out_features", 2).set("bais", true)));
      },
      NNP_INVALID_ARGUMENT, {"nn.Linear: unknown attribute 'bais'", "in_features, out_features, bias"});
  expect_error([] { create_layer("nn.Linear", std::move(Attrs().set("in_features", "two").set("out_features", 2))); },
               NNP_INVALID_ARGUMENT, {"attribute 'in_features' must be an int but a string (\"two\") was given"});
  // An int is accepted where a float is declared, as in Python.
  EXPECT_EQ(create_layer("nn.LeakyReLU", std::move(Attrs().set("negative_slope", 1))).repr(),
            "LeakyReLU(negative_slope=1.0)");
}

TEST(Layers, TheRegistryListsTypesWithTheirAttributes) {
  bool found = false;
  for (int32_t i = 0; i < api().layer_type_count(); ++i) {
    nnp_layer_type info{};
    info.struct_size = sizeof(info);
    check(api().layer_type_info(i, &info));
    if (std::string(info.name) != "nn.Linear") continue;
    found = true;
    ASSERT_EQ(info.attr_count, 3);
    EXPECT_STREQ(info.attrs[2].name, "bias");
    EXPECT_EQ(info.attrs[2].type, NNP_ATTR_BOOL);
    EXPECT_STREQ(info.attrs[2].default_value, "true");
    EXPECT_EQ(info.attrs[0].required, 1);
  }
  EXPECT_TRUE(found);
}

namespace {
struct Scale : nn::Module {
  double factor;
  explicit Scale(const Attrs& a) : Module("Scale"), factor(a.real("factor")) {}
  Tensor forward(const Tensor& x) override { return x * factor; }
};
}  // namespace

TEST(Layers, AnApplicationRegistersItsOwnLayerType) {
  nnp_attr_def attrs[] = {{sizeof(nnp_attr_def), "factor", NNP_ATTR_FLOAT, 0, "2.0", "multiplier"}};
  nnp_layer_type type{sizeof(nnp_layer_type),     "app.Scale", "multiplies by factor", attrs, 1,
                      nn::create_layer_of<Scale>, nullptr};
  check(api().register_layer_type(nullptr, &type));
  EXPECT_EQ(create_layer("app.Scale")(full({2}, 3.0)).to_vector<float>(), (std::vector<float>{6, 6}));
  EXPECT_EQ(api().register_layer_type(nullptr, &type), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("already registered"), std::string::npos);
  nnp_layer_type bad = type;
  bad.name = "NoNamespace";
  EXPECT_EQ(api().register_layer_type(nullptr, &bad), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("namespace.Name"), std::string::npos);
}

TEST(Layers, ASequentialOfRegistryLayersLearns) {
  manual_seed(11);
  nn::Sequential net{create_layer("nn.Linear", std::move(Attrs().set("in_features", 2).set("out_features", 16))),
                     create_layer("nn.Tanh"),
                     create_layer("nn.Linear", std::move(Attrs().set("in_features", 16).set("out_features", 1)))};
  Tensor x = from_vector(std::vector<float>{0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  Tensor y = from_vector(std::vector<float>{0, 1, 1, 0}, {4, 1});  // XOR
  std::vector<Tensor> params = net.parameters();
  for (int step = 0; step < 2000; ++step) {
    Tensor loss = (net(x) - y).pow(2).mean();
    net.zero_grad();
    loss.backward();
    NoGradGuard no_grad;
    for (Tensor& p : params) p.copy_(p - p.grad() * 0.1);
  }
  NoGradGuard no_grad;
  EXPECT_LT((net(x) - y).pow(2).mean().item<float>(), 0.01f);
}

TEST(Layers, BatchNormTrainingEvalAndRunningStatistics) {
  auto bn = create_layer("nn.BatchNorm1d", std::move(Attrs().set("num_features", 2)));
  EXPECT_EQ(bn.repr(), "BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(test::names_of(bn.state_dict()),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn.get_buffer("num_batches_tracked").dtype(), Dtype::i64);
  bn.to_double();
  Tensor x = from_vector(std::vector<double>{1, 10, 2, 20, 3, 30, 6, 40}, {4, 2});
  std::vector<double> y = bn(x).to_vector<double>();
  // Column 0: mean 3, biased variance 3.5; column 1: mean 25, variance 125.
  EXPECT_NEAR(y[0], (1 - 3) / std::sqrt(3.5 + 1e-5), 1e-12);
  EXPECT_NEAR(y[7], (40 - 25) / std::sqrt(125 + 1e-5), 1e-12);
  std::vector<double> running_mean = bn.get_buffer("running_mean").to_vector<double>();
  std::vector<double> running_var = bn.get_buffer("running_var").to_vector<double>();
  EXPECT_NEAR(running_mean[0], 0.1 * 3, 1e-12);
  EXPECT_NEAR(running_var[0], 0.9 + 0.1 * 3.5 * 4 / 3, 1e-12);  // unbiased variance in the running estimate
  EXPECT_EQ(bn.get_buffer("num_batches_tracked").item<int64_t>(), 1);
  bn.eval();
  std::vector<double> eval = bn(x).to_vector<double>();
  EXPECT_NEAR(eval[0], (1 - running_mean[0]) / std::sqrt(running_var[0] + 1e-5), 1e-12);
  EXPECT_EQ(bn.get_buffer("num_batches_tracked").item<int64_t>(), 1);  // eval does not update
  bn.train();
  expect_error([&] { bn(ones({1, 2}, Dtype::f64)); }, NNP_INVALID_ARGUMENT, {"more than 1 value per channel"});
  expect_error([&] { bn(ones({4, 3}, Dtype::f64)); }, NNP_SHAPE_MISMATCH, {"2 channels"});

  auto bn2 = create_layer("nn.BatchNorm2d", std::move(Attrs().set("num_features", 3).set("affine", false)));
  Tensor image = randn({2, 3, 4, 4});
  Tensor out = bn2(image);
  std::vector<float> channel_means = out.mean({0, 2, 3}).to_vector<float>();
  for (float m : channel_means) EXPECT_NEAR(m, 0.0f, 1e-5);
  EXPECT_TRUE(bn2.named_parameters().empty());
}

TEST(Layers, LayerNormAndEmbedding) {
  auto ln = create_layer("nn.LayerNorm", std::move(Attrs().set("normalized_shape", std::vector<int64_t>{4})));
  EXPECT_EQ(ln.repr(), "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  Tensor x = from_vector(std::vector<float>{1, 2, 3, 4, 2, 2, 2, 6}, {2, 4});
  std::vector<float> y = ln(x).to_vector<float>();
  EXPECT_NEAR(y[0], (1 - 2.5) / std::sqrt(1.25 + 1e-5), 1e-5);
  EXPECT_NEAR(y[7], (6 - 3) / std::sqrt(3 + 1e-5), 1e-5);
  expect_error([&] { ln(ones({2, 3})); }, NNP_SHAPE_MISMATCH, {"normalized_shape [4]"});
  EXPECT_EQ(create_layer("nn.LayerNorm", std::move(Attrs().set("normalized_shape", 3))).get_parameter("weight").shape(),
            (Shape{3}));

  auto embedding = create_layer(
      "nn.Embedding", std::move(Attrs().set("num_embeddings", 10).set("embedding_dim", 3).set("padding_idx", 0)));
  EXPECT_EQ(embedding.repr(), "Embedding(10, 3, padding_idx=0)");
  Tensor weight = embedding.get_parameter("weight");
  EXPECT_EQ(weight.slice(0, 0, 1).abs().sum().item<float>(), 0.0f);
  Tensor idx = from_vector(std::vector<int64_t>{2, 0, 2, 5}, {2, 2});
  Tensor out = embedding(idx);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(out.slice(0, 0, 1).slice(1, 0, 1).reshape({3}).to_vector<float>(),
            weight.slice(0, 2, 3).reshape({3}).to_vector<float>());
  out.sum().backward();
  std::vector<float> grad = weight.grad().to_vector<float>();
  EXPECT_EQ(grad[0], 0.0f);   // padding row learns nothing
  EXPECT_EQ(grad[6], 2.0f);   // row 2 was looked up twice
  EXPECT_EQ(grad[15], 1.0f);  // row 5 once
}

// PyTorch's Embedding(padding_idx): forward returns the padding row as it is
// (it starts at zero, but may be set), only its gradient is kept at zero.
TEST(Layers, EmbeddingReturnsThePaddingRowAndKeepsItsGradientZero) {
  auto embedding = create_layer(
      "nn.Embedding", std::move(Attrs().set("num_embeddings", 4).set("embedding_dim", 2).set("padding_idx", 1)));
  Tensor weight = embedding.get_parameter("weight");
  {
    NoGradGuard no_grad;
    weight.slice(0, 1, 2).copy_(from_vector(std::vector<float>{7, -3}, {1, 2}));
  }
  Tensor out = embedding(from_vector(std::vector<int64_t>{1, 3, 1}));
  EXPECT_EQ(out.slice(0, 0, 1).reshape({2}).to_vector<float>(), (std::vector<float>{7, -3}));
  EXPECT_EQ(out.slice(0, 2, 3).reshape({2}).to_vector<float>(), (std::vector<float>{7, -3}));
  (out * from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2})).sum().backward();
  std::vector<float> grad = weight.grad().to_vector<float>();
  EXPECT_EQ(grad, (std::vector<float>{0, 0, 0, 0, 0, 0, 3, 4}));
}

// As PyTorch's copy_: an f64 state dict loads into an f32 model, converted;
// an integer one is still refused and changes nothing.
TEST(Layers, LoadStateDictConvertsFloatingDtypes) {
  auto linear = create_layer("nn.Linear", std::move(Attrs().set("in_features", 2).set("out_features", 1)));
  nnp::StateDict state = {{"weight", from_vector(std::vector<double>{0.1, -0.25}, {1, 2})},
                          {"bias", from_vector(std::vector<double>{1.0 / 3}, {1})}};
  linear.load_state_dict(state);
  EXPECT_EQ(linear.get_parameter("weight").dtype(), Dtype::f32);
  EXPECT_EQ(linear.get_parameter("weight").to_vector<float>(), (std::vector<float>{0.1f, -0.25f}));
  EXPECT_EQ(linear.get_parameter("bias").to_vector<float>(), (std::vector<float>{static_cast<float>(1.0 / 3)}));
  state[1].second = from_vector(std::vector<int64_t>{2}, {1});
  expect_error([&] { linear.load_state_dict(state); }, NNP_DTYPE_MISMATCH, {"bias", "i64"});
  EXPECT_EQ(linear.get_parameter("bias").to_vector<float>(), (std::vector<float>{static_cast<float>(1.0 / 3)}));
}

TEST(Layers, PaddingNormalizationAndShapeLayersPrintAsPyTorchs) {
  namespace nn = nnp::nn;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {nn::ReflectionPad1d(2)->repr(), "ReflectionPad1d((2, 2))"},
      {nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 0, 1}))->repr(), "ReflectionPad2d((1, 2, 0, 1))"},
      {nn::ReplicationPad3d(1)->repr(), "ReplicationPad3d((1, 1, 1, 1, 1, 1))"},
      {nn::ZeroPad2d(2)->repr(), "ZeroPad2d((2, 2, 2, 2))"},
      {nn::ConstantPad1d(nn::ConstantPad1dOptions({1, 2}, 3.5))->repr(), "ConstantPad1d(padding=(1, 2), value=3.5)"},
      {nn::ConstantPad3d(nn::ConstantPad3dOptions(1, 0.0))->repr(),
       "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=0.0)"},
      {nn::Dropout2d(0.3)->repr(), "Dropout2d(p=0.3, inplace=False)"},
      {nn::AlphaDropout()->repr(), "AlphaDropout(p=0.5, inplace=False)"},
      {nn::FeatureAlphaDropout(0.2)->repr(), "FeatureAlphaDropout(p=0.2, inplace=False)"},
      {nn::Dropout1d()->repr(), "Dropout1d(p=0.5, inplace=False)"},
      {nn::PixelShuffle(2)->repr(), "PixelShuffle(upscale_factor=2)"},
      {nn::PixelUnshuffle(3)->repr(), "PixelUnshuffle(downscale_factor=3)"},
      {nn::ChannelShuffle(2)->repr(), "ChannelShuffle(groups=2)"},
      {nn::CosineSimilarity()->repr(), "CosineSimilarity()"},
      {nn::PairwiseDistance()->repr(), "PairwiseDistance()"},
      {nn::Bilinear(3, 4, 5)->repr(), "Bilinear(in1_features=3, in2_features=4, out_features=5, bias=True)"},
      {nn::GroupNorm(2, 4)->repr(), "GroupNorm(2, 4, eps=1e-05, affine=True)"},
      {nn::InstanceNorm1d(3)->repr(),
       "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)"},
      {nn::InstanceNorm2d(nn::InstanceNorm2dOptions(3).affine(true).track_running_stats(true))->repr(),
       "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"},
      {nn::BatchNorm3d(3)->repr(), "BatchNorm3d(3, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"},
      {nn::LocalResponseNorm(3)->repr(), "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"},
      {nn::CrossMapLRN2d(3)->repr(), "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"},
      {create_layer("nn.MaxPool1d", Attrs().set("kernel_size", 3).set("stride", 2).set("padding", 1)).repr(),
       "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)"},
      {create_layer(
           "nn.MaxPool3d",
           Attrs().set("kernel_size", std::vector<int64_t>{1, 2, 2}).set("stride", std::vector<int64_t>{1, 1, 2}))
           .repr(),
       "MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 1, 2), padding=0, dilation=1, ceil_mode=False)"},
      {create_layer("nn.AvgPool1d", Attrs().set("kernel_size", 3)).repr(),
       "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"},
      {create_layer("nn.AvgPool3d", Attrs().set("kernel_size", 2)).repr(),
       "AvgPool3d(kernel_size=2, stride=2, padding=0)"},
      {create_layer("nn.AdaptiveAvgPool3d", Attrs().set("output_size", std::vector<int64_t>{1, 2, 3})).repr(),
       "AdaptiveAvgPool3d(output_size=(1, 2, 3))"},
      {create_layer("nn.AdaptiveMaxPool1d", Attrs().set("output_size", 3)).repr(), "AdaptiveMaxPool1d(output_size=3)"},
      {create_layer("nn.LPPool1d", Attrs().set("norm_type", 2.0).set("kernel_size", 3)).repr(),
       "LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"},
      {create_layer("nn.LPPool2d",
                    Attrs().set("norm_type", 1.5).set("kernel_size", std::vector<int64_t>{2, 3}).set("stride", 1))
           .repr(),
       "LPPool2d(norm_type=1.5, kernel_size=(2, 3), stride=1, ceil_mode=False)"},
  };
  for (const auto& [got, want] : cases) EXPECT_EQ(got, want);
  // PyTorch's state-dict keys where a layer has state.
  EXPECT_EQ(
      test::names_of(nn::InstanceNorm2d(nn::InstanceNorm2dOptions(3).affine(true).track_running_stats(true))->state_dict()),
      (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_TRUE(nn::InstanceNorm1d(3)->state_dict().empty());
  expect_error([] { nn::GroupNorm(3, 4); }, NNP_INVALID_ARGUMENT, {"num_channels must be divisible by num_groups"});
  expect_error(
      [] {
        nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2, 3}));
      },
      NNP_INVALID_ARGUMENT, {"ReflectionPad2d", "one value or 4"});
  expect_error([] { nn::ReflectionPad1d(3)(randn({1, 2, 3})); }, NNP_INVALID_ARGUMENT, {"reflect padding"});
  expect_error([] { nn::ReplicationPad2d(1)(randn({2, 3})); }, NNP_SHAPE_MISMATCH, {"3-D or 4-D"});
}

TEST(Layers, ChannelDropoutsZeroWholeChannelsAndAlphaDropoutKeepsTheMoments) {
  namespace nn = nnp::nn;
  manual_seed(21);
  Tensor x = ones({8, 16, 5, 5});
  Tensor y = nn::Dropout2d(0.5)(x);
  // Each channel is either all zero or all 2.
  Tensor per_channel_max = y.amax({2, 3}), per_channel_min = y.amin({2, 3});
  expect_near(per_channel_max.to_vector<float>(), per_channel_min.to_vector<float>());
  const double zeroed = per_channel_max.eq(zeros({})).to(Dtype::f32).mean().item<float>();
  EXPECT_GT(zeroed, 0.3);
  EXPECT_LT(zeroed, 0.7);
  EXPECT_NEAR(y.amax().item<float>(), 2.0f, 1e-6f);
  nn::Dropout3d eval_mode(0.5);
  eval_mode->eval();
  Tensor v = randn({2, 3, 2, 2, 2});
  EXPECT_EQ(eval_mode(v).to_vector<float>(), v.to_vector<float>());
  // inplace: the input holds the result.
  Tensor w = ones({4, 6, 3});
  Tensor same = nn::Dropout1d(nn::Dropout1dOptions(0.5).inplace(true))(w);
  EXPECT_EQ(w.to_vector<float>(), same.to_vector<float>());
  // Alpha dropout of standard normals keeps mean 0 and variance 1.
  Tensor z = randn({200000});
  Tensor a = nn::AlphaDropout(0.3)(z);
  EXPECT_NEAR(a.mean().item<float>(), 0.0, 0.02);
  EXPECT_NEAR(a.var().item<float>(), 1.0, 0.03);
  // The dropped ones all take alpha' * a * (p - 1), a = ((alpha'^2 p + 1)(1 - p))^-1/2.
  auto dropped_value = [](double p) {
    const double alpha = 1.7580993408473766, scale = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
    return static_cast<float>(alpha * scale * (p - 1));
  };
  auto is_dropped = [](const Tensor& t, float value) { return (t - value).abs().lt(full({}, 1e-5)); };
  EXPECT_NEAR(is_dropped(a, dropped_value(0.3)).to(Dtype::f32).mean().item<float>(), 0.3, 0.01);
  // Feature alpha dropout drops whole channels.
  Tensor f = nn::FeatureAlphaDropout(0.5)(randn({4, 8, 10}));
  Tensor channel_dropped = is_dropped(f, dropped_value(0.5)).to(Dtype::f32).mean({2});
  for (float share : channel_dropped.to_vector<float>()) EXPECT_TRUE(share == 0.0f || share == 1.0f) << share;
  EXPECT_GT(channel_dropped.sum().item<float>(), 4.0f);
  expect_error([] { nn::Dropout2d(1.5); }, NNP_INVALID_ARGUMENT, {"between 0 and 1"});
  expect_error([] { nn::Dropout2d(0.5)(randn({2, 3})); }, NNP_SHAPE_MISMATCH, {"dropout2d", "3-D", "4-D"});
}
