// RNN, LSTM, GRU and their cells beyond PyTorch's numbers
// (layer_fixture_test): typed holders as libtorch's, a stacked layer equal
// to its cell unrolled, reprs, dropout between layers, and the checks.
#include "test_support.hpp"

using namespace nnp;
namespace nn = nnp::nn;
using nn::Attrs;
using nnp::test::expect_error;

namespace {

void expect_near(const Tensor& a, const Tensor& b, double tolerance = 1e-6) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::vector<double> x = a.to(Dtype::f64).to_vector<double>(), y = b.to(Dtype::f64).to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(x[i], y[i], tolerance) << "element " << i;
}

}  // namespace

TEST(RecurrentLayers, TypedHoldersReturnWhatLibtorchsReturn) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).batch_first(true).proj_size(2));
  Tensor x = randn({4, 6, 3});
  auto [output, state] = lstm(x);
  auto [h_n, c_n] = state;
  EXPECT_EQ(output.shape(), (Shape{4, 6, 2}));
  EXPECT_EQ(h_n.shape(), (Shape{2, 4, 2}));
  EXPECT_EQ(c_n.shape(), (Shape{2, 4, 5}));
  // The last step's output is the top layer's final h.
  expect_near(output.select(1, 5), h_n.select(0, 1));
  // Given states replace the zeros.
  auto [again, unused] = lstm(x, std::make_tuple(h_n, c_n));
  EXPECT_EQ(again.shape(), output.shape());
  EXPECT_GT((again - output).abs().amax().item<float>(), 1e-4);

  nn::GRU gru(nn::GRUOptions(3, 4).bidirectional(true));
  auto [g_out, g_h] = gru(randn({6, 2, 3}));
  EXPECT_EQ(g_out.shape(), (Shape{6, 2, 8}));
  EXPECT_EQ(g_h.shape(), (Shape{2, 2, 4}));
  expect_near(g_out.select(0, 5).narrow(1, 0, 4), g_h.select(0, 0));  // forward ends at the last step
  expect_near(g_out.select(0, 0).narrow(1, 4, 4), g_h.select(0, 1));  // reverse ends at the first

  nn::LSTMCell cell(3, 4);
  EXPECT_EQ(cell->weight_ih.shape(), (Shape{16, 3}));
  EXPECT_EQ(cell->bias_hh.shape(), (Shape{16}));
  auto [h, c] = cell(randn({2, 3}));
  EXPECT_EQ(h.shape(), (Shape{2, 4}));
  nn::RNNCell plain(nn::RNNCellOptions(3, 4).bias(false).nonlinearity(kReLU));
  EXPECT_FALSE(plain->bias_ih.defined());
  EXPECT_GE(plain(randn({2, 3})).amin().item<float>(), 0.0f);
}

TEST(RecurrentLayers, AStackedLayerIsItsCellUnrolled) {
  manual_seed(4);
  struct Pair {
    const char* layer;
    const char* cell;
  };
  for (Pair p : {Pair{"nn.RNN", "nn.RNNCell"}, Pair{"nn.LSTM", "nn.LSTMCell"}, Pair{"nn.GRU", "nn.GRUCell"}}) {
    SCOPED_TRACE(p.layer);
    const bool lstm = std::string(p.layer) == "nn.LSTM";
    nn::ModuleHandle layer = nn::create_layer(p.layer, Attrs().set("input_size", 3).set("hidden_size", 4));
    nn::ModuleHandle cell = nn::create_layer(p.cell, Attrs().set("input_size", 3).set("hidden_size", 4));
    StateDict weights;
    for (const auto& [key, value] : layer.state_dict()) weights.emplace_back(key.substr(0, key.size() - 3), value);
    cell.load_state_dict(weights);  // weight_ih_l0 -> weight_ih
    Tensor x = randn({5, 2, 3});
    nn::Outputs all = layer.call_values({x});
    Tensor h = zeros({2, 4}), c = zeros({2, 4});
    for (int64_t t = 0; t < 5; ++t) {
      nn::Outputs step = lstm ? cell.call_values({x.select(0, t), h, c}) : cell.call_values({x.select(0, t), h});
      h = step.tensor(0);
      if (lstm) c = step.tensor(1);
      expect_near(all.tensor(0).select(0, t), h);
    }
    expect_near(all.tensor(1).select(0, 0), h);
    if (lstm) expect_near(all.tensor(2).select(0, 0), c);
    // A call for one tensor (a Sequential, a model spec) gets the output.
    expect_near(layer(x), all.tensor(0));
  }
}

TEST(RecurrentLayers, InASequentialFromASpec) {
  manual_seed(5);
  nn::ModuleHandle model = nn::model_from_spec(R"({"type": "nn.Sequential", "children": [
      {"type": "nn.Unflatten", "dim": 1, "unflattened_size": [4, 2]},
      {"type": "nn.GRU", "input_size": 2, "hidden_size": 3, "batch_first": true},
      {"type": "nn.Flatten"},
      {"type": "nn.Linear", "in_features": 12, "out_features": 2}]})");
  Tensor y = model(randn({5, 8}));
  EXPECT_EQ(y.shape(), (Shape{5, 2}));
  y.sum().backward();
  EXPECT_TRUE(model.get_parameter("1.weight_hh_l0").grad().defined());
}

TEST(RecurrentLayers, DropoutActsBetweenLayersWhileTraining) {
  manual_seed(6);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  Tensor x = randn({5, 2, 3});
  lstm->eval();
  Tensor first = std::get<0>(lstm(x)), second = std::get<0>(lstm(x));
  expect_near(first, second, 0);
  lstm->train();
  EXPECT_GT((std::get<0>(lstm(x)) - first).abs().amax().item<float>(), 1e-4);
  // One layer: dropout has no layer to act after.
  nn::LSTM single(nn::LSTMOptions(3, 4).dropout(0.5));
  Tensor a = std::get<0>(single(x)), b = std::get<0>(single(x));
  expect_near(a, b, 0);
}

TEST(RecurrentLayers, RunInFloat32AndFollowTheModule) {
  manual_seed(7);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2));
  Tensor x = randn({5, 2, 3});
  Tensor single = std::get<0>(gru(x));
  gru->to(Dtype::f64);
  Tensor twice = std::get<0>(gru(x.to(Dtype::f64)));
  EXPECT_EQ(twice.dtype(), Dtype::f64);
  expect_near(single, twice, 1e-5);
}

TEST(RecurrentLayers, PrintAsPyTorchs) {
  auto repr = [](const char* type, const Attrs& attrs) { return nn::create_layer(type, attrs).repr(); };
  auto base = [] { return std::move(Attrs().set("input_size", 3).set("hidden_size", 4)); };
  EXPECT_EQ(repr("nn.GRU", base()), "GRU(3, 4)");
  EXPECT_EQ(repr("nn.RNN", base().set("nonlinearity", "relu").set("num_layers", 2)), "RNN(3, 4, num_layers=2)");
  EXPECT_EQ(repr("nn.LSTM", base()
                                .set("proj_size", 2)
                                .set("num_layers", 2)
                                .set("bias", false)
                                .set("batch_first", true)
                                .set("dropout", 0.5)
                                .set("bidirectional", true)),
            "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)");
  EXPECT_EQ(repr("nn.RNNCell", base().set("bias", false).set("nonlinearity", "relu")),
            "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  EXPECT_EQ(repr("nn.LSTMCell", base()), "LSTMCell(3, 4)");
  EXPECT_EQ(nn::GRUCell(3, 4)->repr(), "GRUCell(3, 4)");
  // PyTorch's keys for a two-layer bidirectional LSTM with projections.
  std::vector<std::string> keys;
  for (const auto& e : nn::LSTM(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2))->state_dict())
    keys.push_back(e.first);
  EXPECT_EQ(keys.size(), 20u);
  EXPECT_EQ(keys[4], "weight_hr_l0");
  EXPECT_EQ(keys[9], "weight_hr_l0_reverse");
  EXPECT_EQ(keys[10], "weight_ih_l1");
}

TEST(RecurrentLayers, RefuseWhatPyTorchRefuses) {
  auto base = [] { return std::move(Attrs().set("input_size", 3).set("hidden_size", 4)); };
  auto make = [](const char* type, const Attrs& a) { return nn::create_layer(type, a); };
  expect_error([&] { make("nn.RNN", base().set("nonlinearity", "gelu")); }, NNP_INVALID_ARGUMENT,
               {"RNN", "unknown nonlinearity 'gelu'", "'tanh' or 'relu'"});
  expect_error([&] { make("nn.LSTM", base().set("proj_size", 4)); }, NNP_INVALID_ARGUMENT,
               {"proj_size has to be smaller than hidden_size"});
  expect_error([&] { make("nn.GRU", base().set("proj_size", 2)); }, NNP_INVALID_ARGUMENT, {"proj_size"});
  expect_error([&] { make("nn.GRU", base().set("dropout", 1.5)); }, NNP_INVALID_ARGUMENT,
               {"dropout should be a number in range [0, 1]"});
  expect_error([&] { make("nn.LSTM", base().set("hidden_size", 0)); }, NNP_INVALID_ARGUMENT,
               {"hidden_size must be greater than zero"});
  expect_error([&] { make("nn.RNN", base().set("num_layers", 0)); }, NNP_INVALID_ARGUMENT,
               {"num_layers must be greater than zero"});

  nn::LSTM lstm(3, 4);
  expect_error([&] { lstm(randn({2, 2, 2, 3})); }, NNP_SHAPE_MISMATCH, {"LSTM", "2-D or 3-D", "4-D"});
  expect_error([&] { lstm(randn({5, 2, 2})); }, NNP_SHAPE_MISMATCH, {"input_size. Expected 3, got 2"});
  expect_error(
      [&] {
        lstm(randn({5, 2, 3}), std::make_tuple(zeros({1, 3, 4}), zeros({1, 2, 4})));
      },
      NNP_SHAPE_MISMATCH, {"h_0", "[1,2,4]", "[1,3,4]"});
  expect_error(
      [&] {
        lstm(randn({5, 3}), std::make_tuple(zeros({1, 1, 4}), zeros({1, 1, 4})));
      },
      NNP_SHAPE_MISMATCH, {"unbatched 2-D", "3-D"});
  expect_error(
      [&] {
        lstm->call_values({randn({5, 2, 3}), zeros({1, 2, 4})});
      },
      NNP_INVALID_ARGUMENT, {"both h_0 and c_0"});
  expect_error(
      [&] {
        lstm->call_values({randn({5, 2, 3}), "state"});
      },
      NNP_INVALID_ARGUMENT, {"argument 1 (h_0) must be a tensor or None", "a string"});
  nn::GRU gru(3, 4);
  expect_error([&] { gru(randn({5, 2, 3}), zeros({1, 2, 4}, Dtype::f64)); }, NNP_DTYPE_MISMATCH, {"hx", "f64"});
  nn::GRUCell cell(3, 4);
  expect_error([&] { cell(randn({2, 2, 3})); }, NNP_SHAPE_MISMATCH, {"GRUCell", "1-D or 2-D"});
  expect_error([&] { cell(randn({2, 3}), zeros({3, 4})); }, NNP_SHAPE_MISMATCH, {"hidden0", "[2,4]", "[3,4]"});
}
