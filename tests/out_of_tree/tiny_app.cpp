// Trains a model spec that uses tiny.Scale (loaded from NNP_PLUGIN_PATH),
// saves it, rebuilds the spec, loads the file and checks the outputs are the
// same bit for bit. Prints one line per check; exits 1 on the first failure.
#include <cstdio>
#include <nnp/nnp.hpp>
#include <string>

namespace {

const char* const kSpec = R"({"type": "nn.Sequential", "children": [
  {"type": "nn.Linear", "in_features": 4, "out_features": 8},
  {"type": "tiny.Scale", "features": 8, "init": 0.5},
  {"type": "act.Swish", "beta": 1.5},
  {"type": "nn.Linear", "in_features": 8, "out_features": 2}]})";

int fail(const std::string& what) {
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) return fail("usage: tiny_app CHECKPOINT");
  nnp::manual_seed(7);
  nnp::nn::ModuleHandle net = nnp::nn::model_from_spec(kSpec);
  nnp::Tensor x = nnp::randn({32, 4});
  nnp::Tensor y = x.sum({1}, true).expand({32, 2}).contiguous();  // a learnable target
  nnp::optim::Optimizer opt("SGD", net.parameters(), std::move(nnp::nn::Attrs().set("lr", 0.05)));
  nnp::nn::ModuleHandle mse = nnp::nn::create_layer("nn.MSELoss");
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    opt.zero_grad();
    nnp::Tensor loss = mse.call({net(x), y});
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item<float>();
  }
  std::printf("loss %.4f -> %.4f\n", first, last);
  if (!(last < first * 0.2)) return fail("training through tiny.Scale did not reduce the loss");
  nnp::Tensor scale = net.get_parameter("1.weight");
  if (scale.to_vector<float>() == std::vector<float>(8, 0.5f)) return fail("tiny.Scale's weight never trained");

  net.save(argv[1]);
  nnp::nn::ModuleHandle again = nnp::nn::model_from_spec(kSpec);
  again.load(argv[1]);
  nnp::NoGradGuard no_grad;
  if (net(x).to_vector<float>() != again(x).to_vector<float>()) return fail("reloaded outputs differ");
  std::printf("saved, reloaded, same outputs\n");
  return 0;
} catch (const std::exception& e) {
  return fail(e.what());
}
