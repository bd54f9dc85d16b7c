// Tabular data for training: CSV rows of features followed by an integer
// label, plain or gzip-compressed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nnplug {

struct Dataset {
  int64_t rows = 0;
  int64_t features = 0;
  std::vector<float> x;    // rows x features
  std::vector<int64_t> y;  // rows
  int64_t classes = 0;     // max label + 1
};

// Throws nnp::Error naming the file and line on malformed input.
Dataset load_csv(const std::string& path);

// A shuffled split keeping every fifth row (by a seeded permutation) for test.
struct Split {
  std::vector<int64_t> train, test;
};
Split hold_out_fifth(int64_t rows, uint64_t seed);

}  // namespace nnplug
