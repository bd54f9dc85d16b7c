#include "dataset.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <nnp/nnp.hpp>
#include <numeric>
#include <random>

namespace nnplug {

Dataset load_csv(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads plain files too
  if (!file) throw nnp::Error(NNP_IO_ERROR, "data " + path + ": cannot open");
  Dataset data;
  std::string line;
  char buffer[1 << 16];
  int64_t number = 0;
  while (true) {
    line.clear();
    bool got = false;
    while (gzgets(file, buffer, sizeof buffer)) {
      got = true;
      line += buffer;
      if (!line.empty() && line.back() == '\n') break;
    }
    if (!got) break;
    ++number;
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    std::vector<double> values;
    const char* p = line.c_str();
    while (*p) {
      char* end = nullptr;
      double v = std::strtod(p, &end);
      if (end == p) {
        gzclose(file);
        throw nnp::Error(NNP_CORRUPT_DATA, "data " + path + ":" + std::to_string(number) + ": '" + line.substr(0, 40) +
                                               "' is not a row of numbers");
      }
      values.push_back(v);
      p = end;
      if (*p == ',') ++p;
    }
    if (values.size() < 2) {
      gzclose(file);
      throw nnp::Error(NNP_CORRUPT_DATA,
                       "data " + path + ":" + std::to_string(number) + ": needs features and a label");
    }
    int64_t features = static_cast<int64_t>(values.size()) - 1;
    if (data.rows == 0) data.features = features;
    if (features != data.features) {
      gzclose(file);
      throw nnp::Error(NNP_CORRUPT_DATA, "data " + path + ":" + std::to_string(number) + ": " +
                                             std::to_string(features) + " features where earlier rows have " +
                                             std::to_string(data.features));
    }
    double label = values.back();
    if (label < 0 || label != static_cast<double>(static_cast<int64_t>(label))) {
      gzclose(file);
      throw nnp::Error(NNP_CORRUPT_DATA, "data " + path + ":" + std::to_string(number) +
                                             ": the label (last column) must be a non-negative integer");
    }
    for (int64_t i = 0; i < features; ++i) data.x.push_back(static_cast<float>(values[static_cast<size_t>(i)]));
    data.y.push_back(static_cast<int64_t>(label));
    data.classes = std::max(data.classes, static_cast<int64_t>(label) + 1);
    ++data.rows;
  }
  gzclose(file);
  if (data.rows == 0) throw nnp::Error(NNP_CORRUPT_DATA, "data " + path + ": no rows");
  return data;
}

Split hold_out_fifth(int64_t rows, uint64_t seed) {
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
