// The devices' default generators (one Philox stream per device, as
// PyTorch's): manual_seed seeds all of them, each device's draws move only
// its own stream, and one device's stream can be seeded, saved and restored.
#include "test_support.hpp"

using namespace nnp;
using nnp::test::expect_error;

namespace {

std::vector<double> draws(const Device& device, int64_t n = 6) {
  return rand({n}, Dtype::f64, device).to_vector<double>();
}

}  // namespace

TEST(DefaultGenerators, TheSameSeedGivesTheSameNumbersOnEveryDevice) {
  const Device reference("reference");
  manual_seed(7);
  std::vector<double> on_cpu = draws(Device::cpu());
  std::vector<double> on_reference = draws(reference);  // its stream starts at offset 0 too
  EXPECT_EQ(on_cpu, on_reference);
  EXPECT_EQ(default_generator(reference).initial_seed(), 7u);
  EXPECT_EQ(default_generator(reference).offset(), 6u);
}

TEST(DefaultGenerators, DrawsOnOneDeviceLeaveTheOthersAlone) {
  const Device reference("reference");
  manual_seed(11);
  std::vector<double> first_on_cpu = draws(Device::cpu());
  manual_seed(11);
  for (int i = 0; i < 3; ++i) draws(reference);
  randn({100}, Dtype::f32, reference);
  EXPECT_EQ(draws(Device::cpu()), first_on_cpu);
  // Seeding one device's generator changes only its stream.
  manual_seed(11);
  default_generator(reference).manual_seed(12);
  EXPECT_EQ(draws(Device::cpu()), first_on_cpu);
  manual_seed(12);
  std::vector<double> seeded_12 = draws(Device::cpu());
  default_generator(reference).manual_seed(12);
  EXPECT_EQ(draws(reference), seeded_12);
}

TEST(DefaultGenerators, AStreamIsSavedAndRestored) {
  const Device reference("reference");
  manual_seed(3);
  draws(reference);
  DefaultGenerator generator = default_generator(reference);
  const uint64_t seed = generator.initial_seed(), offset = generator.offset();
  std::vector<double> next = draws(reference);
  draws(reference);
  generator.set_state(seed, offset);
  EXPECT_EQ(draws(reference), next);
  // Dropout draws from the device it runs on.
  generator.set_state(seed, offset);
  Tensor kept = nn::functional::dropout(ones({64}, Dtype::f64, reference),
                                        nn::functional::DropoutFuncOptions().p(0.5).training(true));
  generator.set_state(seed, offset);
  Tensor again = nn::functional::dropout(ones({64}, Dtype::f64, reference),
                                         nn::functional::DropoutFuncOptions().p(0.5).training(true));
  EXPECT_EQ(kept.to_vector<double>(), again.to_vector<double>());
}

TEST(DefaultGenerators, TheOneZeroStateEntriesAreTheHostsStream) {
  manual_seed(5);
  draws(Device::cpu());
  uint64_t seed = 0, offset = 0;
  api().get_rng_state(&seed, &offset);
  EXPECT_EQ(seed, 5u);
  EXPECT_EQ(offset, 6u);
  EXPECT_EQ(default_generator().offset(), 6u);
  api().set_rng_state(5, 0);
  manual_seed(5);
  std::vector<double> fresh = draws(Device::cpu());
  api().set_rng_state(5, 0);
  EXPECT_EQ(draws(Device::cpu()), fresh);
  draws(Device("reference"));
  api().get_rng_state(nullptr, &offset);
  EXPECT_EQ(offset, 6u);  // the reference device's draws are not the host's
}

TEST(DefaultGenerators, CudaSeedingWithoutCudaDoesNothing) {
  bool has_cuda = false;
  for (const Device& d : devices()) has_cuda = has_cuda || d.backend() == "cuda";
  if (has_cuda) GTEST_SKIP() << "a CUDA device is present; gpu_test covers it";
  manual_seed(1);
  std::vector<double> expected = draws(Device::cpu());
  manual_seed(1);
  cuda::manual_seed(99);
  cuda::manual_seed_all(99);
  EXPECT_EQ(draws(Device::cpu()), expected);
}

TEST(DefaultGenerators, TheCEntriesCheckTheDevice) {
  const nnp_device nowhere{Device::cpu().raw().backend, 4096};
  EXPECT_EQ(api().device_manual_seed(nowhere, 1), NNP_NOT_FOUND);
  EXPECT_NE(std::string(api().last_error()).find("device_manual_seed"), std::string::npos) << api().last_error();
  EXPECT_EQ(api().device_set_rng_state(nnp_device{-3, 0}, 1, 2), NNP_INVALID_ARGUMENT);  // no such backend
  uint64_t seed = 0;
  EXPECT_EQ(api().device_get_rng_state(nowhere, &seed, nullptr), NNP_NOT_FOUND);
  EXPECT_EQ(api().device_get_rng_state(Device::cpu().raw(), nullptr, nullptr), NNP_OK);  // both outputs optional
}

// The cpu backend draws sixteen or eight counters at a time (AVX-512,
// AVX2) and converts f32 in registers: its numbers are the scalar
// definition's, reference's, for every dtype, for lengths with tails, and
// where a run of counters crosses a multiple of 2^32 (the low word wraps
// inside a vector and the high word must carry in those lanes only).
TEST(DefaultGenerators, CpuDrawsEqualReferencesAcrossTheCountersHighWord) {
  const Device reference("reference");
  for (uint64_t offset : {uint64_t{0}, (uint64_t{1} << 32) - 7, (uint64_t{5} << 32) - 21}) {
    for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{37}, int64_t{4099}}) {
      for (Dtype dtype : {Dtype::f32, Dtype::f64, Dtype::bf16}) {
        default_generator(Device::cpu()).set_state(99, offset);
        default_generator(reference).set_state(99, offset);
        Tensor on_cpu = rand({n}, dtype, Device::cpu()), on_reference = rand({n}, dtype, reference);
        EXPECT_EQ(on_cpu.to(Dtype::f64).to_vector<double>(), on_reference.to(Device::cpu()).to(Dtype::f64).to_vector<double>())
            << "offset " << offset << ", " << n << " numbers";
        EXPECT_EQ(default_generator(Device::cpu()).offset(), default_generator(reference).offset());
      }
    }
  }
}
