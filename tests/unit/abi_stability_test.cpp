// A plugin compiled against the frozen ABI 1.0 headers (tests/abi) loads in
// this core, whose table and info structs have grown since, and its layer
// trains; a plugin claiming a minor newer than the core's is refused with
// both versions named (the corpus's newer_minor, in plugin_loading_test).
#include "test_support.hpp"

using namespace nnp;

namespace {

std::string abi10_plugin() { return std::string(NNP_CORPUS_DIR) + "/libabi10.so"; }

}  // namespace

TEST(AbiStability, APluginBuiltAgainstOneZeroLoadsAndTrains) {
  ASSERT_GE(api().abi_minor, 1u) << "this test is about a core newer than the plugin";
  // Discovery first, so the plugin's init has backends and plugins whose
  // info it asks for with its 1.0-sized structs.
  ASSERT_FALSE(backends().empty());
  ASSERT_EQ(api().load_plugin(abi10_plugin().c_str()), NNP_OK) << api().last_error();

  // Its descriptor predates `description`: the core must not read past it.
  bool found = false;
  for (int32_t i = 0; i < api().plugin_count(); ++i) {
    nnp_plugin_info info{};
    info.struct_size = sizeof(info);
    check(api().plugin_info(i, &info));
    if (std::string(info.name) != "test.abi10") continue;
    found = true;
    EXPECT_EQ(info.loaded, 1);
    EXPECT_STREQ(info.version, "1.0.0");
    EXPECT_STREQ(info.description, "");
  }
  EXPECT_TRUE(found);

  auto layer = nn::create_layer("abi10.Affine", nn::Attrs().set("features", 3));
  Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(test::floats(layer(x)), (std::vector<float>{3, 4, 5, 6, 7, 8}));  // x * 1 + 2.0

  // Fit weight to [0.5, -1, 2] by SGD through the 1.0 plugin's forward.
  Tensor target = x * from_vector<float>({0.5f, -1.0f, 2.0f}) + 2.0;
  optim::Optimizer sgd("SGD", layer.parameters(), std::move(nn::Attrs().set("lr", 0.1)));
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    sgd.zero_grad();
    Tensor loss = ((layer(x) - target) * (layer(x) - target)).mean();
    loss.backward();
    sgd.step();
    (step == 0 ? first : last) = loss.item<float>();
  }
  EXPECT_LT(last, first * 1e-4) << "loss " << first << " -> " << last;
  std::vector<float> w = test::floats(layer.get_parameter("weight"));
  EXPECT_NEAR(w[0], 0.5f, 1e-2);
  EXPECT_NEAR(w[1], -1.0f, 1e-2);
  EXPECT_NEAR(w[2], 2.0f, 1e-2);

  test::expect_error([] { nn::create_layer("abi10.Affine"); }, NNP_INVALID_ARGUMENT,
                     {"abi10.Affine: required attribute 'features' (an int) is missing"});
}
