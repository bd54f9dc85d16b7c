// Optimizers against PyTorch 1.13, one case per file in
// optimizer_fixtures/ (written by optimizer_fixtures.py): 20 steps of each
// optimizer on the same problem from the same start must give PyTorch's
// parameters after every step, in f64 within 1e-10 relative.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "pytorch_fixtures.hpp"

using namespace nnp;
using nlohmann::json;

namespace {

std::vector<std::string> fixture_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(NNP_OPTIMIZER_FIXTURE_DIR))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  return files;
}

class OptimizerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerFixture, TwentyStepsMatchPyTorch) {
  const std::string path = std::string(NNP_OPTIMIZER_FIXTURE_DIR) + "/" + GetParam() + ".safetensors";
  std::map<std::string, Tensor> file;
  for (auto& [key, value] : load_safetensors(path)) file[key] = value;
  nn::Attrs options;
  const json given = json::parse(safetensors_metadata(path, "options"));
  for (const auto& [name, value] : given.items()) {
    if (value.is_boolean())
      options.set(name, value.get<bool>());
    else if (value.is_array())  // PyTorch's tuples: betas, etas, step_sizes
      options.set(name, value.get<std::vector<double>>());
    else
      options.set(name, value.get<double>());
  }
  Tensor w = file.at("start.w").clone().requires_grad_(), b = file.at("start.b").clone().requires_grad_();
  const Tensor x = file.at("x"), y = file.at("y");
  optim::Optimizer opt(safetensors_metadata(path, "kind"), {w, b}, std::move(options));
  const int steps = std::stoi(safetensors_metadata(path, "steps"));
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    Tensor d = (x.matmul(w.t()) + b).tanh() - y;
    (d * d).mean().backward();
    opt.step();
    for (const auto& [name, p] : {std::pair{"w", w}, std::pair{"b", b}}) {
      const Tensor want = file.at("step" + std::to_string(step) + "." + name);
      const std::vector<double> g = p.detach().to_vector<double>(), e = want.to_vector<double>();
      ASSERT_EQ(g.size(), e.size());
      for (size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(g[i], e[i], 1e-10 * (1 + std::fabs(e[i])))
            << name << " after step " << step + 1 << ", element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, OptimizerFixture, ::testing::ValuesIn(fixture_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
