// nnp/data/sampler.hpp - which examples a DataLoader visits, in which order
// (torch.utils.data.Sampler), and DistributedSampler: each rank of a
// data-parallel job its own share of every epoch.
//
//   auto sampler = std::make_shared<nnp::data::DistributedSampler>(rank, world_size);
//   nnp::data::DataLoader loader(dataset, nnp::data::DataLoaderOptions(32).sampler(sampler));
//   for (int64_t epoch = 0; epoch < epochs; ++epoch) {
//     sampler->set_epoch(epoch);  // a new shuffle each epoch, the same on every rank
//     for (auto& batch : loader) ...
//   }
#pragma once

#include <algorithm>
#include <nnp/generator.hpp>
#include <string>
#include <vector>

namespace nnp::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The dataset positions of one epoch, in the order to visit them.
  virtual std::vector<int64_t> indices(int64_t dataset_size) const = 0;
  // How many indices() gives for a dataset of that size.
  virtual int64_t count(int64_t dataset_size) const = 0;
};

// PyTorch's DistributedSampler: every rank draws the same permutation (from
// seed + epoch), pads it by repeating its start to a multiple of the ranks
// (or, with drop_last, cuts it to one), and takes every num_replicas-th
// index from its rank on: the ranks' shares are disjoint and together cover
// the data set. The permutation is nnplug's randperm, not PyTorch's.
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t rank, int64_t num_replicas, bool shuffle = true, uint64_t seed = 0, bool drop_last = false)
      : rank_(rank), replicas_(num_replicas), shuffle_(shuffle), seed_(seed), drop_last_(drop_last) {
    if (num_replicas < 1)
      throw Error(NNP_INVALID_ARGUMENT,
                  "DistributedSampler: num_replicas must be at least 1, got " + std::to_string(num_replicas));
    if (rank < 0 || rank >= num_replicas)
      throw Error(NNP_INVALID_ARGUMENT, "DistributedSampler: invalid rank " + std::to_string(rank) +
                                            ", rank should be in the interval [0, " + std::to_string(num_replicas - 1) +
                                            "]");
  }

  // Call before each epoch's loop: the shuffle depends on it.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

  int64_t count(int64_t n) const override {
    // PyTorch's: ceil((n - replicas) / replicas) when dropping, else ceil(n / replicas).
    if (drop_last_ && n % replicas_ != 0) return n > replicas_ ? (n - 1) / replicas_ : 0;
    return (n + replicas_ - 1) / replicas_;
  }

  std::vector<int64_t> indices(int64_t n) const override {
    std::vector<int64_t> order;
    if (shuffle_) {
      Generator generator(seed_ + static_cast<uint64_t>(epoch_));
      order = randperm_vector(n, &generator);
    } else {
      order.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    }
    const int64_t total = count(n) * replicas_;
    // Padding repeats the order from its start (as often as needed).
    for (int64_t i = n; i < total && n > 0; ++i) order.push_back(order[static_cast<size_t>((i - n) % n)]);
    order.resize(static_cast<size_t>(std::min<int64_t>(total, static_cast<int64_t>(order.size()))));
    std::vector<int64_t> mine;
    for (int64_t i = rank_; i < total; i += replicas_) mine.push_back(order[static_cast<size_t>(i)]);
    return mine;
  }

 private:
  int64_t rank_, replicas_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t epoch_ = 0;
};

}  // namespace nnp::data
