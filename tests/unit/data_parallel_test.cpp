// DistributedDataParallel on gloo, ranks as threads: after backward every
// rank holds the gradient one process computes on the concatenated batch;
// buckets, no_sync, unused parameters and mismatched replicas.
#include <cmath>
#include <nnp/data_parallel.hpp>

#include "rank_threads.hpp"

using namespace nnp;
namespace dist = nnp::distributed;
using nnp::nn::parallel::DistributedDataParallel;
using nnp::nn::parallel::DistributedDataParallelOptions;
using nnp::test::expect_error;
using DataParallel = nnp::test::Distributed;

namespace {

const char* const kMlp = R"({"type": "nn.Sequential", "children": [
    {"type": "nn.Linear", "in_features": 6, "out_features": 5}, {"type": "nn.Tanh"},
    {"type": "nn.Linear", "in_features": 5, "out_features": 3}]})";

void expect_close(const Tensor& got, const std::vector<float>& want, const std::string& what) {
  const std::vector<float> values = got.to_vector<float>();
  ASSERT_EQ(values.size(), want.size()) << what;
  for (size_t j = 0; j < values.size(); ++j)
    ASSERT_NEAR(values[j], want[j], 1e-6 * (1 + std::fabs(want[j]))) << what << " [" << j << "]";
}

// Each rank's shard of rows: rank r of `world` takes rows [r*n, (r+1)*n).
Tensor shard(const Tensor& t, int rank, int64_t n) { return t.slice(0, rank * n, (rank + 1) * n); }

// Two heads; forward uses the second only when asked, as a branch a rank
// may not take.
struct TwoHeads : nn::Module {
  explicit TwoHeads(bool use_second) : Module("TwoHeads"), use_second(use_second) {
    a = register_module("a", nn::model_from_spec(R"({"type": "nn.Linear", "in_features": 4, "out_features": 2})"));
    b = register_module("b", nn::model_from_spec(R"({"type": "nn.Linear", "in_features": 4, "out_features": 2})"));
  }
  Tensor forward(const Tensor& x) override { return use_second ? a(x) + b(x) : a(x); }
  nn::ModuleHandle a, b;
  bool use_second;
};

}  // namespace

TEST_F(DataParallel, GradientsEqualTheWholeBatchGradientOnTwoAndFourRanks) {
  for (int world : {2, 4})
    for (double cap : {25.0, 1e-5}) {  // one bucket; one bucket per parameter
      manual_seed(11);
      const Tensor x = randn({4 * world, 6}), y = randn({4 * world, 3});
      nn::ModuleHandle whole = nn::model_from_spec(kMlp);
      const auto rank0 = whole.state_dict();
      (whole(x) - y).pow(2).mean().backward();
      std::vector<std::vector<float>> want, weights;
      for (const Tensor& p : whole.parameters()) want.push_back(p.grad().to_vector<float>());

      run_ranks(world, [&](dist::ProcessGroup& g, int rank) {
        nn::ModuleHandle replica = nn::model_from_spec(kMlp);
        if (rank == 0) replica.load_state_dict(rank0);  // the others start elsewhere: construction copies rank 0's
        auto ddp = nn::make<DistributedDataParallel>(replica, DistributedDataParallelOptions().bucket_cap_mb(cap), g);
        const std::vector<Tensor> params = replica.parameters();
        for (size_t i = 0; i < params.size(); ++i)
          ASSERT_EQ(params[i].to_vector<float>(), rank0[i].second.to_vector<float>()) << "parameter " << i;
        for (int step = 0; step < 2; ++step) {  // the second backward reuses the buckets
          for (const Tensor& p : params) Tensor(p).set_grad(Tensor());
          (ddp->call({shard(x, rank, 4)}) - shard(y, rank, 4)).pow(2).mean().backward();
          for (size_t i = 0; i < params.size(); ++i)
            expect_close(
                params[i].grad(), want[i],
                "world " + std::to_string(world) + " cap " + std::to_string(cap) + " parameter " + std::to_string(i));
        }
      });
    }
}

TEST_F(DataParallel, BucketsHoldParametersInReverseRegistrationOrder) {
  run_ranks(2, [&](dist::ProcessGroup& g, int) {
    nn::ModuleHandle model = nn::model_from_spec(kMlp);  // 0.weight, 0.bias, 2.weight, 2.bias
    auto one = nn::make<DistributedDataParallel>(model, DistributedDataParallelOptions(), g);
    EXPECT_EQ(one->bucket_indices(), (std::vector<std::vector<size_t>>{{3, 2, 1, 0}}));
    // 2.bias (12 bytes) + 2.weight (60) reach 64 bytes; then 0.bias + 0.weight.
    auto split = nn::make<DistributedDataParallel>(
        model, DistributedDataParallelOptions().bucket_cap_mb(64.0 / (1024 * 1024)), g);
    EXPECT_EQ(split->bucket_indices(), (std::vector<std::vector<size_t>>{{3, 2}, {1, 0}}));
    EXPECT_EQ(one->state_dict()[0].first, "module.0.weight");
  });
}

TEST_F(DataParallel, NoSyncAccumulatesLocallyAndTheNextBackwardReducesTheSum) {
  manual_seed(5);
  const int world = 2;
  const Tensor x = randn({8 * world, 6}), y = randn({8 * world, 3});
  nn::ModuleHandle whole = nn::model_from_spec(kMlp);
  const auto initial = whole.state_dict();
  // Each rank's two micro-batches, summed: the mean over the ranks.
  for (int rank = 0; rank < world; ++rank)
    for (int micro = 0; micro < 2; ++micro)
      ((whole(shard(x, 2 * rank + micro, 4)) - shard(y, 2 * rank + micro, 4)).pow(2).mean() / world).backward();
  std::vector<std::vector<float>> want;
  for (const Tensor& p : whole.parameters()) want.push_back(p.grad().to_vector<float>());

  run_ranks(world, [&](dist::ProcessGroup& g, int rank) {
    nn::ModuleHandle replica = nn::model_from_spec(kMlp);
    replica.load_state_dict(initial);
    auto ddp = nn::make<DistributedDataParallel>(replica, DistributedDataParallelOptions(), g);
    const Tensor local_before = [&] {
      auto no_sync = ddp->no_sync();
      (ddp->call({shard(x, 2 * rank, 4)}) - shard(y, 2 * rank, 4)).pow(2).mean().backward();
      return replica.parameters()[0].grad().clone();
    }();
    // Not reduced: the ranks' local gradients differ.
    Tensor gathered = zeros({2, local_before.numel()});
    g.all_gather(gathered, local_before.reshape({-1}));
    EXPECT_GT((gathered[0] - gathered[1]).abs().amax().item<float>(), 1e-4);
    (ddp->call({shard(x, 2 * rank + 1, 4)}) - shard(y, 2 * rank + 1, 4)).pow(2).mean().backward();
    const std::vector<Tensor> params = replica.parameters();
    for (size_t i = 0; i < params.size(); ++i)
      expect_close(params[i].grad(), want[i], "parameter " + std::to_string(i));
  });
}

TEST_F(DataParallel, UnusedParametersFailTheBackwardUnlessFindUnusedParametersIsSet) {
  run_ranks(2, [&](dist::ProcessGroup& g, int) {
    auto heads = nn::make<TwoHeads>(false);
    auto ddp = nn::make<DistributedDataParallel>(nn::ModuleHandle(heads), DistributedDataParallelOptions(), g);
    expect_error(
        [&] {
          ddp->call({ones({3, 4})}).sum().backward();
        },
        NNP_INVALID_ARGUMENT,
        {"2 parameter(s) got no gradient", "'b.weight', 'b.bias'", "find_unused_parameters(true)"});
  });
  // With the option: rank 0 takes the branch, rank 1 does not. b's gradient
  // is rank 0's halved; a parameter no rank used keeps no gradient.
  run_ranks(2, [&](dist::ProcessGroup& g, int rank) {
    manual_seed(3);
    auto heads = nn::make<TwoHeads>(rank == 0);
    auto ddp = nn::make<DistributedDataParallel>(nn::ModuleHandle(heads),
                                                 DistributedDataParallelOptions().find_unused_parameters(true), g);
    const Tensor x = full({3, 4}, rank + 1.0);
    ddp->call({x}).sum().backward();
    // d(sum)/d(b.bias) = 3 per output on rank 0, 0 on rank 1: averaged 1.5.
    expect_close(heads->b.named_parameters()[1].second.grad(), {1.5f, 1.5f}, "b.bias");
    // a.weight: rows of x summed (3 * (rank + 1)) per output, averaged: (3 + 6) / 2.
    expect_close(heads->a.named_parameters()[0].second.grad(), std::vector<float>(8, 4.5f), "a.weight");
    heads->use_second = false;
    for (const Tensor& p : heads->parameters()) Tensor(p).set_grad(Tensor());
    ddp->call({x}).sum().backward();
    EXPECT_FALSE(heads->b.named_parameters()[1].second.grad().defined()) << "no rank used b this time";
  });
}

TEST_F(DataParallel, ReplicasThatDifferAreRefusedOnEveryRankAtConstruction) {
  run_ranks(2, [&](dist::ProcessGroup& g, int rank) {
    nn::ModuleHandle model = nn::model_from_spec(rank == 0 ? kMlp : R"({"type": "nn.Sequential", "children": [
        {"type": "nn.Linear", "in_features": 6, "out_features": 4}, {"type": "nn.Tanh"},
        {"type": "nn.Linear", "in_features": 4, "out_features": 3}]})");
    expect_error([&] { nn::make<DistributedDataParallel>(model, DistributedDataParallelOptions(), g); },
                 NNP_SHAPE_MISMATCH,
                 {"rank 1's model differs from rank 0's", "4 parameters of 43 elements", "4 of 53",
                  "every rank must build the same model"});
  });
}
