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

std::vector<std::string> optimizer_fixture_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(NNP_OPTIMIZER_FIXTURE_DIR))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  return files;
}

// nnplug's options from the fixture's: PyTorch's tuples come as lists.
nn::Attrs options_of(const json& given) {
  nn::Attrs options;
  for (const auto& [name, value] : given.items()) {
    if (value.is_boolean())
      options.set(name, value.get<bool>());
    else if (value.is_array())  // betas, etas, step_sizes
      options.set(name, value.get<std::vector<double>>());
    else
      options.set(name, value.get<double>());
  }
  return options;
}

class OptimizerFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerFixture, TwentyStepsMatchPyTorch) {
  const std::string path = std::string(NNP_OPTIMIZER_FIXTURE_DIR) + "/" + GetParam() + ".safetensors";
  std::map<std::string, Tensor> file;
  for (auto& [key, value] : load_safetensors(path)) file[key] = value;
  const std::string kind = safetensors_metadata(path, "kind");
  const json given = json::parse(safetensors_metadata(path, "options"));
  Tensor w = file.at("start.w").clone().requires_grad_(), b = file.at("start.b").clone().requires_grad_();
  const Tensor x = file.at("x"), y = file.at("y");
  const auto loss = [&] {
    Tensor d = (x.matmul(w.t()) + b).tanh() - y;
    return (d * d).mean();
  };
  std::function<void()> step;
  std::unique_ptr<optim::Optimizer> opt;
  std::unique_ptr<optim::LBFGS> lbfgs;
  if (kind == "LBFGS") {
    optim::LBFGSOptions o(given.value("lr", 1.0));
    o.max_iter(given.value("max_iter", int64_t{20})).history_size(given.value("history_size", int64_t{100}));
    o.tolerance_grad(given.value("tolerance_grad", 1e-7));
    if (given.contains("max_eval")) o.max_eval(given["max_eval"].get<int64_t>());
    if (given.contains("line_search_fn")) o.line_search_fn(given["line_search_fn"].get<std::string>());
    lbfgs = std::make_unique<optim::LBFGS>(std::vector<Tensor>{w, b}, o);
    step = [&] {
      lbfgs->step([&] {
        lbfgs->zero_grad();
        Tensor l = loss();
        l.backward();
        return l;
      });
    };
  } else {
    opt = std::make_unique<optim::Optimizer>(kind, std::vector<Tensor>{w, b}, options_of(given));
    step = [&] {
      opt->zero_grad();
      loss().backward();
      opt->step();
    };
  }
  // LBFGS's curvature pairs are differences of nearby gradients: rounding
  // grows faster there (to ~1e-9 in 60 iterations), so it gets 1e-8.
  const double tolerance = kind == "LBFGS" ? 1e-8 : 1e-10;
  const int steps = std::stoi(safetensors_metadata(path, "steps"));
  for (int i = 0; i < steps; ++i) {
    step();
    for (const auto& [name, p] : {std::pair{"w", w}, std::pair{"b", b}}) {
      const Tensor want = file.at("step" + std::to_string(i) + "." + name);
      const std::vector<double> g = p.detach().to_vector<double>(), e = want.to_vector<double>();
      ASSERT_EQ(g.size(), e.size());
      for (size_t j = 0; j < g.size(); ++j)
        ASSERT_NEAR(g[j], e[j], tolerance * (1 + std::fabs(e[j])))
            << name << " after step " << i + 1 << ", element " << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, OptimizerFixture, ::testing::ValuesIn(optimizer_fixture_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
