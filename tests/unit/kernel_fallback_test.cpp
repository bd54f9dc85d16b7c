// Backends that lack kernel slots and say so (nnp_backend.missing_kernels,
// ABI 1.24): the halfway and otherhalf test plugins each lack one half of
// the twelve required slots, claimant (a backend that compiles graphs) has
// none; the core runs those ops on cpu with the operands copied through
// host memory, and the profiler shows each copy. wholegraph, which has them
// all, runs the same checks as the control.
#include <gtest/gtest.h>

#include <filesystem>
#include <nnp/nnp.hpp>
#include <nnp/profiler.hpp>

#include "../../tools/bench/workload_models.hpp"
#include "test_support.hpp"

namespace kernel_fallback_test {

using namespace nnp;

constexpr uint32_t kSecondHalf = NNP_KERNEL_SLOT_BIT(NNP_KERNEL_WHERE) | NNP_KERNEL_SLOT_BIT(NNP_KERNEL_SOFTMAX) |
                                 NNP_KERNEL_SLOT_BIT(NNP_KERNEL_INDEX_SELECT) | NNP_KERNEL_SLOT_BIT(NNP_KERNEL_GATHER) |
                                 NNP_KERNEL_SLOT_BIT(NNP_KERNEL_SCATTER_ADD) | NNP_KERNEL_SLOT_BIT(NNP_KERNEL_RANDOM);
constexpr uint32_t kFirstHalf = (NNP_KERNEL_SLOT_BIT(NNP_KERNEL_REQUIRED_COUNT) - 1) & ~kSecondHalf;

using nnp::test::corpus;

// The plugin's device (loaded once per process; another test may have).
Device half_device(const std::string& name) {
  (void)api().load_plugin(corpus(name).c_str());
  return Device(name);
}

const Device kCpu("cpu");

// What each test backend declares it lacks.
uint32_t lacks(const std::string& backend) {
  if (backend == "halfway") return kSecondHalf;
  if (backend == "otherhalf") return kFirstHalf;
  if (backend == "claimant") return kFirstHalf | kSecondHalf;
  return 0;
}
bool lacks(const std::string& backend, nnp_kernel_slot slot) { return (lacks(backend) >> slot & 1u) != 0; }

nnp_backend_info info_of(const std::string& name) {
  for (const nnp_backend_info& info : backend_summaries())
    if (name == info.name) return info;
  ADD_FAILURE() << "no backend " << name;
  return {};
}

class HalfBackend : public ::testing::TestWithParam<std::string> {
 protected:
  Device device() const { return half_device(GetParam()); }
};

TEST_P(HalfBackend, IsLoadedWithTheSlotsItLacksDeclared) {
  (void)device();
  const nnp_backend_info info = info_of(GetParam());
  ASSERT_GE(info.struct_size, NNP_BACKEND_INFO_SIZE_1_24);
  EXPECT_EQ(info.missing_kernels, lacks(GetParam()));
  EXPECT_EQ(info.flags & NNP_BACKEND_HOST_MEMORY, 0u) << "its operands must cross through the copies";
  const bool compiles = GetParam() == "claimant" || GetParam() == "wholegraph";
  EXPECT_EQ((info.flags & NNP_BACKEND_COMPILES_GRAPHS) != 0, compiles);
  EXPECT_EQ(info_of("cpu").missing_kernels, 0u);
  EXPECT_EQ(kernel_slots_text(kSecondHalf), "where, softmax, index_select, gather, scatter_add, random");
}

// Each of the twelve slots, run there (its own kernel or cpu's), gives what
// cpu gives: exactly where cpu's kernel ran it, within rounding where the
// backend's own (reference) kernel did.
TEST_P(HalfBackend, EveryKernelGivesWhatCpuGives) {
  const Device d = device();
  manual_seed(11);
  const Tensor x = randn({6, 7}), y = randn({6, 7}), w = randn({7, 5});
  const Tensor index = randint(0, 6, {4}), rows = randint(0, 7, {6, 3});
  auto on = [&](const Tensor& t) { return t.to(d); };
  auto same = [](const Tensor& got, const Tensor& want, const char* what) {
    SCOPED_TRACE(what);
    test::expect_close(got.to(kCpu).to(Dtype::f32), want.to(Dtype::f32), 1e-6);
  };
  same(on(x).to(Dtype::f64), x.to(Dtype::f64), "copy (conversion)");
  same(zeros({3, 4}, Dtype::f32, d) + 2.5, full({3, 4}, 2.5), "fill");
  same(on(x).tanh(), x.tanh(), "unary");
  same(on(x) * on(y), x * y, "binary");
  same(where(on(x).gt(on(y)), on(x), on(y)), where(x.gt(y), x, y), "where");
  same(on(x).sum({1}), x.sum({1}), "reduce");
  same(on(x).matmul(on(w)), x.matmul(w), "gemm");
  same(on(x).log_softmax(1), x.log_softmax(1), "softmax");
  same(on(x).index_select(0, on(index)), x.index_select(0, index), "index_select");
  same(on(x).gather(1, on(rows)), x.gather(1, rows), "gather");
  same(on(zeros({6, 7})).scatter_add(1, on(rows), on(y.slice(1, 0, 3))),
       zeros({6, 7}).scatter_add(1, rows, y.slice(1, 0, 3)), "scatter_add");
  manual_seed(5);
  const Tensor drawn = randn({3, 9}, Dtype::f32, d);
  manual_seed(5);
  EXPECT_EQ(drawn.to(kCpu).to_vector<float>(), randn({3, 9}).to_vector<float>()) << "random: Philox on every backend";
}

// A result written into a view with gaps (a column of a matrix) keeps the
// elements between its own: the staged copy reads them first.
TEST_P(HalfBackend, AResultWrittenIntoAViewWithGapsKeepsTheRest) {
  const Device d = device();
  const Tensor m = arange(0, 12).to(Dtype::f32).reshape({3, 4});
  Tensor there = m.to(d);
  Tensor column = there.slice(1, 1, 2);
  column.copy_(full({3, 1}, -1.0).to(d));
  Tensor want = m.clone();
  want.slice(1, 1, 2).copy_(full({3, 1}, -1.0));
  EXPECT_EQ(there.to(kCpu).to_vector<float>(), want.to_vector<float>());
  Tensor strided = there.slice(0, 0, 3, 2);
  strided.normal_(0.0, 1.0);
  EXPECT_EQ(there.to(kCpu).slice(0, 1, 2).to_vector<float>(), want.slice(0, 1, 2).to_vector<float>());
}

// Every op whose kernel runs elsewhere copies its operands out and its
// result back, each copy an event the profiler shows inside the op's.
TEST_P(HalfBackend, TheProfilerShowsEveryCopy) {
  const Device d = device();
  const Tensor a = randn({4, 5}).to(d), b = randn({4, 5}).to(d);
  profiler::Profiler recording;
  const Tensor c = a.softmax(1);
  const Tensor s = a + b;
  const std::vector<profiler::Event> events = recording.stop().events();
  std::vector<std::string> copies;
  int64_t softmax_event = -1;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].name == "softmax") softmax_event = static_cast<int64_t>(i);
    if (events[i].kind != profiler::EventKind::Copy) continue;
    copies.push_back(events[i].name);
    EXPECT_EQ(events[i].device, GetParam() + ":0");
    EXPECT_GE(events[i].parent, 0) << "a copy is shown inside the op it serves";
  }
  const std::string there = GetParam() + ":0";
  std::vector<std::string> want;
  if (lacks(GetParam(), NNP_KERNEL_SOFTMAX))
    want = {"copy " + there + " -> host: softmax on cpu (80 bytes)",
            "copy host -> " + there + ": softmax on cpu (80 bytes)"};
  if (lacks(GetParam(), NNP_KERNEL_BINARY))
    for (const char* way : {" -> host", " -> host", ""})
      want.push_back(*way ? "copy " + there + way + ": binary on cpu (80 bytes)"
                          : "copy host -> " + there + ": binary on cpu (80 bytes)");
  ASSERT_GE(softmax_event, 0);
  EXPECT_EQ(copies, want);
  test::expect_close(c.to(kCpu), a.to(kCpu).softmax(1), 1e-6);
  test::expect_close(s.to(kCpu), a.to(kCpu) + b.to(kCpu), 1e-6);
}

// The digits MLP (tests/integration/specs/digits_mlp.json: dropout's masks
// drawn too) trained 30 steps with SGD on the backend follows the same
// losses and ends with the same weights as on cpu.
TEST_P(HalfBackend, TrainsTheDigitsMlpAsCpuDoes) {
  const Device d = device();
  const std::string spec = R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 64, "out_features": 32}, {"type": "nn.ReLU"},
    {"type": "nn.Dropout", "p": 0.1}, {"type": "nn.Linear", "in_features": 32, "out_features": 10}]})";
  auto train = [&](const Device& device, std::vector<float>& losses) {
    manual_seed(7);
    nn::ModuleHandle net = nn::model_from_spec(spec);
    net.to(device);
    optim::Optimizer opt("SGD", net.parameters(), std::move(nn::Attrs().set("lr", 0.1).set("momentum", 0.9)));
    nn::ModuleHandle loss_fn = nn::create_layer("nn.CrossEntropyLoss");
    manual_seed(8);  // each device draws from its own generator: the data too, so dropout's masks are alike
    const Tensor x = rand({32, 64}, Dtype::f32, device), y = randint(0, 10, {32}, Dtype::i64, device);
    for (int step = 0; step < 30; ++step) {
      opt.zero_grad();
      Tensor loss = loss_fn.call({net(x), y});
      loss.backward();
      opt.step();
      losses.push_back(loss.to(kCpu).item<float>());
    }
    return net;
  };
  std::vector<float> there, here;
  nn::ModuleHandle trained = train(d, there), reference = train(kCpu, here);
  test::expect_close(there, here, 1e-4);
  EXPECT_LT(there.back(), there.front() * 0.5) << "it learned";
  const NamedTensors got = trained.named_parameters(), want = reference.named_parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].first);
    test::expect_close(got[i].second.to(kCpu), want[i].second, 1e-4);
  }
}

// W3's CNN: its output and every gradient on the backend are cpu's.
TEST_P(HalfBackend, RunsTheW3CnnAsCpuDoes) {
  const Device d = device();
  auto run = [&](const Device& device) {
    manual_seed(3);
    nn::ModuleHandle net = bench::w3_model();
    net.to(device);
    manual_seed(4);
    const Tensor x = randn({4, 1, 28, 28}).to(device), y = randint(0, 10, {4}).to(device);
    Tensor out = net(x);
    nn::create_layer("nn.CrossEntropyLoss").call({out, y}).backward();
    std::vector<Tensor> results{out.to(kCpu)};
    for (const Tensor& p : net.parameters()) results.push_back(p.grad().to(kCpu));
    return results;
  };
  const std::vector<Tensor> there = run(d), here = run(kCpu);
  ASSERT_EQ(there.size(), here.size());
  for (size_t i = 0; i < there.size(); ++i) {
    SCOPED_TRACE(i);
    test::expect_close(there[i], here[i], 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(KernelFallback, HalfBackend,
                         ::testing::Values("halfway", "otherhalf", "claimant", "wholegraph"));

}  // namespace kernel_fallback_test
