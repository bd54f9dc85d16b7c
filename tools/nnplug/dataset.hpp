// Tabular data for training: a CSV file read by nnp::data::read_csv (rows of
// features followed by an integer label, plain or gzip; see load_csv in
// nnp.h for what it refuses), and the CLI's rules on top of it: labels the
// model can score, and a fifth held out for testing.
#pragma once

#include <cstdint>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

namespace nnplug {

struct Dataset {
  nnp::Tensor x;  // f32 [rows, features], on the CPU
  nnp::Tensor y;  // i64 [rows], on the CPU
  int64_t rows = 0;
  int64_t features = 0;
  int64_t classes = 0;  // max label + 1
  int64_t largest_label_line = 0;
  bool header = false;  // the first row was a header and was skipped
};

// Throws nnp::Error naming the file and line on malformed input; header:
// the first row is a header whatever it holds.
Dataset load_csv(const std::string& path, bool header = false);

// Refuses labels the model's `outputs` classes cannot hold, naming the line.
void check_labels_fit(const Dataset& data, const std::string& path, int64_t outputs);

// A shuffled split keeping every fifth row (by a seeded permutation) for
// test; refuses fewer than 5 rows (no test rows).
struct Split {
  std::vector<int64_t> train, test;
};
Split hold_out_fifth(int64_t rows, uint64_t seed);

}  // namespace nnplug
