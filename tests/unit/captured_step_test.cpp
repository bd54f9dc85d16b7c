// nnp::compile_step (ABI 1.25): a training step recorded once and replayed
// gives the eager step's numbers, draws its dropout masks as eager does,
// captures again when its inputs or the optimizer's options change, and
// runs as written - saying why - where a replay could not stand for it.
#include <gtest/gtest.h>

#include <nnp/nnp.hpp>

#include "test_support.hpp"

namespace {
namespace captured_step_test {

using namespace nnp;

const char* const kMlp = R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 64, "out_features": 32}, {"type": "nn.ReLU"},
    {"type": "nn.Dropout", "p": 0.2}, {"type": "nn.Linear", "in_features": 32, "out_features": 10}]})";

// One model, its optimizer and loss, trained by the eager step or a captured one.
struct Trainer {
  explicit Trainer(const std::string& algorithm = "SGD",
                   nn::Attrs options = std::move(nn::Attrs().set("lr", 0.1).set("momentum", 0.9))) {
    manual_seed(11);
    net = nn::model_from_spec(kMlp);
    opt = std::make_unique<optim::Optimizer>(algorithm, net.parameters(), std::move(options));
  }
  Tensor eager(const Tensor& x, const Tensor& y) {
    opt->zero_grad();
    Tensor loss = loss_fn.call({net(x), y});
    loss.backward();
    opt->step();
    return loss;
  }
  CapturedStep captured() {
    return compile_step([this](const std::vector<Tensor>& in) { return std::vector<Tensor>{eager(in[0], in[1])}; });
  }
  nn::ModuleHandle net;
  std::unique_ptr<optim::Optimizer> opt;
  nn::ModuleHandle loss_fn = nn::create_layer("nn.CrossEntropyLoss");
};

void expect_same_weights(const nn::ModuleHandle& a, const nn::ModuleHandle& b, double tolerance) {
  const NamedTensors got = a.named_parameters(), want = b.named_parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].first);
    test::expect_close(got[i].second, want[i].second, tolerance);
  }
}

// Batches of the digits' size, a new one each step.
std::vector<std::pair<Tensor, Tensor>> batches(int count, int64_t rows = 32) {
  manual_seed(5);
  std::vector<std::pair<Tensor, Tensor>> out;
  for (int i = 0; i < count; ++i) out.push_back({rand({rows, 64}), randint(0, 10, {rows}, Dtype::i64)});
  return out;
}

// 20 steps with dropout and momentum: the captured step replays from its
// third call and follows the eager losses and weights within 1e-6 (the
// same kernels on the same data: in fact bit for bit).
TEST(CapturedStep, TwentyStepsEqualTheEagerSteps) {
  Trainer eager, captured;
  CapturedStep step = captured.captured();
  const auto data = batches(20);
  manual_seed(3);  // each run's generator at the same place: dropout's masks alike
  std::vector<float> eager_losses;
  for (const auto& [x, y] : data) eager_losses.push_back(eager.eager(x, y).item<float>());
  manual_seed(3);
  std::vector<float> captured_losses;
  for (const auto& [x, y] : data) {
    std::vector<Tensor> out = step({x, y});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_FALSE(out[0].requires_grad());
    captured_losses.push_back(out[0].item<float>());
  }
  test::expect_close(captured_losses, eager_losses, 1e-6);
  expect_same_weights(captured.net, eager.net, 1e-6);
  EXPECT_LT(captured_losses.back(), captured_losses.front()) << "it learned";
  const std::string explain = step.explain();
  EXPECT_NE(explain.find("captured step: replays"), std::string::npos) << explain;
  EXPECT_NE(explain.find("calls: 20 (3 recorded, 17 replayed)"), std::string::npos) << explain;
  // The first product, its bias and ReLU made one call (2 fewer), the last
  // product and its bias another (1), the four gradients' copies into
  // .grad were elided (4), with the loss's copy of its masked targets (1),
  // and ReLU's backward took the first bias's gradient with it (le, where
  // and reduce one call: 2 fewer; the two zeros they compared with: 2).
  EXPECT_NE(explain.find("; 12 fewer than recorded"), std::string::npos) << explain;
  // The gradients hold the last step's, as after an eager step.
  const NamedTensors g = captured.net.named_parameters(), w = eager.net.named_parameters();
  for (size_t i = 0; i < g.size(); ++i) test::expect_close(g[i].second.grad(), w[i].second.grad(), 1e-6);
}

// The tape's passes leave alone what they may not rewrite: a copy whose
// source is written afterwards, a product whose biased sum is read again,
// a ReLU whose input is a result. Each call gives the eager numbers.
TEST(CapturedStep, ThePassesKeepWhatIsReadAgain) {
  manual_seed(2);
  const Tensor w = randn({16, 8}), b = randn({16});
  auto body = [&](const Tensor& x) {
    Tensor t = x * 2.0;
    Tensor kept = t.clone();  // a copy of a temporary written again below
    t.mul_(3.0);
    Tensor h = nn::functional::linear(x, w, b);  // the biased sum, read twice
    Tensor r = h.relu();
    return std::vector<Tensor>{kept + t, r + h * 0.5, h};
  };
  CapturedStep step = compile_step([&](const std::vector<Tensor>& in) { return body(in[0]); });
  for (int call = 0; call < 6; ++call) {
    const Tensor x = randn({4, 8});
    const std::vector<Tensor> got = step({x}), want = body(x);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) test::expect_close(got[i], want[i], 1e-6);
  }
  EXPECT_NE(step.explain().find("replays"), std::string::npos) << step.explain();
}

// Results are the caller's: a later replay does not write them.
TEST(CapturedStep, ResultsAreNotOverwrittenByLaterCalls) {
  Trainer t;
  CapturedStep step = t.captured();
  const auto data = batches(6);
  std::vector<Tensor> losses;
  std::vector<float> seen;
  for (const auto& [x, y] : data) {
    losses.push_back(step({x, y})[0]);
    seen.push_back(losses.back().item<float>());
  }
  for (size_t i = 0; i < losses.size(); ++i) EXPECT_EQ(losses[i].item<float>(), seen[i]);
}

// A new batch size, and a learning rate set between calls, make the next
// call capture again; the numbers stay the eager ones.
TEST(CapturedStep, CapturesAgainWhenInputsOrOptionsChange) {
  Trainer eager, captured;
  CapturedStep step = captured.captured();
  auto small = batches(4, 8), large = batches(4, 32);
  std::vector<std::pair<Tensor, Tensor>> data = {small[0], small[1], small[2], small[3], large[0], large[1], large[2]};
  manual_seed(3);
  std::vector<float> want, got;
  for (size_t i = 0; i < data.size(); ++i) {
    if (i == 6) eager.opt->set("lr", 0.05);
    want.push_back(eager.eager(data[i].first, data[i].second).item<float>());
  }
  manual_seed(3);
  for (size_t i = 0; i < data.size(); ++i) {
    if (i == 6) captured.opt->set("lr", 0.05);
    got.push_back(step({data[i].first, data[i].second})[0].item<float>());
    if (i == 4) {
      EXPECT_NE(step.explain().find("input 0 is [32,64] f32"), std::string::npos) << step.explain();
    }
  }
  test::expect_close(got, want, 1e-6);
  expect_same_weights(captured.net, eager.net, 1e-6);
  EXPECT_NE(step.explain().find("optimizer's options"), std::string::npos) << step.explain();
}

// Adam's bias corrections change every step (host-side values in its
// kernels): the step runs as written, says so, and still trains as eager.
TEST(CapturedStep, AStepWhoseKernelsChangeRunsAsWritten) {
  Trainer eager("Adam", std::move(nn::Attrs().set("lr", 0.01))),
      captured("Adam", std::move(nn::Attrs().set("lr", 0.01)));
  CapturedStep step = captured.captured();
  manual_seed(3);
  std::vector<float> want, got;
  for (const auto& [x, y] : batches(8)) want.push_back(eager.eager(x, y).item<float>());
  manual_seed(3);
  for (const auto& [x, y] : batches(8)) got.push_back(step({x, y})[0].item<float>());
  test::expect_close(got, want, 1e-6);
  const std::string explain = step.explain();
  EXPECT_NE(explain.find("runs as written on every call, because its kernel calls differed"), std::string::npos)
      << explain;
}

// A value read on the host that is not the same each step (here the loss
// itself, turned into a branch) is read again at each replay; when it
// differs the call runs as written, and after a few times the step stays so.
TEST(CapturedStep, AHostReadThatChangesEndsTheReplays) {
  Trainer eager, captured;
  auto branchy = [](Trainer& t, const Tensor& x, const Tensor& y) {
    Tensor loss = t.eager(x, y);
    return loss.item<float>() > 100.0f ? loss * 2.0 : loss;  // never taken: the value read differs anyway
  };
  CapturedStep step =
      compile_step([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{branchy(captured, in[0], in[1])}; });
  const auto data = batches(10);
  manual_seed(3);
  std::vector<float> want, got;
  for (const auto& [x, y] : data) want.push_back(branchy(eager, x, y).item<float>());
  manual_seed(3);
  for (const auto& [x, y] : data) got.push_back(step({x, y})[0].item<float>());
  EXPECT_EQ(got, want);
  EXPECT_NE(step.explain().find("reads on the host"), std::string::npos) << step.explain();
}

// Labels out of range are still refused during replays (the loss's range
// check is read again each step), with the loss's own message.
TEST(CapturedStep, ABadLabelIsRefusedDuringReplays) {
  Trainer t;
  CapturedStep step = t.captured();
  const auto data = batches(4);
  for (const auto& [x, y] : data) step({x, y});
  ASSERT_NE(step.explain().find("replays"), std::string::npos) << step.explain();
  Tensor bad = data[0].second.clone();
  bad = where(bad.eq(bad.scalar_like(3)), bad.scalar_like(12), bad);
  try {
    step({data[0].first, bad});
    FAIL() << "a label of 12 for 10 classes was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside [0, 10)"), std::string::npos) << e.what();
  }
  step({data[1].first, data[1].second});  // and the step goes on
}

// A step that calls itself is refused, not left waiting for itself.
TEST(CapturedStep, AStepCallingItselfIsRefused) {
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> body;
  CapturedStep step = compile_step([&](const std::vector<Tensor>& in) { return body(in); });
  body = [&](const std::vector<Tensor>& in) { return step(in); };
  try {
    step({ones({2})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("calls its own step"), std::string::npos) << e.what();
  }
  body = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; };
  EXPECT_EQ(step({ones({2})})[0].sum().item<float>(), 4.0f);  // and it is usable after
}

// The step function's own failure reaches the caller with its message.
TEST(CapturedStep, TheStepsErrorReachesTheCaller) {
  CapturedStep step = compile_step(
      [](const std::vector<Tensor>&) -> std::vector<Tensor> { throw Error(NNP_INVALID_ARGUMENT, "no data today"); });
  try {
    step({ones({2})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no data today"), std::string::npos) << e.what();
  }
}

}  // namespace captured_step_test
}  // namespace
