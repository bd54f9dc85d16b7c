// An optimizer algorithm from a plugin: signSGD with a step counter, written
// on the SDK's helper (nnp/optimizer_algorithm.hpp) and registered through
// the table as the built-in library registers SGD and Adam.
#include <nnp/nnp.hpp>
#include <nnp/optimizer_algorithm.hpp>
#include <nnp/plugin.hpp>

namespace {

nnp_status init(const nnp_api* api, nnp_plugin_host* host) {
  return nnp::init_plugin(api, [&] {
    nnp::optim::OptimizerAlgorithm a;
    a.kind = "test.SignSGD";
    a.doc = "p - lr * sign(g), counting its steps";
    a.options = {{"lr", 0.5}};
    a.host_state = {"count"};
    a.check = [](const nnp::optim::OptionValues& o) {
      if (!(o["lr"] > 0)) throw nnp::Error(NNP_INVALID_ARGUMENT, "test.SignSGD: lr must be > 0");
    };
    a.update = [](const nnp::optim::OptionValues& o, const nnp::Tensor& p, const nnp::Tensor& g,
                  nnp::optim::OptimizerState& state) {
      auto it = state.find("count");
      const double count = it == state.end() ? 1 : it->second.item<double>() + 1;
      state["count"] = nnp::full({}, count, nnp::Dtype::f64);
      return p - g.sign() * o["lr"];
    };
    nnp::optim::register_optimizer(host, std::move(a));
  });
}

}  // namespace

NNP_PLUGIN("test.optimizer", "0", "registers the optimizer test.SignSGD (tests only)", init)
