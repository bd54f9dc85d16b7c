// The day-one program: CSV -> model -> minibatches -> Adam -> evaluate ->
// save/load -> print. Its libtorch twin is day_one_libtorch.cpp; both start
// from zero weights and take the batches in order, so they print the same
// accuracy. Usage: day_one DIGITS.csv
#include <cstdio>
#include <iostream>
#include <nnp/nnp.hpp>

namespace nn = nnp::nn;
namespace F = nnp::nn::functional;

struct Classifier : nn::Module {
  nn::Linear fc{nullptr};
  Classifier(int64_t inputs, int64_t classes) : Module("Classifier") {
    fc = register_module("fc", nn::Linear(inputs, classes));
    nn::init::zeros_(fc->weight);
    nn::init::zeros_(fc->bias);
  }
  nnp::Tensor forward(const nnp::Tensor& x) override { return fc(x); }
};

double accuracy(Classifier& model, nnp::data::DataLoader& loader) {
  nnp::NoGradGuard no_grad;
  int64_t correct = 0, total = 0;
  for (auto& batch : loader) {
    correct += model.forward(batch.data).argmax(1).eq(batch.target).sum().item<int64_t>();
    total += batch.data.size(0);
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(total);
}

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: %s DIGITS.csv\n", argv[0]), 2;
  auto csv = nnp::data::read_csv(argv[1]);
  nnp::Tensor x = csv.features / 16.0, y = csv.labels;  // pixels 0..16 to 0..1
  const int64_t rows = x.size(0), train_rows = rows * 4 / 5;
  auto train = std::make_shared<nnp::data::TensorDataset>(x.slice(0, 0, train_rows), y.slice(0, 0, train_rows));
  auto test = std::make_shared<nnp::data::TensorDataset>(x.slice(0, train_rows, rows), y.slice(0, train_rows, rows));
  nnp::data::DataLoader train_loader(train, 32), test_loader(test, 256);

  auto model = nn::make<Classifier>(x.size(1), 10);
  nnp::optim::Adam optimizer(model->parameters(), nnp::optim::AdamOptions(1e-2));
  for (int epoch = 1; epoch <= 5; ++epoch) {
    for (auto& batch : train_loader) {
      nnp::Tensor loss = F::cross_entropy(model->forward(batch.data), batch.target);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
    }
    std::printf("epoch %d: test accuracy %.2f%%\n", epoch, accuracy(*model, test_loader));
  }

  model->save("day_one.safetensors");
  auto restored = nn::make<Classifier>(x.size(1), 10);
  restored->load("day_one.safetensors");
  std::printf("restored: test accuracy %.2f%%\n", accuracy(*restored, test_loader));
  std::cout << "scores of the first test row:\n" << restored->forward(test->get(0).data) << "\n";
}
