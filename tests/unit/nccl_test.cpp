// The nccl communication backend on one rank (one GPU is what the lent
// machines have): every collective for every dtype, ordered after the
// device's queued work, and its failure paths: a collective that overruns
// its timeout aborts the communicator, the group refuses what follows with
// the reason, and the process goes on working with a new group.
//
// NcclFailure.* leave an aborted communicator behind; scripts/gpu_checks.sh
// runs them in a process of their own, after the other GPU tests.
#include <chrono>
#include <filesystem>
#include <nnp/distributed.hpp>
#include <string>

#include "collective_values.hpp"
#include "test_support.hpp"

using namespace nnp;
namespace dist = nnp::distributed;
using nnp::test::contribution;
using nnp::test::expect_error;
using nnp::test::floating;
using nnp::test::kAllDtypes;
using nnp::test::tensor_of;
using nnp::test::values;
using std::chrono::milliseconds;

namespace {

// The nccl plugin's registration, or one with no name when it is not built.
nnp_comm_info nccl_info() {
  for (int32_t i = 0; i < api().comm_count(); ++i) {
    nnp_comm_info info{};
    info.struct_size = sizeof info;
    if (api().comm_info(i, &info) == NNP_OK && std::string(info.name) == "nccl") return info;
  }
  return nnp_comm_info{};
}

constexpr const char* kNotBuilt = "the nccl plugin is not built (no CUDA toolkit with nccl.h)";

// Groups of one rank on cuda:0, each meeting in a fresh folder; skips where
// the plugin cannot form groups (no GPU, driver or libnccl), with its reason.
class Nccl : public nnp::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const nnp_comm_info info = nccl_info();
    if (info.name == nullptr) GTEST_SKIP() << kNotBuilt;
    if (info.unavailable_reason != nullptr) GTEST_SKIP() << "nccl cannot form groups here: " << info.unavailable_reason;
  }

  dist::ProcessGroup group(milliseconds timeout = milliseconds(60000)) {
    dist::ProcessGroupOptions o;
    o.rank = 0;
    o.world_size = 1;
    o.init_method = "file://" + (dir_ / ("store" + std::to_string(run_++))).string();
    o.timeout = timeout;
    o.device = "cuda:0";
    return dist::ProcessGroup("nccl", o);
  }

  // Queues about a fifth of a second of matrix products on cuda:0 (nothing
  // waits for them here) and gives the last product.
  static Tensor queue_long_work() {
    const Device cuda("cuda:0");
    Tensor a = randn({8192, 8192}, Dtype::f32, cuda) * (1.0 / 8192);
    Tensor b = a;
    for (int i = 0; i < 10; ++i) b = a.matmul(b);
    return b;
  }

  static Device cuda() { return Device("cuda:0"); }

 private:
  int run_ = 0;
};

}  // namespace

// The plugin loads on any machine: without a usable GPU it registers, says
// why, and refuses to form a group with that reason; with one, a group of
// one rank reduces a CUDA tensor.
TEST(NcclBackend, LoadsWithoutAGpuAndSaysWhyOrReducesOnOne) {
  const nnp_comm_info nccl = nccl_info();
  if (nccl.name == nullptr) GTEST_SKIP() << kNotBuilt;
  EXPECT_EQ(std::string(nccl.backends), "cuda");
  dist::ProcessGroupOptions o;
  o.rank = 0;
  o.world_size = 1;
  o.init_method =
      "file://" + (std::filesystem::temp_directory_path() / ("nnp_nccl_" + std::to_string(::getpid()))).string();
  if (nccl.unavailable_reason != nullptr) {
    const std::string reason = nccl.unavailable_reason;
    EXPECT_TRUE(reason.rfind("no CUDA device: ", 0) == 0 || reason.rfind("cannot open ", 0) == 0) << reason;
    expect_error([&] { dist::ProcessGroup("nccl", o); }, NNP_DEVICE_ERROR,
                 {"communication backend 'nccl' cannot form groups here: " + reason});
    return;
  }
  o.device = "cuda:0";
  dist::ProcessGroup g("nccl", o);
  Tensor t = full({1001}, 3.0, Dtype::f32, Device("cuda:0"));
  g.all_reduce(t, dist::ReduceOp::AVG);
  EXPECT_EQ(t.to(Device::cpu()).sum().item<float>(), 3003.0f);
  std::filesystem::remove_all(o.init_method.substr(7));
}

// One rank's collectives are copies: all_gather and reduce_scatter fill
// outputs that start as zeros, and every result must equal the input in
// every dtype NCCL is given (bool as bytes, reduced as logical or / and).
TEST_F(Nccl, EveryCollectiveForEveryDtypeOnOneRank) {
  dist::ProcessGroup g = group();
  const int64_t n = 1001;
  for (Dtype d : kAllDtypes) {
    const std::vector<double> mine = contribution(0, n, d);
    for (dist::ReduceOp op : {dist::ReduceOp::SUM, dist::ReduceOp::MAX, dist::ReduceOp::MIN, dist::ReduceOp::AVG}) {
      if (op == dist::ReduceOp::AVG && !floating(d)) continue;
      Tensor t = tensor_of(mine, d, cuda());
      g.all_reduce(t, op);
      EXPECT_EQ(values(t), mine) << dtype_name(d) << " all_reduce op " << static_cast<int>(op);
    }
    Tensor b = tensor_of(mine, d, cuda());
    g.broadcast(b, 0);
    EXPECT_EQ(values(b), mine) << dtype_name(d) << " broadcast";

    Tensor gathered = zeros({n}, d, cuda());
    g.all_gather(gathered, tensor_of(mine, d, cuda()));
    EXPECT_EQ(values(gathered), mine) << dtype_name(d) << " all_gather";

    Tensor share = zeros({n}, d, cuda());
    g.reduce_scatter(share, tensor_of(mine, d, cuda()), dist::ReduceOp::SUM);
    EXPECT_EQ(values(share), mine) << dtype_name(d) << " reduce_scatter";
  }
  g.barrier();
  // AVG of an integer dtype would round: refused before NCCL sees it.
  Tensor ints = zeros({4}, Dtype::i32, cuda());
  expect_error([&] { g.all_reduce(ints, dist::ReduceOp::AVG); }, NNP_DTYPE_MISMATCH, {"AVG of i32"});
}

// A collective runs on the group's stream but after what the device's stream
// had queued: all_gather of a product still being computed gathers the
// product, and an asynchronous Work is pending until then.
TEST_F(Nccl, CollectivesWaitForTheDevicesQueuedWork) {
  dist::ProcessGroup g = group();
  Tensor product = queue_long_work();
  Tensor gathered = zeros(product.shape(), Dtype::f32, cuda());
  dist::Work work = g.all_gather(gathered, product, true);
  EXPECT_FALSE(work.is_completed()) << "finished before the products it gathers";
  work.wait();
  EXPECT_TRUE(work.is_completed());
  EXPECT_EQ(gathered.sub(product).abs().amax().item<float>(), 0.0f);
  EXPECT_GT(product.abs().sum().item<float>(), 0.0f);
}

// Leaves an aborted communicator: run in a process of its own (gpu_checks.sh).
class NcclFailure : public Nccl {};

// A collective that does not finish within its timeout (here: queued behind
// a fifth of a second of products, waited for 1 ms) fails with NNP_TIMEOUT,
// and the communicator is aborted: the group refuses every later collective
// with that reason instead of hanging. What was queued on the device still
// completes, and a new group works.
TEST_F(NcclFailure, TimeoutAbortsTheCommunicatorAndTheProcessGoesOn) {
  dist::ProcessGroup g = group();
  Tensor product = queue_long_work();
  Tensor t = full({1001}, 2.0, Dtype::f32, cuda());
  dist::Work work = g.all_reduce(t, dist::ReduceOp::SUM, true);
  expect_error([&] { work.wait(milliseconds(1)); }, NNP_TIMEOUT,
               {"process group 'nccl' (rank 0 of 1): all_reduce failed", "did not finish within 1 ms",
                "the group is aborted"});
  expect_error([&] { work.wait(); }, NNP_TIMEOUT, {"did not finish within 1 ms"});  // the verdict stays
  Tensor later = full({8}, 1.0, Dtype::f32, cuda());
  expect_error([&] { g.all_reduce(later); }, NNP_COMM_ERROR, {"did not finish within 1 ms", "the group is aborted"});
  expect_error([&] { g.barrier(); }, NNP_COMM_ERROR, {"the group is aborted"});
  g = dist::ProcessGroup();  // releasing an aborted group is clean

  EXPECT_GT(product.abs().sum().item<float>(), 0.0f);  // the device's own work was not lost
  dist::ProcessGroup fresh = group();
  Tensor u = full({1001}, 5.0, Dtype::f32, cuda());
  fresh.all_reduce(u, dist::ReduceOp::MAX);
  EXPECT_EQ(u.to(Device::cpu()).sum().item<float>(), 5005.0f);
}
