// JSON model specs: layer types by name with attributes, containers with
// children, and errors that point at the place in the spec.
#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

TEST(ModelSpec, BuildsATreeOfRegistryLayers) {
  nn::ModuleHandle net = nn::model_from_spec(R"({
    "type": "nn.Sequential",
    "children": [
      {"type": "nn.Linear", "in_features": 4, "out_features": 8, "bias": false},
      {"type": "nn.LeakyReLU", "negative_slope": 0.2},
      {"type": "nn.ModuleDict", "children": {"head": {"type": "nn.Linear", "in_features": 8, "out_features": 2}}}
    ]})");
  EXPECT_EQ(net.type_name(), "Sequential");
  std::vector<std::string> names;
  for (auto& [name, t] : net.named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "2.head.weight", "2.head.bias"}));
  EXPECT_EQ(net.repr(),
            "Sequential(\n  (0): Linear(in_features=4, out_features=8, bias=False)\n"
            "  (1): LeakyReLU(negative_slope=0.2)\n  (2): ModuleDict(\n"
            "    (head): Linear(in_features=8, out_features=2, bias=True)\n  )\n)");
  nn::ModuleHandle first_two = nn::model_from_spec(
      R"({"type": "nn.Sequential", "children": [{"type": "nn.Linear", "in_features": 4, "out_features": 3}, {"type": "nn.Flatten", "start_dim": 0}]})");
  EXPECT_EQ(first_two(randn({2, 4})).shape(), (Shape{6}));
  EXPECT_EQ(
      nn::model_from_spec(R"({"type": "nn.LayerNorm", "normalized_shape": [2, 3]})").get_parameter("weight").shape(),
      (Shape{2, 3}));
}

TEST(ModelSpec, ErrorsPointAtTheSpec) {
  expect_error([] { nn::model_from_spec("{not json"); }, NNP_INVALID_ARGUMENT, {"not valid JSON"});
  expect_error([] { nn::model_from_spec(R"({"in_features": 3})"); }, NNP_INVALID_ARGUMENT, {"missing \"type\""});
  expect_error(
      [] {
        nn::model_from_spec(R"({"type": "nn.Sequential", "children": [{"type": "nn.ReLU"}, {"type": "nn.Relu"}]})");
      },
      NNP_NOT_FOUND, {"spec.children[1]", "unknown layer type 'nn.Relu'", "closest: nn.ReLU"});
  expect_error([] { nn::model_from_spec(R"({"type": "nn.Linear", "in_features": "4", "out_features": 2})"); },
               NNP_INVALID_ARGUMENT, {"spec: nn.Linear: attribute 'in_features' must be an int"});
  expect_error([] { nn::model_from_spec(R"({"type": "nn.Linear", "in_features": 4})"); }, NNP_INVALID_ARGUMENT,
               {"required attribute 'out_features'"});
  expect_error([] { nn::model_from_spec(R"({"type": "nn.Sequential", "layers": []})"); }, NNP_INVALID_ARGUMENT,
               {"containers take only \"children\""});
  expect_error([] { nn::model_from_spec(R"({"type": "nn.ReLU", "children": []})"); }, NNP_INVALID_ARGUMENT,
               {"only containers take \"children\""});
  expect_error([] { nn::model_from_spec_file("/no/such/spec.json"); }, NNP_IO_ERROR, {"cannot open"});
  // null is PyTorch's None: refused for a required attribute, and a list of
  // floats where ints are declared is refused naming both types.
  expect_error([] { nn::model_from_spec(R"({"type": "nn.Linear", "in_features": null, "out_features": 2})"); },
               NNP_INVALID_ARGUMENT, {"'in_features' is required and cannot be None"});
  expect_error([] { nn::model_from_spec(R"({"type": "nn.MaxPool2d", "kernel_size": [2.5, 2]})"); },
               NNP_INVALID_ARGUMENT, {"'kernel_size' must be a list of ints but a list of floats ([2.5,2.0])"});
  expect_error([] { nn::model_from_spec(R"({"type": "nn.NLLLoss", "weight": [1, "2"]})"); }, NNP_INVALID_ARGUMENT,
               {"lists may hold numbers only"});
}

TEST(ModelSpec, NullIsNoneAndNumberListsAreFloats) {
  // momentum null: a cumulative average, printed as PyTorch prints it.
  nn::ModuleHandle norm = nn::model_from_spec(R"({"type": "nn.BatchNorm1d", "num_features": 2, "momentum": null})");
  EXPECT_EQ(norm.repr(), "BatchNorm1d(2, eps=1e-05, momentum=None, affine=True, track_running_stats=True)");
  norm.train();
  norm(from_vector(std::vector<float>{1, 2, 3, 6}, {2, 2}));
  norm(from_vector(std::vector<float>{3, 4, 5, 8}, {2, 2}));
  // Running mean: the plain average of the batches' means, (2, 4) and (4, 6).
  const std::vector<float> mean = norm.named_buffers().at(0).second.to_vector<float>();
  EXPECT_NEAR(mean[0], 3.0f, 1e-6);
  EXPECT_NEAR(mean[1], 5.0f, 1e-6);
  // Integers and floats mix in one list of numbers; the weight is a buffer.
  nn::ModuleHandle loss = nn::model_from_spec(R"({"type": "nn.NLLLoss", "weight": [1, 0.5]})");
  ASSERT_EQ(loss.named_buffers().size(), 1u);
  EXPECT_EQ(loss.named_buffers().at(0).first, "weight");
  EXPECT_EQ(loss.named_buffers().at(0).second.to_vector<float>(), (std::vector<float>{1.0f, 0.5f}));
  // Without a weight there is no buffer and no state-dict entry, as PyTorch's None.
  EXPECT_TRUE(nn::model_from_spec(R"({"type": "nn.NLLLoss"})").state_dict().empty());
}
