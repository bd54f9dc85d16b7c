// The checkpoint `nnplug train` writes and `nnplug eval` / `--resume` read:
// the model's and the optimizer's state, and in the metadata everything else
// a run needs to continue or be evaluated alone (the model spec, the input
// shape, the input scale, the seed and a fingerprint of the data split, the
// RNG state, the history of every epoch). A checkpoint may come from a
// stranger: every metadata value is validated, naming its key.
#pragma once

#include <cstdint>
#include <nnp/nnp.hpp>
#include <string>
#include <vector>

#include "curve_svg.hpp"
#include "dataset.hpp"

namespace nnplug {

struct TrainCheckpoint {
  nnp::StateDict model, optimizer;
  std::string model_spec;   // JSON
  std::string input_shape;  // "1,8,8"
  std::string optimizer_name;
  int64_t epoch = 0;
  float scale = 1;
  uint64_t seed = 0, rng_seed = 0, rng_offset = 0;
  int64_t data_rows = 0;
  std::string split;  // fingerprint of the held-out rows
  std::vector<EpochRecord> history;
};

void save_train_checkpoint(const std::string& path, const TrainCheckpoint& c);

// Throws nnp::Error (NNP_CORRUPT_DATA) naming the key of a missing or
// malformed metadata value.
TrainCheckpoint load_train_checkpoint(const std::string& path);

// A short fingerprint of the held-out rows: which they are and what they hold.
std::string split_fingerprint(const Dataset& data, const std::vector<int64_t>& test_rows);

}  // namespace nnplug
