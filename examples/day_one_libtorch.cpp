// The day-one program written with libtorch, to compare with day_one.cpp:
// the same data, model, batches, optimizer and output.
// Usage: day_one_libtorch DIGITS.csv
#include <torch/torch.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

struct ClassifierImpl : torch::nn::Module {
  torch::nn::Linear fc{nullptr};
  ClassifierImpl(int64_t inputs, int64_t classes) {
    fc = register_module("fc", torch::nn::Linear(inputs, classes));
    torch::nn::init::zeros_(fc->weight);
    torch::nn::init::zeros_(fc->bias);
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc(x); }
};
TORCH_MODULE(Classifier);

// libtorch's TensorDataset holds one tensor: rows of (features, label) need a dataset.
struct Rows : torch::data::datasets::Dataset<Rows> {
  torch::Tensor x, y;
  Rows(torch::Tensor x, torch::Tensor y) : x(std::move(x)), y(std::move(y)) {}
  torch::data::Example<> get(size_t i) override { return {x[static_cast<int64_t>(i)], y[static_cast<int64_t>(i)]}; }
  torch::optional<size_t> size() const override { return static_cast<size_t>(x.size(0)); }
};

template <typename Loader>
double accuracy(Classifier& model, Loader& loader) {
  torch::NoGradGuard no_grad;
  int64_t correct = 0, total = 0;
  for (auto& batch : loader) {
    correct += model->forward(batch.data).argmax(1).eq(batch.target).sum().item().toLong();
    total += batch.data.size(0);
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(total);
}

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: %s DIGITS.csv\n", argv[0]), 2;
  std::ifstream file(argv[1]);
  std::vector<float> features;
  std::vector<int64_t> labels;
  for (std::string line, field; std::getline(file, line);) {
    std::vector<float> values;
    for (std::stringstream row(line); std::getline(row, field, ',');) values.push_back(std::stof(field));
    labels.push_back(static_cast<int64_t>(values.back()));
    features.insert(features.end(), values.begin(), values.end() - 1);
  }
  const int64_t rows = static_cast<int64_t>(labels.size()), columns = static_cast<int64_t>(features.size()) / rows;
  torch::Tensor x = torch::from_blob(features.data(), {rows, columns}).clone() / 16.0;
  torch::Tensor y = torch::from_blob(labels.data(), {rows}, torch::kInt64).clone();
  const int64_t train_rows = rows * 4 / 5;
  auto stack = torch::data::transforms::Stack<>();
  auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Rows(x.slice(0, 0, train_rows), y.slice(0, 0, train_rows)).map(stack), 32);
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      Rows(x.slice(0, train_rows, rows), y.slice(0, train_rows, rows)).map(stack), 256);

  Classifier model(columns, 10);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
  for (int epoch = 1; epoch <= 5; ++epoch) {
    for (auto& batch : *train_loader) {
      torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(batch.data), batch.target);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
    std::printf("epoch %d: test accuracy %.2f%%\n", epoch, accuracy(model, *test_loader));
  }

  torch::save(model, "day_one.pt");
  Classifier restored(columns, 10);
  torch::load(restored, "day_one.pt");
  std::printf("restored: test accuracy %.2f%%\n", accuracy(restored, *test_loader));
  std::cout << "scores of the first test row:\n" << restored->forward(x[train_rows]) << "\n";
}
