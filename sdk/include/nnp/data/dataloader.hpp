// nnp/data/dataloader.hpp - PyTorch's DataLoader in C++: batches of a
// Dataset, in order, shuffled (from a Generator) or as a Sampler says, the last partial batch
// kept or dropped, collated by the dataset or by a function of one's own,
// optionally assembled ahead by background workers.
//
//   nnp::data::DataLoader loader(dataset, nnp::data::DataLoaderOptions(64).shuffle(true));
//   for (nnp::data::Example& batch : loader) { ... batch.data, batch.target ... }
//
// Each begin() is a new epoch (a new order when shuffling).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <nnp/data/dataset.hpp>
#include <nnp/data/sampler.hpp>
#include <nnp/generator.hpp>
#include <nnp/options.hpp>
#include <optional>
#include <thread>
#include <vector>

namespace nnp::data {

using Collate = std::function<Example(const std::vector<Example>&)>;

struct DataLoaderOptions {
  DataLoaderOptions(int64_t batch_size = 1) : batch_size_(batch_size) {}  // NOLINT: implicit, as libtorch's
  NNP_ARG(int64_t, batch_size);
  NNP_ARG(bool, shuffle) = false;
  // Drop the last batch when it is smaller than batch_size.
  NNP_ARG(bool, drop_last) = false;
  // Threads assembling batches ahead of the loop (0: on the loop's thread).
  NNP_ARG(int64_t, workers) = 0;
  // Where shuffling draws from; null: the host's default generator (nnp::manual_seed).
  NNP_ARG(Generator*, generator) = nullptr;
  // Makes a batch of examples; empty: the dataset's get_batch.
  NNP_ARG(Collate, collate);
  // Which examples, in which order (a DistributedSampler's share); empty:
  // all of them, shuffled or not. Not with shuffle, as in PyTorch.
  NNP_ARG(std::shared_ptr<const Sampler>, sampler);
};

class DataLoader {
 public:
  explicit DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions options = {})
      : dataset_(std::move(dataset)), options_(std::move(options)) {
    if (!dataset_) throw Error(NNP_INVALID_ARGUMENT, "DataLoader: the dataset is null");
    if (options_.batch_size() < 1)
      throw Error(NNP_INVALID_ARGUMENT,
                  "DataLoader: batch_size must be a positive integer, got " + std::to_string(options_.batch_size()));
    if (options_.sampler() && options_.shuffle())
      throw Error(NNP_INVALID_ARGUMENT, "DataLoader: sampler option is mutually exclusive with shuffle");
    if (options_.workers() < 0 || options_.workers() > 256)
      throw Error(NNP_INVALID_ARGUMENT,
                  "DataLoader: workers must be from 0 to 256, got " + std::to_string(options_.workers()));
  }
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Batches per epoch.
  int64_t size() const {
    const int64_t n = options_.sampler() ? options_.sampler()->count(dataset_->size()) : dataset_->size();
    const int64_t b = options_.batch_size();
    return options_.drop_last() ? n / b : (n + b - 1) / b;
  }
  const DataLoaderOptions& options() const { return options_; }

  class Iterator;
  Iterator begin();
  Iterator end();

 private:
  // One pass over the data: its order and, with workers, the batches being
  // assembled ahead (at most two per worker past the one the loop holds).
  class Epoch {
   public:
    Epoch(const DataLoader& loader, std::vector<std::vector<int64_t>> batches)
        : loader_(loader), batches_(std::move(batches)), slots_(batches_.size()), errors_(batches_.size()) {
      const int64_t workers = std::min<int64_t>(loader.options_.workers(), static_cast<int64_t>(batches_.size()));
      for (int64_t k = 0; k < workers; ++k) threads_.emplace_back([this, k, workers] { work(k, workers); });
    }
    ~Epoch() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
      }
      changed_.notify_all();
      for (std::thread& t : threads_) t.join();
    }
    size_t count() const { return batches_.size(); }
    // Batch b, which the loop takes in order.
    Example take(size_t b) {
      if (threads_.empty()) return make(b);
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return slots_[b].has_value() || errors_[b]; });
      taken_ = b + 1;
      changed_.notify_all();
      if (errors_[b]) std::rethrow_exception(errors_[b]);
      Example out = std::move(*slots_[b]);
      slots_[b].reset();
      return out;
    }

   private:
    Example make(size_t b) const {
      const Collate& collate = loader_.options_.collate();
      if (!collate) return loader_.dataset_->get_batch(batches_[b]);
      std::vector<Example> examples;
      examples.reserve(batches_[b].size());
      for (int64_t i : batches_[b]) examples.push_back(loader_.dataset_->get(i));
      return collate(examples);
    }
    void work(int64_t k, int64_t workers) {
      const size_t ahead = static_cast<size_t>(2 * workers);
      for (size_t b = static_cast<size_t>(k); b < batches_.size(); b += static_cast<size_t>(workers)) {
        {
          std::unique_lock<std::mutex> lock(mutex_);
          changed_.wait(lock, [&] { return stopping_ || b < taken_ + ahead; });
          if (stopping_) return;
        }
        std::optional<Example> made;
        std::exception_ptr error;
        try {
          made = make(b);
        } catch (...) {
          error = std::current_exception();
        }
        {
          std::lock_guard<std::mutex> lock(mutex_);
          slots_[b] = std::move(made);
          errors_[b] = error;
        }
        changed_.notify_all();
      }
    }

    const DataLoader& loader_;
    std::vector<std::vector<int64_t>> batches_;
    std::vector<std::optional<Example>> slots_;
    std::vector<std::exception_ptr> errors_;
    std::mutex mutex_;
    std::condition_variable changed_;
    size_t taken_ = 0;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
  };

  std::shared_ptr<const Dataset> dataset_;
  DataLoaderOptions options_;
  std::unique_ptr<Epoch> epoch_;
};

// An input iterator over one epoch's batches.
class DataLoader::Iterator {
 public:
  Iterator() = default;
  Example& operator*() { return current_; }
  Example* operator->() { return &current_; }
  Iterator& operator++() {
    ++position_;
    if (position_ < epoch_->count()) current_ = epoch_->take(position_);
    return *this;
  }
  bool operator==(const Iterator& other) const { return position_ == other.position_; }
  bool operator!=(const Iterator& other) const { return !(*this == other); }

 private:
  friend class DataLoader;
  Iterator(Epoch* epoch, size_t position) : epoch_(epoch), position_(position) {
    if (epoch_ && position_ < epoch_->count()) current_ = epoch_->take(position_);
  }
  Epoch* epoch_ = nullptr;
  size_t position_ = 0;
  Example current_;
};

inline DataLoader::Iterator DataLoader::begin() {
  epoch_.reset();  // an unfinished epoch's workers stop first
  const int64_t b = options_.batch_size();
  int64_t n = dataset_->size();
  std::vector<int64_t> order;
  if (options_.sampler()) {
    order = options_.sampler()->indices(n);
    n = static_cast<int64_t>(order.size());
  } else if (options_.shuffle()) {
    order = randperm_vector(n, options_.generator());
  } else {
    order.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  }
  std::vector<std::vector<int64_t>> batches;
  for (int64_t start = 0; start < n; start += b) {
    const int64_t stop = std::min(n, start + b);
    if (stop - start < b && options_.drop_last()) break;
    batches.emplace_back(order.begin() + start, order.begin() + stop);
  }
  epoch_ = std::make_unique<Epoch>(*this, std::move(batches));
  return Iterator(epoch_.get(), 0);
}
inline DataLoader::Iterator DataLoader::end() { return Iterator(nullptr, epoch_ ? epoch_->count() : 0); }

// libtorch's spelling.
inline std::unique_ptr<DataLoader> make_data_loader(std::shared_ptr<const Dataset> dataset,
                                                    DataLoaderOptions options = {}) {
  return std::make_unique<DataLoader>(std::move(dataset), std::move(options));
}

}  // namespace nnp::data
