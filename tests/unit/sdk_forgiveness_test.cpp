// The SDK forgives a careless vendor: what a plugin gets wrong becomes an
// nnplug error naming the layer and the plugin, never an abort, and what
// it declares wrongly is refused at registration.
#include <unistd.h>

#include <climits>
#include <string>

#include "test_support.hpp"

using namespace nnp;

namespace {

using nnp::test::corpus;

struct Plain : nn::Module {
  explicit Plain(const nn::Attrs&) : Module("Plain") {}
};

void load(const std::string& name) {
  Device cpu("cpu");  // discovery first
  check(api().load_plugin(corpus(name).c_str()));
}

}  // namespace

// The header's exception wrapper used to call api() again in its catch
// block: with no table that threw out of a noexcept function (abort).
TEST(SdkForgiveness, ForgottenSetApiIsAnErrorNotAnAbort) {
  load("forgetful_plugin");
  nnp_module* m = nullptr;
  nnp_status status = api().layer_create("forgetful.Layer", nullptr, &m);
  EXPECT_EQ(status, NNP_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  std::string message = api().last_error();
  EXPECT_NE(message.find("forgetful.Layer"), std::string::npos) << message;
  EXPECT_NE(message.find("nnp::set_api"), std::string::npos) << message;
}

TEST(SdkForgiveness, AForwardThatThrowsNamesTheLayerAndPlugin) {
  load("faulty_layers_plugin");
  nn::ModuleHandle layer = nn::create_layer("faulty.ThrowingForward");
  test::expect_error([&] { layer(ones({2})); }, NNP_DEVICE_ERROR,
                     {"faulty.ThrowingForward (plugin test.faulty_layers) forward", "the accelerator caught fire"});
}

TEST(SdkForgiveness, ABackwardThatThrowsNamesTheLayerAndPlugin) {
  load("faulty_layers_plugin");
  nn::ModuleHandle layer = nn::create_layer("faulty.ThrowingBackward");
  Tensor x = ones({3}).requires_grad_();
  Tensor y = layer(x).sum();
  test::expect_error([&] { y.backward(); }, NNP_INTERNAL,
                     {"faulty.ThrowingBackward (plugin test.faulty_layers) backward", "backward kernel missing"});
}

// As PyTorch's engine does, a gradient of another floating dtype is
// converted to its input's: x.grad stays f32.
TEST(SdkForgiveness, ACustomGradientOfAnotherDtypeIsConvertedToTheInputs) {
  load("faulty_layers_plugin");
  nn::ModuleHandle layer = nn::create_layer("faulty.F64Grad");
  Tensor x = ones({3}).requires_grad_();
  layer(x).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), Dtype::f32);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(SdkForgiveness, AttributeDeclarationsAreChecked) {
  nnp_attr_def zero_size{};
  zero_size.name = "alpha";
  zero_size.type = NNP_ATTR_FLOAT;
  nnp_layer_type type{};
  type.struct_size = sizeof(type);
  type.name = "careless.ZeroSize";
  type.create = nn::create_layer_of<Plain>;
  type.attrs = &zero_size;
  type.attr_count = 1;
  EXPECT_EQ(api().register_layer_type(nullptr, &type), NNP_ABI_MISMATCH);
  EXPECT_NE(std::string(api().last_error()).find("struct_size 0"), std::string::npos) << api().last_error();

  nnp_attr_def both{sizeof(nnp_attr_def), "alpha", NNP_ATTR_FLOAT, 1, "1.0", "required and defaulted"};
  type.name = "careless.RequiredWithDefault";
  type.attrs = &both;
  EXPECT_EQ(api().register_layer_type(nullptr, &type), NNP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("required and with a default"), std::string::npos)
      << api().last_error();
}

// nnp.h: load_plugin takes absolute paths. A relative one that exists from
// the working directory was canonicalised and loaded.
TEST(SdkForgiveness, RelativePluginPathsAreRefusedEvenWhenTheyExist) {
  Device cpu("cpu");
  std::string relative = std::string(NNP_CORPUS_DIR).substr(1) + "/libgood.so";  // relative to /
  char previous[PATH_MAX];
  ASSERT_NE(getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(chdir("/"), 0);
  nnp_status status = api().load_plugin(relative.c_str());
  std::string message = api().last_error();
  ASSERT_EQ(chdir(previous), 0);
  EXPECT_EQ(status, NNP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("is not absolute"), std::string::npos) << message;
}
