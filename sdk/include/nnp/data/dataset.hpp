// nnp/data/dataset.hpp - PyTorch's torch.utils.data datasets in C++:
// Dataset (get an example by index), TensorDataset, Subset and
// random_split. A DataLoader (nnp/data/dataloader.hpp) turns one into
// batches.
#pragma once

#include <cmath>
#include <memory>
#include <nnp/detail/format.hpp>
#include <nnp/generator.hpp>
#include <nnp/tensor.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nnp::data {

// One sample, or a batch of them: the input and what it should give (the
// target may be undefined).
struct Example {
  Tensor data;
  Tensor target;
};

// Examples by index, 0 to size() - 1. get_batch collates the examples at
// `indices` into one batch; by default it stacks get() of each along a new
// first dimension, and a dataset that can gather a batch at once (as
// TensorDataset does) overrides it.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual Example get(int64_t index) const = 0;
  virtual int64_t size() const = 0;
  virtual Example get_batch(const std::vector<int64_t>& indices) const {
    std::vector<Tensor> data, targets;
    for (int64_t i : indices) {
      Example e = get(i);
      data.push_back(e.data);
      if (e.target.defined()) targets.push_back(e.target);
    }
    if (!targets.empty() && targets.size() != data.size())
      throw Error(NNP_INVALID_ARGUMENT, "get_batch: some examples have a target and some do not");
    return {stack(data), targets.empty() ? Tensor() : stack(targets)};
  }

 protected:
  void check_index(int64_t index) const {
    if (index < 0 || index >= size())
      throw Error(NNP_INVALID_ARGUMENT, "dataset index " + std::to_string(index) +
                                            " is out of range for a dataset of " + std::to_string(size()) +
                                            " examples");
  }
};

// Rows of tensors that share their first dimension: example i is
// (data[i], target[i]).
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Tensor data, Tensor target = Tensor()) : data_(std::move(data)), target_(std::move(target)) {
    if (!data_.defined() || data_.ndim() == 0)
      throw Error(NNP_INVALID_ARGUMENT, "TensorDataset: the data needs a first dimension to index");
    if (target_.defined() && (target_.ndim() == 0 || target_.size(0) != data_.size(0)))
      throw Error(NNP_SHAPE_MISMATCH,
                  "TensorDataset: size mismatch between tensors: " + std::to_string(data_.size(0)) + " data rows but " +
                      (target_.ndim() ? std::to_string(target_.size(0)) : std::string("no")) + " target rows");
  }
  Example get(int64_t index) const override {
    check_index(index);
    return {row(data_, index), target_.defined() ? row(target_, index) : Tensor()};
  }
  int64_t size() const override { return data_.size(0); }
  // One gather per tensor, not one copy per example.
  Example get_batch(const std::vector<int64_t>& indices) const override {
    for (int64_t i : indices) check_index(i);
    Tensor index = from_vector(indices, data_.device());
    return {data_.index_select(0, index),
            target_.defined() ? target_.index_select(0, index.to(target_.device())) : Tensor()};
  }
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  static Tensor row(const Tensor& t, int64_t i) {
    Shape shape = t.shape();
    shape.erase(shape.begin());
    return t.slice(0, i, i + 1).reshape(shape);
  }
  Tensor data_, target_;
};

// The examples of `dataset` at `indices`, in that order.
class Subset : public Dataset {
 public:
  Subset(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices)
      : dataset_(std::move(dataset)), indices_(std::move(indices)) {
    if (!dataset_) throw Error(NNP_INVALID_ARGUMENT, "Subset: the dataset is null");
    for (int64_t i : indices_)
      if (i < 0 || i >= dataset_->size())
        throw Error(NNP_INVALID_ARGUMENT, "Subset: index " + std::to_string(i) + " is out of range for a dataset of " +
                                              std::to_string(dataset_->size()) + " examples");
  }
  Example get(int64_t index) const override {
    check_index(index);
    return dataset_->get(indices_[static_cast<size_t>(index)]);
  }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Example get_batch(const std::vector<int64_t>& indices) const override {
    std::vector<int64_t> mapped;
    mapped.reserve(indices.size());
    for (int64_t i : indices) {
      check_index(i);
      mapped.push_back(indices_[static_cast<size_t>(i)]);
    }
    return dataset_->get_batch(mapped);
  }
  const std::vector<int64_t>& indices() const { return indices_; }
  const std::shared_ptr<const Dataset>& dataset() const { return dataset_; }

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<int64_t> indices_;
};

// Splits `dataset` into non-overlapping subsets after one random
// permutation, as PyTorch's random_split: `lengths` are sizes adding up to
// the dataset's size ({800, 200}), or fractions adding up to 1 ({0.8, 0.2}),
// where each subset gets floor(fraction * size) and the remainder goes one
// by one to the first subsets.
inline std::vector<std::shared_ptr<Subset>> random_split(const std::shared_ptr<const Dataset>& dataset,
                                                         const std::vector<double>& lengths, Generator& generator) {
  const int64_t n = dataset->size();
  double sum = 0;
  for (double length : lengths) {
    if (!(length >= 0)) throw Error(NNP_INVALID_ARGUMENT, "random_split: lengths must be non-negative");
    sum += length;
  }
  std::vector<int64_t> sizes;
  if (std::abs(sum - 1) < 1e-9 && sum <= static_cast<double>(n)) {  // fractions
    int64_t assigned = 0;
    for (double f : lengths) {
      sizes.push_back(static_cast<int64_t>(std::floor(f * static_cast<double>(n))));
      assigned += sizes.back();
    }
    for (size_t i = 0; assigned < n && !sizes.empty(); i = (i + 1) % sizes.size(), ++assigned) ++sizes[i];
  } else {
    if (sum != static_cast<double>(n))
      throw Error(NNP_INVALID_ARGUMENT, "random_split: sum of input lengths (" + nn::format_float(sum) +
                                            ") does not equal the length of the input dataset (" + std::to_string(n) +
                                            ")");
    for (double length : lengths) {  // each at most n now: the conversion is exact
      if (length != std::floor(length))
        throw Error(NNP_INVALID_ARGUMENT, "random_split: lengths are whole sizes, or fractions that add up to 1");
      sizes.push_back(static_cast<int64_t>(length));
    }
  }
  std::vector<int64_t> order = randperm_vector(n, &generator);
  std::vector<std::shared_ptr<Subset>> out;
  size_t at = 0;
  for (int64_t size : sizes) {
    std::vector<int64_t> part(order.begin() + static_cast<std::ptrdiff_t>(at),
                              order.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(size)));
    out.push_back(std::make_shared<Subset>(dataset, std::move(part)));
    at += static_cast<size_t>(size);
  }
  return out;
}

}  // namespace nnp::data
