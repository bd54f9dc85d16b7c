// The default random generator of each device, as PyTorch keeps one per
// device: random ops on a device draw from its Philox stream (a seed and a
// position). manual_seed seeds them all, and the devices first used later.
#pragma once

#include <nnp/nnp.h>

#include <cstdint>

namespace nnp::core {

struct RngState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// Reserves `count` draws from device's generator: the state they start at.
RngState take_draws(nnp_device device, uint64_t count);
// Every device's generator to (seed, 0), and the start of those not used yet.
void seed_all_devices(uint64_t seed);
RngState device_rng_state(nnp_device device);
void set_device_rng_state(nnp_device device, RngState state);
// The host's generator (the cpu backend's device 0), which the ABI 1.0
// get_rng_state/set_rng_state read and write, as torch.get_rng_state.
nnp_device host_rng_device();

}  // namespace nnp::core
