// Tabular data from strangers: CSV rows of features followed by an integer
// class label, plain or gzip-compressed, read in one linear pass. Fields are
// separated by commas (spaces and tabs around them are ignored; no other
// separator is read); a first row of text only is a header, or the caller
// says the first row is one. NaN, infinities, features outside the float
// range and labels that are not integers from 0 to 2^31-1 are refused with
// NNP_CORRUPT_DATA naming the file, line and column; lines are at most 16 MB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nnp::core::io {

struct CsvTable {
  int64_t rows = 0;
  int64_t features = 0;
  std::vector<float> x;    // rows x features
  std::vector<int64_t> y;  // rows
  int64_t classes = 0;     // largest label + 1
  int64_t largest_label_line = 0;
  bool header = false;  // the first row was a header and was skipped
};

// header: the first row is a header whatever it holds.
CsvTable read_csv(const std::string& path, bool header);

}  // namespace nnp::core::io
