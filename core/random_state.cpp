#include "random_state.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "plugin_registry.hpp"

namespace nnp::core {
namespace {

struct Generators {
  std::mutex mutex;
  uint64_t initial_seed = 0;  // where a device's generator starts when first used
  std::map<std::pair<int32_t, int32_t>, RngState> by_device;

  // Called with the mutex held.
  RngState& of(nnp_device device) {
    auto [it, inserted] = by_device.try_emplace({device.backend, device.index});
    if (inserted) it->second = RngState{initial_seed, 0};
    return it->second;
  }
};

Generators& generators() {
  static Generators* g = new Generators();  // outlives static destructors that may still draw
  return *g;
}

}  // namespace

RngState take_draws(nnp_device device, uint64_t count) {
  Generators& g = generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  RngState& state = g.of(device);
  RngState start = state;
  state.offset += count;
  return start;
}

void seed_all_devices(uint64_t seed) {
  Generators& g = generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.initial_seed = seed;
  g.by_device.clear();
}

RngState device_rng_state(nnp_device device) {
  Generators& g = generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.of(device);
}

void set_device_rng_state(nnp_device device, RngState state) {
  Generators& g = generators();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.of(device) = state;
}

nnp_device host_rng_device() {
  PluginRegistry& registry = PluginRegistry::instance();
  registry.discover();
  const BackendRecord* cpu = registry.find_backend("cpu");
  // Without a cpu backend the host generator still exists, under a key no
  // device has, so that get_rng_state reads what set_rng_state wrote.
  return nnp_device{cpu ? cpu->id() : -1, 0};
}

}  // namespace nnp::core
