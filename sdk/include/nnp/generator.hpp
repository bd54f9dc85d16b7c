// nnp/generator.hpp - the devices' default generators, random streams of
// one's own, and randperm.
//
// Every device has a default generator, as in PyTorch: random ops on a
// device draw from its stream. nnp::manual_seed(s) seeds them all (the same
// seed gives the same numbers on every device); default_generator(device)
// reads, seeds and restores one (torch.cuda.manual_seed is
// nnp::cuda::manual_seed). A Generator is a separate Philox stream
// (nnp/philox.h) with its own seed and position, for draws that must not
// disturb the default ones or depend on them: DataLoader shuffling,
// random_split, randperm(n, &generator). Like std::mt19937 it is not safe to
// share between threads without a lock.
#pragma once

#include <nnp/philox.h>

#include <cstdint>
#include <exception>
#include <nnp/tensor.hpp>
#include <utility>
#include <vector>

namespace nnp {

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed
  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t initial_seed() const { return seed_; }
  // The stream's position (counters used), to save and restore it.
  uint64_t offset() const { return offset_; }
  void set_state(uint64_t seed, uint64_t offset) {
    seed_ = seed;
    offset_ = offset;
  }

  // 64 random bits (one Philox counter).
  uint64_t next() {
    nnp_philox_words w = nnp_philox4x32_10(offset_++, seed_);
    return (static_cast<uint64_t>(w.w[0]) << 32) | w.w[1];
  }
  // Uniform in [0, n) for n >= 1 (modulo of 64 bits: the bias is n / 2^64).
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// A device's default generator, with Generator's names: a handle, the
// stream lives in the core.
class DefaultGenerator {
 public:
  explicit DefaultGenerator(const Device& device) : device_(device) {}
  void manual_seed(uint64_t seed) { check(api().device_manual_seed(device_.raw(), seed)); }
  uint64_t initial_seed() const { return state().first; }
  uint64_t offset() const { return state().second; }
  void set_state(uint64_t seed, uint64_t offset) { check(api().device_set_rng_state(device_.raw(), seed, offset)); }
  const Device& device() const { return device_; }

 private:
  std::pair<uint64_t, uint64_t> state() const {
    uint64_t seed = 0, offset = 0;
    check(api().device_get_rng_state(device_.raw(), &seed, &offset));
    return {seed, offset};
  }
  Device device_;
};
inline DefaultGenerator default_generator(const Device& device = Device::cpu()) { return DefaultGenerator(device); }

namespace cuda {
// The cuda devices' default generators, as torch.cuda's: cuda:0's, or every
// one's. Without a CUDA device they do nothing, as PyTorch's do.
inline void manual_seed_all(uint64_t seed) {
  for (const Device& device : devices())
    if (device.backend() == "cuda") default_generator(device).manual_seed(seed);
}
inline void manual_seed(uint64_t seed) {
  for (const Device& device : devices())
    if (device.backend() == "cuda") return default_generator(device).manual_seed(seed);
}
}  // namespace cuda

namespace detail {
// Fisher-Yates over 0..n-1, swapping position i with draw(i + 1) in [0, i].
template <typename Draw>
std::vector<int64_t> shuffled_range(int64_t n, Draw draw) {
  std::vector<int64_t> order;
  try {
    order.resize(static_cast<size_t>(n));
  } catch (const std::exception&) {  // bad_alloc, length_error: an nnp::Error like every other failure
    throw Error(NNP_OUT_OF_MEMORY, "randperm: no memory for a permutation of " + std::to_string(n) + " elements");
  }
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(draw(i))]);
  return order;
}
}  // namespace detail

// A random permutation of 0..n-1 (each order equally likely), drawn from
// `generator`, or from the host's default generator (n draws) when it is
// null. The
// order differs from PyTorch's for the same seed: the generators differ.
inline std::vector<int64_t> randperm_vector(int64_t n, Generator* generator = nullptr) {
  if (n < 0) throw Error(NNP_INVALID_ARGUMENT, "randperm: n must be non-negative, got " + std::to_string(n));
  if (generator) return detail::shuffled_range(n, [&](int64_t i) { return generator->below(i + 1); });
  if (n < 2) return detail::shuffled_range(n, [](int64_t) { return int64_t{0}; });
  // One 62-bit key per position from the host's stream (taken atomically).
  std::vector<int64_t> keys = randint(0, int64_t{1} << 62, {n - 1}).to_vector<int64_t>();
  return detail::shuffled_range(n, [&](int64_t i) { return keys[static_cast<size_t>(i - 1)] % (i + 1); });
}
inline Tensor randperm(int64_t n, Generator* generator = nullptr, Dtype dtype = Dtype::i64,
                       const Device& device = Device::cpu()) {
  return from_vector(randperm_vector(n, generator), device).to(dtype);
}
inline Tensor randperm(int64_t n, Dtype dtype, const Device& device = Device::cpu()) {
  return randperm(n, nullptr, dtype, device);
}

}  // namespace nnp
