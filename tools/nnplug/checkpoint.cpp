#include "checkpoint.hpp"

#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

namespace nnplug {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& key, const std::string& what) {
  throw nnp::Error(NNP_CORRUPT_DATA,
                   "checkpoint " + path + ": metadata '" + key + "' " + what + " (was it written by nnplug train?)");
}

// The file's metadata, read once.
using Metadata = std::map<std::string, std::string>;

std::string value_of(const Metadata& metadata, const std::string& path, const std::string& key) {
  auto it = metadata.find(key);
  if (it == metadata.end()) bad(path, key, "is missing");
  return it->second;
}

// One read of the header, before any tensor: a file that is not a training
// checkpoint is refused in the time it takes to read its header, whatever
// tensors it lists.
Metadata read_metadata(const std::string& path) { return nnp::safetensors_metadata(path); }

template <typename T>
T integer_of(const Metadata& metadata, const std::string& path, const std::string& key, T low) {
  const std::string text = value_of(metadata, path, key);
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    bad(path, key, "is '" + text.substr(0, 40) + "', not an integer in range");
  if (value < low) bad(path, key, "is " + text + ", below " + std::to_string(low));
  return value;
}

double real_of(const std::string& text, const std::string& path, const std::string& key) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    bad(path, key, "holds '" + text.substr(0, 40) + "', not a finite number");
  return value;
}

}  // namespace

std::string split_fingerprint(const Dataset& data, const std::vector<int64_t>& test_rows) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over the held-out rows' numbers, features and labels
  auto mix = [&](const void* bytes, size_t size) {
    for (size_t i = 0; i < size; ++i) hash = (hash ^ static_cast<const unsigned char*>(bytes)[i]) * 1099511628211ull;
  };
  const float* x = data.x.data_ptr<float>();
  const int64_t* y = data.y.data_ptr<int64_t>();
  for (int64_t row : test_rows) {
    mix(&row, sizeof row);
    mix(x + row * data.features, sizeof(float) * static_cast<size_t>(data.features));
    mix(y + row, sizeof(int64_t));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

void save_train_checkpoint(const std::string& path, const TrainCheckpoint& c) {
  nnp::NamedTensors all;
  for (const auto& [k, t] : c.model) all.emplace_back("model." + k, t);
  for (const auto& [k, t] : c.optimizer) all.emplace_back("optimizer." + k, t);
  std::ostringstream history;
  for (const EpochRecord& e : c.history)
    history << e.epoch << "," << nnp::nn::format_float(e.train_loss) << "," << nnp::nn::format_float(e.train_accuracy)
            << "," << nnp::nn::format_float(e.test_loss) << "," << nnp::nn::format_float(e.test_accuracy) << "\n";
  nnp::save_safetensors(all, path,
                        {{"format", "pt"},
                         {"nnplug", "train checkpoint"},
                         {"epoch", std::to_string(c.epoch)},
                         {"seed", std::to_string(c.seed)},
                         {"input_scale", nnp::nn::format_float(c.scale)},
                         {"input_shape", c.input_shape},
                         {"model_spec", c.model_spec},
                         {"optimizer", c.optimizer_name},
                         {"rng_seed", std::to_string(c.rng_seed)},
                         {"rng_offset", std::to_string(c.rng_offset)},
                         {"data_rows", std::to_string(c.data_rows)},
                         {"split", c.split},
                         {"history", history.str()}});
}

TrainCheckpoint load_train_checkpoint(const std::string& path) {
  TrainCheckpoint c;
  const Metadata metadata = read_metadata(path);
  c.epoch = integer_of<int64_t>(metadata, path, "epoch", 1);
  c.seed = integer_of<uint64_t>(metadata, path, "seed", 0);
  c.rng_seed = integer_of<uint64_t>(metadata, path, "rng_seed", 0);
  c.rng_offset = integer_of<uint64_t>(metadata, path, "rng_offset", 0);
  c.data_rows = integer_of<int64_t>(metadata, path, "data_rows", 5);
  const double scale = real_of(value_of(metadata, path, "input_scale"), path, "input_scale");
  if (!(scale > 0) || scale > 3.4e38) bad(path, "input_scale", "must be a positive float");
  c.scale = static_cast<float>(scale);
  c.input_shape = value_of(metadata, path, "input_shape");
  c.model_spec = value_of(metadata, path, "model_spec");
  c.optimizer_name = value_of(metadata, path, "optimizer");
  c.split = value_of(metadata, path, "split");
  std::istringstream history(value_of(metadata, path, "history"));
  for (std::string line; std::getline(history, line);) {
    std::vector<std::string> parts;
    std::istringstream fields(line);
    for (std::string part; std::getline(fields, part, ',');) parts.push_back(part);
    if (parts.size() != 5) bad(path, "history", "has a line that is not epoch,loss,accuracy,test loss,test accuracy");
    EpochRecord e;
    e.epoch = static_cast<int64_t>(real_of(parts[0], path, "history"));
    e.train_loss = real_of(parts[1], path, "history");
    e.train_accuracy = real_of(parts[2], path, "history");
    e.test_loss = real_of(parts[3], path, "history");
    e.test_accuracy = real_of(parts[4], path, "history");
    c.history.push_back(e);
  }
  // The tensors last: everything cheap to check has been.
  for (auto& [k, t] : nnp::load_safetensors(path)) {
    if (k.rfind("model.", 0) == 0)
      c.model.emplace_back(k.substr(6), t);
    else if (k.rfind("optimizer.", 0) == 0)
      c.optimizer.emplace_back(k.substr(10), t);
  }
  return c;
}

}  // namespace nnplug
