// Layers against PyTorch 1.13, one case per file in layer_fixtures/ (written
// by layer_fixtures.py): the layer is built from the case's model spec,
// loads PyTorch's state dict strictly (same keys, same order, same shapes),
// is called with the same arguments, and must give PyTorch's results and
// the gradients of the same loss for the inputs and every parameter, in f64
// within 1e-10 relative.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "pytorch_fixtures.hpp"

using namespace nnp;
namespace nn = nnp::nn;
using nlohmann::json;

namespace {

std::vector<std::string> fixture_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(NNP_LAYER_FIXTURE_DIR))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  return files;
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what << " is missing";
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<double> g = got.to(Dtype::f64).to_vector<double>(), w = want.to(Dtype::f64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], w[i], 1e-10 * (1 + std::fabs(w[i]))) << what << " element " << i;
}

class LayerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerFixture, MatchesPyTorch) {
  const std::string path = std::string(NNP_LAYER_FIXTURE_DIR) + "/" + GetParam() + ".safetensors";
  std::map<std::string, Tensor> file;
  for (auto& [key, value] : load_safetensors(path)) file[key] = value;
  auto meta = [&](const char* key) { return json::parse(safetensors_metadata(path, key)); };

  nn::ModuleHandle layer = nn::model_from_spec(safetensors_metadata(path, "spec"));
  layer.to(Dtype::f64);
  layer.train(meta("training").template get<bool>());
  EXPECT_EQ(layer.repr(), safetensors_metadata(path, "repr")) << "PyTorch's repr";

  StateDict state;
  for (const std::string& key : meta("state_keys").template get<std::vector<std::string>>())
    state.emplace_back(key, file.at("state." + key));
  layer.load_state_dict(state, /*strict=*/true);
  std::vector<std::string> own_keys;
  for (const auto& entry : layer.state_dict()) own_keys.push_back(entry.first);
  EXPECT_EQ(own_keys, meta("state_keys").template get<std::vector<std::string>>()) << "state-dict keys or their order";

  std::vector<Value> args;
  std::map<size_t, Tensor> inputs;
  const json arg_meta = meta("args");
  for (size_t i = 0; i < arg_meta.size(); ++i) {
    const json& a = arg_meta[i];
    if (a.is_object()) {
      Tensor t = file.at(a.at("tensor").get<std::string>()).clone();
      if (is_floating(t.dtype())) t.requires_grad_();
      inputs[i] = t;
      args.emplace_back(t);
    } else if (a.is_null()) {
      args.emplace_back();
    } else if (a.is_boolean()) {
      args.emplace_back(a.get<bool>());
    } else if (a.is_number_integer()) {
      args.emplace_back(a.get<int64_t>());
    } else if (a.is_number()) {
      args.emplace_back(a.get<double>());
    } else {
      args.emplace_back(a.get<std::string>());
    }
  }

  nn::Outputs outputs = layer.call_values(args);
  ASSERT_EQ(outputs.size(), std::stoul(safetensors_metadata(path, "outputs")));
  Tensor loss;
  for (size_t j = 0; j < outputs.size(); ++j) {
    auto want = file.find("out." + std::to_string(j));
    if (want == file.end()) {  // PyTorch gave None
      EXPECT_TRUE(outputs[j].isNone()) << "output " << j << " is " << outputs[j].kindPhrase() << ", not None";
      continue;
    }
    const Tensor out = outputs.tensor(j);
    expect_close(out, want->second, "output " + std::to_string(j));
    if (!is_floating(out.dtype())) continue;
    Tensor term = (out * test::rational_values(out.shape(), static_cast<int>(99 + j))).sum();
    loss = loss.defined() ? loss + term : term;
  }
  ASSERT_TRUE(loss.defined());
  loss.backward();
  for (const auto& [i, t] : inputs) {
    auto want = file.find("grad.in." + std::to_string(i));
    if (want != file.end()) expect_close(t.grad(), want->second, "gradient of argument " + std::to_string(i));
  }
  size_t param_grads = 0;
  for (const auto& [key, p] : layer.named_parameters()) {
    auto want = file.find("grad.param." + key);
    if (want == file.end()) continue;
    expect_close(p.grad(), want->second, "gradient of " + key);
    ++param_grads;
  }
  size_t buffers_after = 0;
  for (const auto& [key, b] : layer.named_buffers()) {
    auto want = file.find("after." + key);
    if (want == file.end()) continue;
    expect_close(b, want->second, "buffer " + key + " after the call");
    ++buffers_after;
  }
  size_t expected_after = 0;
  for (const auto& entry : file) expected_after += entry.first.rfind("after.", 0) == 0;
  EXPECT_EQ(buffers_after, expected_after) << "a buffer PyTorch updated is not among the layer's";
  size_t expected_grads = 0;
  for (const auto& entry : file) expected_grads += entry.first.rfind("grad.param.", 0) == 0;
  EXPECT_EQ(param_grads, expected_grads) << "a parameter with PyTorch's gradient is not among the layer's";
}

INSTANTIATE_TEST_SUITE_P(PyTorch, LayerFixture, ::testing::ValuesIn(fixture_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
