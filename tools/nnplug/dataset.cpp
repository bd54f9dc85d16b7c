#include "dataset.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace nnplug {

Dataset load_csv(const std::string& path, bool header) {
  nnp::data::CsvData csv = nnp::data::read_csv(path, nnp::data::CsvOptions().header(header));
  Dataset data;
  data.x = csv.features;
  data.y = csv.labels;
  data.rows = csv.info.rows;
  data.features = csv.info.features;
  data.classes = csv.info.classes;
  data.largest_label_line = csv.info.largest_label_line;
  data.header = csv.info.header_skipped != 0;
  return data;
}

void check_labels_fit(const Dataset& data, const std::string& path, int64_t outputs) {
  if (data.classes > outputs)
    throw nnp::Error(NNP_INVALID_ARGUMENT, "data " + path + ":" + std::to_string(data.largest_label_line) + ": label " +
                                               std::to_string(data.classes - 1) + " is outside the model's " +
                                               std::to_string(outputs) + " classes (0 to " +
                                               std::to_string(outputs - 1) + ")");
}

Split hold_out_fifth(int64_t rows, uint64_t seed) {
  if (rows < 5)
    throw nnp::Error(NNP_INVALID_ARGUMENT, "the data has " + std::to_string(rows) +
                                               " rows; at least 5 are needed to hold out a fifth for testing");
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  Split split;
  const int64_t test = rows / 5;
  split.test.assign(order.begin(), order.begin() + test);
  split.train.assign(order.begin() + test, order.end());
  return split;
}

}  // namespace nnplug
