// Tabular data for training: CSV rows of features followed by an integer
// label, plain or gzip-compressed. Fields are separated by commas (spaces and
// tabs around them are ignored; no other separator is read); a first row of
// text only is a header, or --header says the first row is one. NaN,
// infinities, features outside the float range and labels that are not
// integers from 0 to 2^31-1 are refused with the line and column.
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
